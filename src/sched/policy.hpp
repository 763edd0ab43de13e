// The interface between the generic core and a scheduler policy (DESIGN.md §2). The core owns
// threads, stacks, each worker's queue of ready work and inbox, the join protocol, sleeping and
// waking, and all counting; a policy decides where work goes and where idle workers look for it,
// and sees the core only through a context (sched/context.hpp). docs/scheduler-policies.md is the
// guide: the contract of every hook and which hooks each scheduler uses.
//
// A policy derives from policy_base<Self> and overrides what it needs; find_work is the only
// hook every policy has. The core calls a per-spawn or per-task hook only if the policy
// overrides it (found at compile time, see hook_set), so a policy without such hooks pays one
// predictable branch per spawn and nothing else.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "locus/detail/spawn.hpp"
#include "locus/stats.hpp"
#include "queue/work_queue.hpp"

namespace locus::topo {
class topology;
}

namespace locus::detail {

class context;
struct task_frame;

using ready_queue = queue::work_queue<work_item*>;

// What the policy decides for a new child (on_spawn).
enum class spawn_decision : std::uint8_t {
  child_first,   // run the child now; the parent's continuation becomes stealable (the default)
  parent_first,  // queue the child on this worker's queue; the parent goes on
  route,         // hand the child, boxed as a task, to the policy's route()
  // Run the child now as a plain call on the parent's stack, as the serial program would: nothing
  // becomes stealable and no stack is taken (a worker whose queue is full, say). A stack with
  // little room left runs the child child-first instead; a spawn the program asked to queue is
  // queued.
  serial,
};

// A spawn as on_spawn sees it. The child's record already holds what it inherits (its parent's
// slot, its place and path); the policy may change its slot and children_unhooked.
struct spawn_request {
  group_state& group;          // the group the child joins: hints, size, policy_data
  const spawn_options& hints;  // the child's own hints
  task_frame& child;
  bool queued;  // the program asked for locus::parent_first: child_first is taken as parent_first
};

// The hooks a policy overrides (filled in by policy_base).
struct hook_set {
  bool spawn = false;        // on_spawn
  bool route = false;        // route
  bool task_begin = false;   // task_begin
  bool task_end = false;     // task_end
  bool group_begin = false;  // group_begin or group_wait: every group begins at its first spawn
  bool group_wait = false;
  bool group_end = false;  // for groups that began, and those whose continuation was taken

  bool begins_groups() const noexcept { return group_begin || group_wait; }
  // Whether a spawn has anything to ask the policy (route and group_end need nothing from it).
  bool per_spawn() const noexcept { return spawn || task_begin || task_end || begins_groups(); }
};

// One of a policy's own settings as it runs with it (policy::settings).
struct policy_setting {
  std::string name;  // the environment variable
  std::string value;
};

class policy {
 public:
  virtual ~policy() = default;
  const hook_set& hooks() const noexcept { return hooks_; }

  // ---- set-up (once, before any task runs)
  // Per-worker and per-place state, from the topology the workers run on.
  virtual void attach(const topo::topology& topology, int workers) {
    (void)topology;
    (void)workers;
  }
  // Worker `worker`'s queue of ready work; nullptr keeps the Chase-Lev deque.
  virtual std::unique_ptr<ready_queue> make_queue(int worker) {
    (void)worker;
    return nullptr;
  }
  // The worker that starts roots submitted from outside the runtime; nullopt: any worker.
  virtual std::optional<int> root_worker() const noexcept { return std::nullopt; }
  // Whether roots submitted by several threads may run at once; runtime::exec runs them one at a
  // time for a policy whose schedule assumes a single root.
  virtual bool concurrent_roots() const noexcept { return true; }
  // The policy's own settings in effect after attach (runtime::describe, LOCUS_PRINT_CONFIG).
  virtual std::vector<policy_setting> settings() const { return {}; }
  // What the policy learned or decided, for the statistics (stats::policy): read at any time
  // from any thread.
  virtual std::vector<policy_figure> figures() const { return {}; }

  // ---- idle workers
  // The worker's queue and inbox are empty: one round of looking for work (steal through the
  // context, or take from the policy's own queues). nullptr: nothing this round; the core
  // spins, yields and sleeps between rounds.
  virtual work_item* find_work(context& ctx) = 0;
  // Whether the policy's own queues hold work for ctx's worker, which is about to sleep; read
  // with seq_cst what the deliverer wrote with seq_cst before context::posted.
  virtual bool has_work(const context& ctx) const noexcept {
    (void)ctx;
    return false;
  }

