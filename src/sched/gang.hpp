// A task that several workers run at once, each with its own index (the execution of seed 003's
// task assemblies builds on it). A gang is queued and stolen like any task; the worker that runs
// it hands one member to each of `width` workers and waits until all have returned. Members go
// to the `first` lane of their workers' inboxes, taken before their own queues, and are inserted
// into all of those inboxes at once under their locks taken in worker order: two gangs that share
// workers reach all of them in the same order, so members that wait for one another (a
// synchronous gang) cannot deadlock, however many gangs race.
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
  // last call returns. An exception is rethrown to the gang's task group (the first one; the
  // others are counted as suppressed).
  virtual void run_member(int index) = 0;

  // Member i runs on workers[i]. Left empty, the worker that dispatches the gang chooses: the
  // `width` workers of the smallest part of the machine around it (around `anchor`, if set)
  // that holds that many (see gang_workers). Distinct workers of the runtime, or the gang fails
  // with std::invalid_argument.
  std::vector<int> workers;
  int anchor = -1;

 private:
  // Dispatches the members and waits for them.
  void execute() final;

  int width_;
  group_state members_;
  std::unique_ptr<gang_member[]> entries_;
};

// The `width` workers, `self` among them, under the smallest topology node around `self`'s
// processing unit that has at least `width` of the runtime's workers: an aligned window of that
// node's workers (seed 003 §3.2: assembly workers share a cache level with the one that
// schedules it).
std::vector<int> gang_workers(const runtime_impl& rt, int self, int width);

}  // namespace locus::detail
