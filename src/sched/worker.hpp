// One worker: an OS thread with a queue of ready work, an inbox, a stack pool and the scheduler
// context that user-level threads return to.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "locus/detail/spawn.hpp"
#include "locus/stats.hpp"
#include "queue/work_queue.hpp"
#include "sched/clock.hpp"
#include "sched/context.hpp"
#include "sched/cpu_contention.hpp"
#include "sched/inbox.hpp"
#include "sched/policy.hpp"
#include "sched/task_frame.hpp"
#include "ult/context.hpp"
#include "ult/stack.hpp"

namespace locus::detail {

class runtime_impl;
}  // namespace locus::detail

namespace locus::prof {
class trace_buffer;
class workspan_meter;
}  // namespace locus::prof

namespace locus::detail {

// Counters written by their worker only and read by stats(): relaxed atomics so that reading
// them concurrently is defined, with plain load+store increments (no locked instruction).
struct counter {
  std::atomic<std::uint64_t> value{0};
  void add(std::uint64_t n = 1) noexcept {
    value.store(value.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t get() const noexcept { return value.load(std::memory_order_relaxed); }
  void reset() noexcept { value.store(0, std::memory_order_relaxed); }
};

struct worker_counters {
  explicit worker_counters(int levels)
      : steals(levels), failed_steals(levels), stolen_items_by_level(levels) {}
  counter spawns, serial_spawns, suspensions, local_resumes, chained_tasks, sleeps, wakeups;
  counter pushes, migrations;
  counter cpu_unbinds, caller_moves;
  counter stolen_items, lost_races;
  counter busy_ns, idle_ns, overhead_ns;
  std::vector<counter> steals;  // successful steal operations, by topology distance
  std::vector<counter> failed_steals;
  std::vector<counter> stolen_items_by_level;
};

// Message handed across a context switch: tells the resumed side which worker it now runs on
// and what the suspended side needs done.
struct switch_msg {
  enum class what : std::uint8_t {
    from_scheduler,  // the scheduler resumed or started this context; save its context
    finished,        // the switching task finished: release `stack`
    parked,          // the switching task waits on `group` (to the scheduler only)
    migrating,       // the switching task moves to worker `target` (resumed through `group`)
  };
  what kind;
  worker* w;
  ult::stack* stack = nullptr;
  group_state* group = nullptr;
  work_item* item = nullptr;
  int target = -1;
};

class alignas(64) worker {
 public:
  worker(runtime_impl& rt, int index, int leaf, int distance_levels, ult::stack_arena& arena,
         std::unique_ptr<ready_queue> replaced_queue);
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  runtime_impl& rt;
  const int index;
  const int leaf;   // topology leaf this worker is bound to
  const int place;  // the place (NUMA node, else package) of that leaf
  // A child-first spawn needs nothing from the policy and every worker's queue is the default
  // deque (a copy of the runtime's facts, so the spawn path reads one byte of its own worker).
  const bool plain_spawn;
  // A trace or a work/span measurement watches task boundaries (see sched/probe.hpp); the
  // pointers are set before the worker starts and are null when that probe is off.
  const bool probed;
  prof::trace_buffer* trace = nullptr;
  prof::workspan_meter* workspan = nullptr;

  // Ready work: the Chase-Lev deque, or the queue the policy chose (replaced_queue).
  queue::chase_lev_queue<work_item*> default_queue{256};
  const std::unique_ptr<ready_queue> replaced_queue;
  ready_queue& queue() noexcept {
    return replaced_queue ? *replaced_queue : static_cast<ready_queue&>(default_queue);
  }
  // The owner's end of the queue, without a virtual call for the default deque.
  void push_local(work_item* item) {
    if (!replaced_queue) [[likely]] {
      default_queue.deque.push(item);
    } else {
      replaced_queue->push(item);
    }
  }
  work_item* pop_local() {
    if (!replaced_queue) [[likely]] {
      const auto item = default_queue.deque.pop();
      return item ? *item : nullptr;
    }
    return replaced_queue->pop();
  }

  inbox mail;

  ult::stack_pool stacks;
  ult::stack native;                  // this OS thread's own stack: the scheduler runs on it
  ult::stack own_native;              // the worker's own thread's, while a caller sits in
  ult::fcontext sched_ctx = nullptr;  // valid while a user-level thread runs on this worker
  ult::stack* running = nullptr;      // stack of the context running on this worker

  worker_counters counters;
  // Which of busy / idle / overhead this worker is in, and since when: the time accounting of
  // seed 000 §6.1, updated only at transitions of the scheduler loop (never on the spawn path).
  enum class phase : std::uint8_t { overhead, idle, busy };
  std::atomic<phase> current_phase{phase::overhead};
  std::atomic<std::uint64_t> phase_since_ns{0};
  // Closes the current phase at `now` (adding its time to its counter) and opens `next`.
  void enter_phase(phase next, std::uint64_t now) noexcept;
  counter& phase_counter(phase p) noexcept;
  std::uint64_t rng_state;
  void* policy_data = nullptr;

  // Sleeping (runtime_impl::sleep): the futex word a waker bumps, and whether this worker has
  // announced that it is going to sleep.
  alignas(64) std::atomic<std::uint32_t> wake_word{0};
  std::atomic<bool> asleep{false};
  // Pinned runtimes only: whether its PU is contended, and its binding.
  cpu_contention_watch cpu_watch;
  // When this worker last began a round of looking for work (clock_ns), for context::searching.
  std::atomic<std::uint64_t> search_beat_ns{0};

  context ctx{*this, index};

  std::uint32_t next_random() noexcept {
    // xorshift64*: cheap, per worker, good enough for victim selection.
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return static_cast<std::uint32_t>((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
  }

  void main_loop();
  std::thread thread;

  // For a context whose queued task just finished: one round of the scheduler loop's search,
  // so that a task found runs on that context at once, without two switches through the
  // scheduler and a stack given back and taken again. Null when nothing was found or the
  // scheduler loop has something else to do (loop_has_business).
  work_item* next_after_task();

  // For a task at the join of `group`, whose children still run elsewhere: the scheduler loop's
  // search, for as long as that loop would spin, while the task stays on its context. A join
  // that completes meanwhile goes on without parking: no switch to the scheduler and back, and
  // no hand-over through the worker of the last child (the waiting thread of oneTBB's wait stays
  // in its loop too). Returns what the search found, which the task then parks for; null when
  // the join completed or the spin ended (the task parks), and at once while the loop has other
  // business (loop_has_business) or the binding is widened (a spinning waiter would hold the CPU
  // its children's worker needs).
  work_item* watch_join(const group_state& group);

  // A caller of exec sitting in this worker's seat (runtime_impl::run_seated) runs `root` and
  // then the worker's loop until the root has ended.
  void host(task_base* root, const root_signal& signal);
  bool hosting() const noexcept { return guest_ != nullptr; }
  bool guest_done() const noexcept { return guest_ != nullptr && guest_->ended(); }

 private:
  const root_signal* guest_ = nullptr;  // the seated caller's root
  // Sets found_at to the clock at the start of the search round that found the item.
  work_item* find_work(std::uint64_t& found_at);
  work_item* look_once();
  // Whether the scheduler loop has something to do besides a search: a trace or a meter
  // watches task boundaries, the runtime stops, a seated caller's root ended, a caller wants
  // the seat.
  bool loop_has_business() const noexcept;
  void follow_cpu_contention(std::uint64_t now) noexcept;
  ult::stack* acquire_stack_or_die() noexcept;
  // Runs `item` and whatever running it hands back.
  void dispatch(work_item* item);
  work_item* after_return(const ult::transfer& t);
};

// The worker the calling OS thread belongs to (nullptr on other threads).
void set_current_worker(worker* w) noexcept;

}  // namespace locus::detail
