// Shared state of one runtime: configuration, topology, policy, workers, the queue of tasks
// submitted from outside, and the sleep/wake machinery.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "locus/runtime.hpp"
#include "mem/binder.hpp"
#include "prof/pmu.hpp"
#include "prof/trace.hpp"
#include "prof/workspan.hpp"
#include "sched/policy.hpp"
#include "sched/size_learning.hpp"
#include "sched/worker.hpp"
#include "topology/topology.hpp"
#include "ult/stack.hpp"

namespace locus::detail {

class runtime_impl {
 public:
  explicit runtime_impl(const options& opts);
  runtime_impl(const runtime_impl&) = delete;
  runtime_impl& operator=(const runtime_impl&) = delete;
  ~runtime_impl();

  const config::settings settings;
  const topo::topology topology;
  // Binds memory to this runtime's places (locus/memory.hpp) and records the bindings.
  mem::place_binder binder{topology};
  const std::unique_ptr<policy> sched;
  const hook_set hooks;
  // Learned (or dropped) size hints (settings.size_hints), for a policy that begins groups;
  // nullptr with the program's own hints.
  const std::unique_ptr<size_learner> learner;
  // The worker that starts roots submitted from outside (policy::root_worker), else any.
  const std::optional<int> root_worker;
  // The policy replaced some worker's queue (policy::make_queue): every spawn then goes through
  // the queue interface, since a task may move between workers.
  bool any_queue_replaced() const noexcept { return any_queue_replaced_; }

  int size() const noexcept { return static_cast<int>(workers_.size()); }
  worker& at(int i) noexcept { return *workers_[static_cast<std::size_t>(i)]; }
  // Topology distance level between two workers (0 = same worker).
  int distance(int a, int b) const { return distance_[static_cast<std::size_t>(a * size() + b)]; }
  int distance_levels() const noexcept { return topology.max_distance() + 1; }
  int num_places() const noexcept { return topology.num_numa(); }
  // Throws std::out_of_range unless a spawn's place hint is none, any_place or one of the places.
  void check_place(int place) const {
    if (place == inherit_place || (place >= -1 && place < num_places())) [[likely]]
      return;
    reject_place(place);
  }
  // The other workers at exactly `level` from worker `w`: [first, last) of by_distance(w).
  const int* workers_at(int w, int level, int* count) const noexcept {
    const auto& o = level_start_[static_cast<std::size_t>(w)];
    *count = o[static_cast<std::size_t>(level) + 1] - o[static_cast<std::size_t>(level)];
    return by_distance_[static_cast<std::size_t>(w)].data() + o[static_cast<std::size_t>(level)];
  }

  // runtime::exec from a thread that is not a worker of this runtime: runs `root` and returns
  // once it has ended, seated when it can (run_seated), else on the workers.
  void run_root(std::unique_ptr<task_base> root, root_signal& signal);
  // Tasks submitted from threads that are not workers of this runtime.
  void submit(std::unique_ptr<task_base> task);
  task_base* take_submitted() noexcept;
  bool has_submitted() const noexcept {
    return submitted_count_.load(std::memory_order_relaxed) != 0;
  }
  void root_finished() noexcept { roots_active_.fetch_sub(1, std::memory_order_relaxed); }

  // The seat: worker seat_worker() is run by its own thread or, while that thread sleeps, by a
  // thread that calls exec from outside the runtime, as a thread calling oneTBB or OpenMP takes
  // a slot of their arena or team. The root then starts without waking anybody, and its caller
  // returns the moment the root ends instead of waiting to be woken.
  int seat_worker() const noexcept { return seat_index_; }
  // Runs `root` to its end on the calling thread, in the seat, when the seat's own thread sleeps
  // and the caller is not a worker of any runtime; otherwise returns false, `root` untouched.
  bool run_seated(std::unique_ptr<task_base>& root, root_signal& signal);
  // Moves a seated caller that runs on the PU of another pinned worker to the seat's PU (see
  // seat.cpp); its own binding stays as it was.
  void move_caller_to_seat_pu(worker& seat) noexcept;
  // Wakes the caller sitting in the seat, if one sleeps there (its root has ended).
  void wake_seated_caller() noexcept {
    if (caller_seated(seat_.load(std::memory_order_seq_cst))) wake(seat_index_);
  }

  // New stealable work appeared: wake a sleeper if there is one. Cheap when nobody sleeps.
  // At most one wake-up is in flight: a busy worker pushing continuously while another sleeps
  // must not make a system call per push.
  void notify_work() noexcept {
    if (sleepers_.load(std::memory_order_relaxed) > 0 && !waking_.load(std::memory_order_relaxed) &&
        !waking_.exchange(true, std::memory_order_relaxed)) {
      wake_one();
    }
  }
  // Puts `item` in worker `target`'s inbox and wakes that worker if it sleeps.
  void deliver(int target, work_item* item, lane where);
  // Wakes worker `target` if it has announced that it sleeps (no other worker).
  void wake(int target) noexcept;
  // Puts the calling worker to sleep until work may have appeared for it. Returns whether
  // somebody woke it (or it did not sleep); false after a timeout, or when the seat's own thread
  // waited for a caller to leave the seat.
  bool sleep(worker& w) noexcept { return sleep(w, false); }
  // The seat's own thread, looking for work, is asked for its seat: it sleeps, leaving it free.
  bool seat_wanted_of(const worker& w) const noexcept {
    return w.index == seat_index_ && seat_.load(std::memory_order_relaxed) == seat_wanted;
  }
  bool give_up_seat(worker& w) noexcept { return sleep(w, true); }
  // Whether any worker's PU was contended lately (cpu_contention_watch).
  bool any_worker_contended(std::uint64_t now_ns) const noexcept;
  bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }
  bool any_work_visible() const noexcept;

