// The interface between the generic worker loop and a scheduler policy (DESIGN.md §2).
//
// The core owns threads, stacks, one Chase-Lev deque and one single-entry mailbox per worker, and
// the join protocol. A policy decides where work goes and where idle workers look for it. Hooks
// that sit on hot paths (spawn, task-group begin/end, a waiter becoming ready) are only called
// when the policy asks for them in hooks(), so ws pays one predictable branch and nothing else.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "locus/detail/spawn.hpp"

namespace locus::detail {

class worker;
class runtime_impl;

struct policy_hooks {
  bool spawn = false;   // on_spawn for every spawn
  bool group = false;   // group_begin / group_wait / group_end for every task group
  bool ready = false;   // on_ready when a suspended waiter's last child finishes
  bool urgent = false;  // has_urgent / take_urgent at task completion and before the deque
};

// What to do with a new child (on_spawn).
struct spawn_decision {
  enum class action {
    child_first,   // run the child now; the parent's continuation becomes stealable (default)
    parent_first,  // queue the child in this worker's deque; the parent goes on
    send,          // hand the not-yet-started child to worker `target` (its mailbox)
  };
  action what = action::child_first;
  int target = -1;
};

class policy {
 public:
  virtual ~policy() = default;
  virtual std::string_view name() const noexcept = 0;
  virtual policy_hooks hooks() const noexcept { return {}; }

  // Called once the workers exist, before any task runs (per-worker and per-place state).
  virtual void attach(runtime_impl& rt) { (void)rt; }

  virtual spawn_decision on_spawn(worker& w, work_item& child) {
    (void)w;
    (void)child;
    return {};
  }
  // Task-group lifecycle: group_begin before the group's first child starts, group_end when its
  // wait() completes. Per-group state goes in group_state::policy_data.
  virtual void group_begin(worker& w, group_state& g) {
    (void)w;
    (void)g;
  }
  // The group's creator reached wait(): its own work between the spawns and the wait is done,
  // children may still run.
  virtual void group_wait(worker& w, group_state& g) {
    (void)w;
    (void)g;
  }
  // group_end may return another worker's index: the waiting task then moves there first (the
  // core parks it and delivers it, as a resumable waiter, to that worker) and group_end is called
  // again on the new worker. -1 (or w's own index): the group is finished here.
  virtual int group_end(worker& w, group_state& g) {
    (void)w;
    (void)g;
    return -1;
  }
  // The last child of a suspended waiter finished on `w`. Return the worker index that should
  // resume the waiter: w's own index resumes it at once; another index sends the continuation
  // to that worker's mailbox (e.g. NUMA-WS pushing it to its place, ADWS to its owner).
  virtual int on_ready(worker& w, group_state& g);

  // A task finished running (its own code; its children may still run), for policies with a
  // spawn or group hook. `state` is the task's policy state.
  virtual void task_done(worker& w, const task_state& state) {
    (void)w;
    (void)state;
  }

  // Hands `item` (a not-yet-started task the policy routed with `send`, or a resumable waiter
  // on_ready sent away) to worker `target`. False if it cannot take it now; the core then keeps
  // the item on `from`. Default: the target's single-entry mailbox.
  virtual bool deliver(worker& from, int target, work_item* item);

  // Whether policy-owned queues hold work for `w`: checked by a worker about to sleep, after it
  // has announced itself as a sleeper, so that work delivered just before is not slept through.
  virtual bool has_work(const worker& w) const noexcept {
    (void)w;
    return false;
  }

  // Whether `w` may start roots submitted from outside the runtime (ADWS: only the owner of the
  // whole distribution range, worker 0).
  virtual bool takes_roots(const worker& w) const noexcept {
    (void)w;
    return true;
  }

  // Work that goes before the worker's own deque (ADWS: a cross-worker continuation sent back
  // to its owner runs at the owner's next scheduling point, §3.1). has_urgent is asked when a
  // child-first child finishes (true: the child's parent stays queued, and the worker goes to
  // its scheduler loop), take_urgent at the start of each round of looking for work.
  virtual bool has_urgent(const worker& w) const noexcept {
    (void)w;
    return false;
  }
  virtual work_item* take_urgent(worker& w) {
    (void)w;
    return nullptr;
  }

  // An idle worker whose own deque and mailbox are empty asks for work: steal (from whom, how
  // many) or take from policy-owned queues. Returns nullptr after one round of attempts; the
  // core handles spinning, back-off and sleeping between rounds.
  virtual work_item* find_work(worker& w) = 0;
};

struct policy_entry {
  std::string_view name;
  std::string_view description;
  std::unique_ptr<policy> (*make)();
};

// Every scheduler selectable through LOCUS_SCHED / options::sched, the default first.
const std::vector<policy_entry>& policy_registry();
std::vector<std::string> policy_names();
std::unique_ptr<policy> make_policy(std::string_view name);

}  // namespace locus::detail