  // ---- the program's iterations
  // The program says that an iteration of its outer loop has ended (locus::next_iteration, on
  // ctx's worker, in the task that drives the loop, after the iteration's joins): every task the
  // iteration started has ended. Roots are iterations too; their tasks see task_begin and
  // task_end like any other.
  virtual void iteration_end(context& ctx) { (void)ctx; }
  // The roots from now on belong to another program (runtime::relearn, between roots): forget
  // what was learned from the earlier one.
  virtual void relearn() {}

  // ---- per spawn and per task (called only when overridden)
  // Every spawn: run the child now (with its continuation stealable, or serially), queue it
  // here, or route it.
  virtual spawn_decision on_spawn(context& ctx, spawn_request& spawn) {
    (void)ctx;
    return spawn.queued ? spawn_decision::parent_first : spawn_decision::child_first;
  }
  // An item that is ready and does not run on at once: a child on_spawn routed (a task), a
  // parked waiter whose last child just finished on this worker, or a task group_end moves (both
  // resume items; item.group->policy_data is the group's). Queue or deliver it and return true,
  // or return false: a routed child is queued on this worker's queue, a waiter or a moving task
  // resumes here at once.
  virtual bool route(context& ctx, work_item& item) {
    (void)ctx;
    (void)item;
    return false;
  }
  // A task's own code starts and ends (a child-first child on its spawn, a queued task when a
  // worker runs it; children of an unhooked task excepted). Continuations resumed by a thief
  // and waiters resumed after a join do not begin again.
  virtual void task_begin(context& ctx) { (void)ctx; }
  virtual void task_end(context& ctx) { (void)ctx; }
  // A task group's first spawn; per-group state goes in group_state::policy_data.
  virtual void group_begin(context& ctx, group_state& group) {
    (void)ctx;
    (void)group;
  }
  // The group's creator reached wait(): its own work between the spawns and the wait is done;
  // children may still run.
  virtual void group_wait(context& ctx, group_state& group) {
    (void)ctx;
    (void)group;
  }
  // The group's wait() is complete, for a group that began, or one whose parent continuation
  // was taken by a scheduler loop (stolen, or resumed after its child suspended): a non-trivial
  // join. A worker index moves the waiting task first: the core parks it and hands it to route
  // (if overridden: it places the task, or keeps it here), else delivers it to that worker before
  // its queue; group_end is called again wherever it resumes. nullopt ends the group here.
  virtual std::optional<int> group_end(context& ctx, group_state& group) {
    (void)ctx;
    (void)group;
    return std::nullopt;
  }

 protected:
  explicit policy(hook_set hooks) noexcept : hooks_(hooks) {}

 private:
  const hook_set hooks_;
};

// A policy's base: finds which hooks Self overrides, from the types of its member pointers (an
// override names Self, an inherited hook names policy).
template <class Self>
class policy_base : public policy {
 protected:
  policy_base() noexcept : policy(overridden()) {}

 private:
  template <class Mine, class Default>
  static constexpr bool differs = !std::is_same_v<Mine, Default>;
  static constexpr hook_set overridden() noexcept {
    return {
        .spawn = differs<decltype(&Self::on_spawn), decltype(&policy::on_spawn)>,
        .route = differs<decltype(&Self::route), decltype(&policy::route)>,
        .task_begin = differs<decltype(&Self::task_begin), decltype(&policy::task_begin)>,
        .task_end = differs<decltype(&Self::task_end), decltype(&policy::task_end)>,
        .group_begin = differs<decltype(&Self::group_begin), decltype(&policy::group_begin)>,
        .group_wait = differs<decltype(&Self::group_wait), decltype(&policy::group_wait)>,
        .group_end = differs<decltype(&Self::group_end), decltype(&policy::group_end)>,
    };
  }
};

struct policy_entry {
  std::string name;
  std::string description;
  std::unique_ptr<policy> (*make)();
};

// Every scheduler selectable through LOCUS_SCHED / options::sched, the default first, then those
// added with register_policy.
std::vector<policy_entry> policy_registry();
std::vector<std::string> policy_names();
std::unique_ptr<policy> make_policy(std::string_view name);
// Adds a scheduler (a test's, or a program's own) to the registry; false if the name is taken.
bool register_policy(policy_entry entry);

}  // namespace locus::detail
