// The seat: a thread calling runtime::exec from outside runs its root itself, in the place of a
// worker whose own thread sleeps (runtime_impl.hpp), and the signal that tells a caller its root
// has ended.
#include <sched.h>

#include <mutex>

#include "sched/cpu_relax.hpp"
#include "sched/futex.hpp"
#include "sched/runtime_impl.hpp"
#include "ult/context.hpp"
#include "ult/stack.hpp"

namespace locus::detail {
namespace {

// Pauses a caller waits for the seat's own thread to give its seat up (tens of microseconds).
constexpr int give_up_wait_rounds = 2000;

// The calling thread's own stack, described once per thread (for the main thread that reads
// /proc/self/maps); the thread also gets its stack for overflow reports then.
const ult::stack& calling_thread_stack() {
  thread_local const ult::stack described = [] {
    ult::prepare_thread_for_overflow_reports();
    return ult::describe_native_stack();
  }();
  return described;
}

// While it sits in the seat of a pinned runtime with several places, the caller runs on that
// worker's place, so that work placed there runs there; the thread's own binding is given back
// when it leaves. It is not bound to the worker's PU: a user's thread bound to one PU would wait
// for it whenever another process takes it (sched/cpu_contention.hpp), and within a place the OS
// keeps an unloaded thread where it is.
class seat_binding {
 public:
  seat_binding(const topo::topology& topology, const worker& w, bool pinned) {
    if (!pinned || topology.num_numa() < 2 || ::sched_getaffinity(0, sizeof saved_, &saved_) != 0)
      return;
    bound_ = topology.pin_current_thread_to_place(w.place);
  }
  seat_binding(const seat_binding&) = delete;
  seat_binding& operator=(const seat_binding&) = delete;
  ~seat_binding() {
    if (bound_) ::sched_setaffinity(0, sizeof saved_, &saved_);
  }