  void count_suppressed_exception() noexcept {
    suppressed_.fetch_add(1, std::memory_order_relaxed);
  }
  void count_canceled_task() noexcept { canceled_.fetch_add(1, std::memory_order_relaxed); }

  locus::stats stats() const;
  void reset_stats() noexcept;
  // Time accounting before this instant is not counted (construction, then reset_stats).
  std::uint64_t stats_epoch_ns() const noexcept {
    return stats_epoch_ns_.load(std::memory_order_relaxed);
  }
  std::string describe() const;

  // Per-worker PMU counters (settings.pmu); each worker opens its own before running tasks.
  prof::pmu_session pmu;

  // The work/span meter (settings.workspan), or nullptr.
  prof::workspan_meter* workspan() const noexcept { return workspan_.get(); }

 private:
  [[noreturn]] void reject_place(int place) const;
  // Counts `root` as running and gives it its frame (the part of submit that may throw first).
  void admit_root(task_base& root);
  // The seat's own thread, after a sleep: back in its seat once no caller holds it; returns
  // whether it had to wait for a caller to leave.
  bool reclaim_seat(worker& w) noexcept;
  bool sleep(worker& w, bool giving_up_seat) noexcept;
  // Work `w` may run, or a reason to stop looking: what a worker checks before it sleeps. Reads
  // only what others fill concurrently.
  bool work_in_sight(worker& w) const noexcept;
  // Wakes whoever sleeps as worker `t` (who announced it): for the seat's worker, a caller
  // sitting in the seat, else the worker's own thread.
  void wake_sleeper(worker& t) noexcept;
  // Any work for `w` that others put where `w` looks, or a reason to stop: read without owning
  // `w` (the policy's has_work may read the owner's state).
  bool shared_work_in_sight(const worker& w) const noexcept;
  static void bump(std::atomic<std::uint32_t>& word) noexcept;
  // A seated caller's way out: the seat is free again, and its own thread woken if work is left.
  void leave_seat(worker& w) noexcept;
  void wake_one() noexcept;
  bool wake_a_sleeper() noexcept;
  void wake_all() noexcept;
  void build_distances(int n);

  // Both exist before the workers, which keep pointers into them; the trace is written once
  // the workers have stopped.
  std::unique_ptr<prof::trace_file> trace_;
  std::unique_ptr<prof::workspan_meter> workspan_;
  ult::stack_arena arena_;
  bool any_queue_replaced_ = false;
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<int> distance_;
  // For each worker, the others by increasing distance, and where each distance level starts.
  std::vector<std::vector<int>> by_distance_;
  std::vector<std::vector<int>> level_start_;

  std::mutex submit_mutex_;
  // Held by each exec of a policy that runs one root at a time (policy::concurrent_roots).
  std::mutex one_root_;
  bool roots_one_at_a_time_ = false;
  std::deque<std::unique_ptr<task_base>> submitted_;
  std::atomic<std::size_t> submitted_count_{0};

  // Who runs the seat's worker: its own thread (seat_own; seat_wanted while a caller asks it to
  // give the seat up), nobody while that thread sleeps (seat_free), or a caller of exec
  // (seat_caller, with two flags: seat_awaited once the own thread waits on this word for the
  // caller to leave, seat_poked once somebody woke the caller for the worker's sake, so that the
  // caller, leaving, hands that wake-up on to the own thread).
  static constexpr std::uint32_t seat_own = 0, seat_free = 1, seat_caller = 2, seat_wanted = 3;
  static constexpr std::uint32_t seat_awaited = 4, seat_poked = 8, seat_state_mask = 3;
  static bool caller_seated(std::uint32_t s) noexcept {
    return (s & seat_state_mask) == seat_caller;
  }
  // A caller's way in: the seat when it is free, or when its own thread, only looking for work,
  // gives it up on request (give_up_seat).
  bool take_seat() noexcept;
  alignas(64) std::atomic<std::uint32_t> seat_{seat_own};
  std::atomic<std::uint32_t> guest_word_{0};  // what a caller in the seat sleeps on
  int seat_index_ = 0;
  // PMU counters are opened by each worker's own thread and count only it: no caller may sit in.
  bool seat_open_ = false;

  alignas(64) std::atomic<int> sleepers_{0};
  std::atomic<unsigned> next_to_wake_{0};
  std::atomic<bool> waking_{false};
  std::atomic<int> roots_active_{0};
  std::atomic<bool> stopping_{false};
  bool pinned_ = false;  // each worker bound to its PU (or, while its PU is contended, its place)
  std::atomic<std::uint64_t> suppressed_{0};
  std::atomic<std::uint64_t> canceled_{0};
  // Construction is the first epoch: until its first phase change a worker's phase_since_ns is
  // 0, and the time before the runtime existed is not its time.
  std::atomic<std::uint64_t> stats_epoch_ns_{clock_ns()};
  // Counted down by each worker once its PMU counters are open (a member, not a local: a
  // worker may still be inside count_down when the constructor's wait returns).
  std::unique_ptr<std::latch> pmu_opened_;
};

// The runtime a worker thread belongs to (nullptr elsewhere).
runtime_impl* runtime_of(worker* w) noexcept;

}  // namespace locus::detail
