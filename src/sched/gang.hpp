// A task that several workers run at once, each with its own index (the execution of seed 003's
// task assemblies builds on it). A gang is queued and stolen like any task; the worker that runs
// it hands one member to each of `width` workers and goes on: the members are children of the
// gang's own task group, which waits for them, and the last of them to end frees the gang (no
// worker waits on a stack for a gang's members, so gangs that spawn gangs hold no stacks).
// Members go to the `first` lane of their workers' inboxes, taken before their own queues, and
// are inserted into all of those inboxes at once under their locks taken in worker order: two
// gangs that share workers reach all of them in the same order, so members that wait for one
// another (a synchronous gang) cannot deadlock, however many gangs race.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "locus/detail/spawn.hpp"

namespace locus::detail {

class gang_task;
class runtime_impl;

struct gang_member final : work_item {
  gang_member() noexcept : work_item(item_kind::gang_member) {}
  gang_task* gang = nullptr;
  int index = 0;
  int origin = -1;  // the worker that dispatched it (trace flow arrows)
};

class gang_task : public task_base {
 public:
  // Throws std::invalid_argument unless width >= 1.
  explicit gang_task(int width);

  int width() const noexcept { return width_; }
  // Called once on each member's worker with index 0 .. width - 1; the gang is done when the
  // last call returns. An exception goes to the gang's task group, as a child's would.
  virtual void run_member(int index) = 0;

  // A member has returned (the core calls it, for a member run from a queue, and the core's
  // hold on a dispatched gang ends with release_dispatch): whether that was the last reference,
  // and the caller now deletes the gang.
  bool member_ended() noexcept { return left_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  bool release_dispatch() noexcept { return member_ended(); }

  // Member i runs on workers[i]. Left empty, the worker that dispatches the gang chooses: the
  // `width` workers of the smallest part of the machine around it (around `anchor`, if set)
  // that holds that many (see gang_workers). Distinct workers of the runtime, or the gang fails
  // with std::invalid_argument.
  std::vector<int> workers;
  int anchor = -1;
  // Members never wait for one another: the dispatching worker, when it is one of the gang's,
  // runs its own member at once, on its own stack, instead of queueing it behind what its
  // assembly queue holds (order matters only to members that wait for one another).
  bool independent_members = false;

 private:
  // Dispatches the members (and runs this worker's own, for independent members); sets
  // outlives_execute once members hold the gang.
  void execute() final;

  int width_;
  std::atomic<int> left_{0};  // members not yet ended, plus the core's hold while dispatching
  std::unique_ptr<gang_member[]> entries_;
};

// The `width` workers, `self` among them, under the smallest topology node around `self`'s
// processing unit that has at least `width` of the runtime's workers: an aligned window of that
// node's workers (seed 003 §3.2: assembly workers share a cache level with the one that
// schedules it).
std::vector<int> gang_workers(const runtime_impl& rt, int self, int width);

}  // namespace locus::detail