 private:
  cpu_set_t saved_{};
  bool bound_ = false;
};

}  // namespace

// A caller on the PU of another pinned worker shares that PU with the worker while the seat's PU
// idles, until the OS balances the two (at a scheduler tick, milliseconds later): a region of
// short steps then runs on one PU. The caller is bound to the seat's PU for the moment of the
// move, and its own binding is given back at once: the OS then leaves it where it is, beside
// a worker that keeps its own PU busy, and the caller stays free to go where the OS sends it.
// Not while a PU is contended (the workers then run anywhere in their place).
void runtime_impl::move_caller_to_seat_pu(worker& seat) noexcept {
  if (!pinned_) return;
  const int leaf = topology.current_leaf();
  if (leaf < 0 || leaf == seat.leaf) return;
  bool another_workers_pu = false;
  for (const auto& w : workers_) another_workers_pu |= w->leaf == leaf;
  if (!another_workers_pu || any_worker_contended(clock_ns())) return;
  cpu_set_t own;
  if (::sched_getaffinity(0, sizeof own, &own) != 0) return;
  const int seat_cpu = topology.os_index_of_leaf(seat.leaf);
  if (seat_cpu < 0 || !CPU_ISSET(seat_cpu, &own)) return;  // the caller's binding keeps it away
  if (topology.pin_current_thread(seat.leaf)) {
    ::sched_setaffinity(0, sizeof own, &own);
    seat.counters.caller_moves.add();
  }
}

void runtime_impl::run_root(std::unique_ptr<task_base> root, root_signal& signal) {
  std::unique_lock<std::mutex> alone;
  if (roots_one_at_a_time_) alone = std::unique_lock(one_root_);
  if (run_seated(root, signal)) return;
  submit(std::move(root));
  await_root(signal);
}

bool runtime_impl::run_seated(std::unique_ptr<task_base>& root, root_signal& signal) {
  if (!seat_open_ || current_worker() != nullptr) return false;
  check_place(root->options.place);
  if (!take_seat()) return false;
  worker& w = at(seat_index_);
  // The own thread announced itself asleep before it left the seat; from now on the worker is
  // this thread, awake (what sleep() does on its way out).
  w.asleep.store(false, std::memory_order_relaxed);
  waking_.store(false, std::memory_order_relaxed);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  admit_root(*root);
  w.native = calling_thread_stack();
  w.running = &w.native;
  {
    const seat_binding binding(topology, w, pinned_);
    move_caller_to_seat_pu(w);
    set_current_worker(&w);
    w.host(root.release(), signal);
    set_current_worker(nullptr);
  }
  leave_seat(w);
  return true;
}

bool runtime_impl::take_seat() noexcept {
  std::uint32_t s = seat_.load(std::memory_order_relaxed);
  const worker& w = at(seat_index_);
  if (s == seat_own && w.current_phase.load(std::memory_order_relaxed) == worker::phase::idle &&
      seat_.compare_exchange_strong(s, seat_wanted, std::memory_order_seq_cst)) {
    // The own thread gives the seat up at its next round of looking for work, a microsecond or
    // so from now unless the OS has descheduled it; past that, the caller takes its request back.
    for (int i = 0; i < give_up_wait_rounds; ++i) {
      if (seat_.load(std::memory_order_acquire) != seat_wanted) break;
      cpu_relax();
    }
    s = seat_wanted;
    if (seat_.compare_exchange_strong(s, seat_own, std::memory_order_seq_cst)) return false;
  }
  return s == seat_free && seat_.compare_exchange_strong(s, seat_caller, std::memory_order_seq_cst);
}

void runtime_impl::leave_seat(worker& w) noexcept {
  // The own thread still sleeps: announce it again, then look for work left for it (what sleep()
  // does before it waits), the policy's part while the seat is still this caller's, the rest
  // once it is free. A deliverer sees the announcement, and then either a free seat (it wakes
  // the own thread) or this caller (it marks the seat poked); or its work is seen here.
  w.asleep.store(true, std::memory_order_seq_cst);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  const bool policy_work = sched->has_work(w.ctx);
  const std::uint32_t left = seat_.exchange(seat_free, std::memory_order_seq_cst);
  if ((left & seat_awaited) != 0) {
    // Woken while the caller sat here, the own thread waits on the seat: it looks for itself.
    futex_wake_all(&seat_);
  } else if (policy_work || (left & seat_poked) != 0 || shared_work_in_sight(w)) {
    wake(seat_index_);
  }
}

bool runtime_impl::reclaim_seat(worker& w) noexcept {
  bool waited = false;
  for (;;) {
    std::uint32_t s = seat_.load(std::memory_order_seq_cst);
    if (s == seat_free) {
      if (seat_.compare_exchange_strong(s, seat_own, std::memory_order_seq_cst)) break;
      continue;
    }
    // A caller sits in the seat; it wakes this thread on this word when it leaves.
    if ((s & seat_awaited) == 0 &&
        !seat_.compare_exchange_strong(s, s | seat_awaited, std::memory_order_seq_cst)) {
      continue;
    }
    waited = true;
    futex_wait(&seat_, s | seat_awaited, nullptr);
  }
  w.native = w.own_native;
  w.running = &w.native;
  return waited;
}

void signal_root(root_signal& signal) noexcept {
  worker* w = current_worker();
  const std::uint32_t before = signal.state.exchange(root_signal::done, std::memory_order_seq_cst);
  // The caller may return (and its frame, with the word, go away) from here on: the wake below
  // names the word's address only, and a futex wake of memory still mapped is harmless.
  if (before == root_signal::awaited) {
    futex_wake_all(&signal.state);
  } else if (w != nullptr) {
    w->rt.wake_seated_caller();
  }
}

void await_root(root_signal& signal) noexcept {
  std::uint32_t expected = root_signal::running;
  if (!signal.state.compare_exchange_strong(expected, root_signal::awaited,
                                            std::memory_order_seq_cst)) {
    return;  // already done
  }
  while (signal.state.load(std::memory_order_acquire) != root_signal::done) {
    futex_wait(&signal.state, root_signal::awaited, nullptr);
  }
}

}  // namespace locus::detail
