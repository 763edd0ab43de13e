// What a scheduler policy sees of the core: one worker's view of the runtime. Every hook gets the
// context of the worker it runs on. Through it a policy steals (one item or a chunk, with a
// three-valued result), delivers work to a worker and wakes exactly that worker, draws victims
// from a distribution over workers or topology levels, reads and writes the per-task records,
// and asks about the topology. The core counts every steal, failed steal, push and migration by
// topology level here, for every policy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "locus/detail/spawn.hpp"
#include "queue/work_queue.hpp"
#include "sched/task_frame.hpp"

namespace locus::topo {
class topology;
}

namespace locus::detail {

class worker;

using queue::steal_status;

struct steal_result {
  work_item* item = nullptr;  // the oldest item taken, to run now
  steal_status status = steal_status::empty;
  std::size_t taken = 0;  // items taken: `item` and those queued on the thief's own queue
  explicit operator bool() const noexcept { return item != nullptr; }
};

// Where a delivered item waits on its target: `first` before the target's own queue (at its next
// scheduling point, and a child finishing there returns to the loop for it), `normal` after it.
enum class lane : std::uint8_t { normal, first };

// Items a worker's own queue holds before a spawn that would queue a child (a loop of spawns
// queued parent-first, by the core's stolen-loop rule or a policy's decision) goes child-first
// again: a long loop must not turn into as many tasks on the heap at once.
inline constexpr std::size_t queued_children_bound = 256;

class context {
 public:
  context(worker& w, int self) noexcept : w_(w), self_(self) {}
  context(const context&) = delete;
  context& operator=(const context&) = delete;

  // ---- who and where
  int self() const noexcept { return self_; }
  int workers() const noexcept;
  const topo::topology& topology() const noexcept;
  // Level of the lowest common ancestor of two workers' processing units: 0 for the same one,
  // levels() - 1 for workers that share only the machine.
  int distance(int a, int b) const noexcept;
  int levels() const noexcept;
  // The other workers at exactly `level` from this one.
  int workers_at(int level) const noexcept;
  std::uint64_t now_ns() const noexcept;
  // Whether `worker` is awake in its scheduler loop looking for work and began a round of that
  // within the last `within_ns`: work handed to it now starts within about a round. A worker
  // that is busy, asleep, or descheduled by the OS in mid-search is not searching.
  bool searching(int worker, std::uint64_t within_ns) const noexcept;
  // Whether another process took part of some worker's PU lately (sched/cpu_contention.hpp): a
  // worker's work may then wait for the OS, not for the worker.
  bool any_worker_contended() const noexcept;

  // ---- randomness and victims (-1 when there is no such worker; victims.hpp draws from any
  // distribution over the workers)
  std::uint32_t random() noexcept;
  int random_below(int n) noexcept;  // uniform in [0, n), n >= 1
  int random_victim() noexcept;      // uniform over the other workers
  int random_victim_at(int level) noexcept;

  // ---- task records
  task_frame& current() noexcept;  // the task running on this worker
  // The record `item` starts or resumes with: a queued task's own, a continuation's or a parked
  // waiter's on its stack.
  static task_frame& record_of(work_item& item) noexcept;
  // Per-worker storage for the policy.
  void*& worker_data() noexcept;

  // ---- this worker's queue
  work_item* pop_own();
  void push_own(work_item* item);
  std::size_t own_queue_size() const noexcept;

  // ---- stealing (counted by level)
  // Takes up to `max` of the oldest items of `victim`'s queue: the oldest is returned to run,
  // the others go to this worker's queue in their order. With chunk::of_queued_tasks, more than
  // one only when the oldest is a queued task (at most queued_children_bound): the oldest
  // continuation of a chain of child-first spawns holds, in expectation, half of the victim's
  // work by itself, and the ones behind it belong to the stack the victim runs, which would then
  // have to steal them back; queued tasks are siblings, each a small part. Children of one group
  // then go to this worker's queue newest first, so that it runs them oldest first (see
  // steal_queued_tasks).
  enum class chunk : std::uint8_t { of_any_items, of_queued_tasks };
  steal_result steal(int victim, std::size_t max = 1, chunk rule = chunk::of_any_items);
  // A steal from the policy's own queues: `take()` returns the item (null: none) and the
  // context counts it like steal(). `take` may take from the victim's queue with take_from.
  template <class Take>
  steal_result steal_with(int victim, Take&& take) {
    work_item* item = take();
    const steal_result r{item, item != nullptr ? steal_status::taken : steal_status::empty,
                         item != nullptr ? 1u : 0u};
    count_steal(victim, r);
    return r;
  }
  // Uncounted: one item from `victim`'s queue (for a steal_with that judges it first).
  work_item* take_from(int victim, steal_status* why = nullptr);
  // Items in `victim`'s queue, read without synchronisation (a hint for how much to steal).
  std::size_t queue_size(int victim) const noexcept;
  bool queue_looks_empty(int victim) const noexcept { return queue_size(victim) == 0; }
  // Items a thief could take from `victim`'s queue now (a split queue's public part), read
  // without synchronisation: what steal-half halves.
  std::size_t stealable(int victim) const noexcept;
  // Whether the oldest item of the victim's queue is a continuation that a child-first spawn
  // published, read without taking it: a hint (the item may be gone by the time it is acted on;
  // false for a replaced queue).
  bool oldest_is_continuation(int victim) const noexcept;

  // ---- delivering (counted as pushes)
  // Puts `item` in `target`'s inbox and wakes `target` if it sleeps (no other worker).
  void deliver(int target, work_item* item, lane where = lane::normal);
  // The policy made work visible for `target` in its own queues (with a seq_cst write that
  // has_work reads): counts a push and wakes `target` if it sleeps.
  void posted(int target);
  // Wakes `target` if it sleeps, counting nothing.
  void wake(int target);

 private:
  void count_steal(int victim, const steal_result& r) noexcept;
  steal_result steal_any_items(queue::work_queue<work_item*>& q, std::size_t max);
  steal_result steal_queued_tasks(queue::work_queue<work_item*>& q, std::size_t max);
  worker& w_;
  const int self_;  // some policies read self() on every spawn: no call
};

}  // namespace locus::detail
