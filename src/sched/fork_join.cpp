// Spawn, join and task completion: the paths every task takes. A child-first spawn calls the
// child on a fresh user-level thread's stack and leaves the parent's continuation in the deque;
// a child that finds its parent's continuation still there simply returns to it, with no
// context switch and no atomic read-modify-write on the group. Only continuations taken by a
// scheduler (stolen, or picked up locally after the child suspended) are counted in
// group_state::pending, and only their children decrement it.
#include <future>
#include <memory>

#include "sched/fork_join.hpp"
#include "sched/gang.hpp"
#include "sched/probe.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"
#include "ult/call_on_stack.hpp"

namespace locus::detail {
namespace {

// initial-exec: one %fs-relative load instead of a __tls_get_addr call in the PIC library.
[[gnu::tls_model("initial-exec")]] thread_local worker* tls_worker asm("locus_tls_worker") =
    nullptr;

// current_worker() for the spawn and join paths, without the call. A user-level thread may resume
// on another OS thread, so the compiler must not reuse a thread-local address it computed before a
// switch; a volatile asm that reads through %fs each time cannot be merged or hoisted.
inline worker* current_worker_here() noexcept {
#if defined(__x86_64__) && defined(__ELF__)
  worker* w;
  asm volatile(
      "movq locus_tls_worker@gottpoff(%%rip), %0\n\t"
      "movq %%fs:(%0), %0"
      : "=r"(w));
  return w;
#else
  return current_worker();
#endif
}

using what = switch_msg::what;

// The functions every child-first spawn runs start on a cache line of their own, so that an
// unrelated change elsewhere in the library does not move their loops and branches across fetch
// boundaries: a shift alone changed the cost of a spawn by a few percent.
#define hot_path [[gnu::aligned(64)]]

// Marks a spawn record whose continuation goes to its spawner's replaced queue.
char to_replaced_queue;
// Marks a spawn record whose child runs serially: there is no continuation to publish.
char runs_serially;

// Whether more than a quarter of the running task's stack is left. A child that would run on its
// parent's stack (a serial spawn, a queued child helped at the join) runs on a stack of its own
// past that: deep help-first recursion must not overflow one stack.
bool stack_has_room(const worker* w) noexcept {
  const auto* here = static_cast<const std::byte*>(__builtin_frame_address(0));
  const ult::stack& s = *w->running;
  if (s.lo == nullptr) return true;  // not a pooled stack (the thread's own)
  return here > s.lo && static_cast<std::size_t>(here - s.lo) > s.size / 4;
}

// What a child-first child owes the scheduler policy: nothing (a policy without per-spawn
// hooks); its task hooks and a look at the `first` lane of the inbox when it ends; or, for a
// child of an unhooked group (task_frame::children_unhooked), only the look at the lane.
enum class watch : std::uint8_t { none, hooks, unhooked };

// Policies with group-begin or group-wait hooks mark a group as begun at its first spawn.
[[gnu::noinline]] void begin_group(worker& w, group_state& g) {
  g.begun.store(true, std::memory_order_relaxed);
  if (w.rt.learner) w.rt.learner->group_begins(w, g);
  if (w.rt.hooks.group_begin) w.rt.sched->group_begin(w.ctx, g);
}

// Work a thread outside the runtime spawned child-first: the caller blocks until the closure
// has been copied onto the child's stack, then returns; the child finishes like a queued task.
struct outside_start final : task_base {
  explicit outside_start(spawn_record* r) : rec(r) {}
  void execute() override { rec->start(rec); }
  spawn_record* rec;
  std::promise<void> copied;
};

// Decides, at the group's first spawn, what encloses it for cancellation: `outer`, the group of
// the task that spawns (normally its creator); none when that is the group itself or nothing.
inline void set_outer(group_state& g, const group_state* outer) noexcept {
  if (g.outer.load(std::memory_order_relaxed) != nullptr) return;
  g.outer.store(outer != nullptr && outer != &g ? outer : &no_enclosing_group,
                std::memory_order_release);
}

[[gnu::noinline, gnu::cold]] void spawn_from_outside(spawn_record& rec) {
  runtime& rt = default_runtime();
  auto task = std::make_unique<outside_start>(&rec);
  auto copied = task->copied.get_future();
  rec.publish_elsewhere = task.get();
  task->group = rec.group;
  task->options = rec.options;
  set_outer(*rec.group, nullptr);  // no enclosing task
  rec.group->pending.fetch_add(1, std::memory_order_relaxed);
  rt.impl().submit(std::move(task));
  copied.wait();
}

// Whether `g` lives on the stack the worker runs: the code running is then its creator or a
// child the creator runs there, never concurrent with the creator's wait.
bool on_running_stack(const worker& w, const group_state& g) noexcept {
  const ult::stack& s = *w.running;
  const auto* at = reinterpret_cast<const std::byte*>(&g);
  return at >= s.lo && at < s.top();
}

[[gnu::always_inline]] inline void note_outer(const worker& w, group_state& g) noexcept {
  set_outer(g, static_cast<const group_state*>(w.running->owner_note));
}

// A queued task taken to run whose group has been cancelled since it was queued: it does not run
// (its completion is accounted for as if it had).
bool skip_canceled(worker& w, const group_state* g) noexcept {
  if (g == nullptr || !any_group_canceling() || !group_canceling(*g)) return false;
  w.rt.count_canceled_task();
  return true;
}

// A child about to be queued or routed joins its group's count: in `unsettled` when the group
// lives on the stack spawning it (see group_state), else in `pending`.
[[gnu::always_inline]] inline void count_queued(worker& w, group_state& g, task_base* task) {
  task->group = &g;
  task->origin = w.index;
  if (on_running_stack(w, g)) {
    task->unsettled = true;
    ++g.unsettled;
  } else {
    g.pending.fetch_add(1, std::memory_order_relaxed);
  }
}

[[gnu::always_inline]] inline void queue_locally(worker& w, group_state& g, task_base* task) {
  count_queued(w, g, task);
  w.counters.spawns.add();
  w.push_local(task);
  w.rt.notify_work();
}

// A queued child the policy wants to route: it goes wherever route() puts it, or, if route()
// keeps it, on this worker's queue.
void route_or_queue(worker& w, group_state& g, std::unique_ptr<task_base> task) {
  count_queued(w, g, task.get());
  task_base* raw = task.release();
  w.counters.spawns.add();
  if (w.rt.hooks.route && w.rt.sched->route(w.ctx, *raw)) return;
  w.push_local(raw);
  w.rt.notify_work();
}

bool is_own_parent(work_item* item, const spawn_record* rec, const ult::stack* me,
                   const worker* w) noexcept {
  // Address equality alone could be an unrelated record reusing the same stack slot after the
  // parent moved on; the child stack pins it to this very spawn. The record must also be in the
  // queue of the worker that spawned: a chunk steal may have moved it to the queue of a worker
  // this child has since moved to, and the parent's spawn would then go on with its own worker's
  // state on another one. Such a record is a continuation like any other.
  const auto* r = static_cast<spawn_record*>(item);
  return item == rec && r->child_stack == me && r->spawner == w;
}

// A task after its execute(): deleted, unless it is a dispatched gang, which its members free
// (or this, when they have all ended already).
void free_executed(std::unique_ptr<task_base>& task) noexcept {
  if (task != nullptr && task->outlives_execute) {
    auto* gang = static_cast<gang_task*>(task.release());
    if (gang->release_dispatch()) task.reset(gang);
  }
  task.reset();
}

// A queued child run on the stack of the code that found it (its parent's wait, or a taskq
// thief's), with its own record, which then gives way to the running task's again. True if it
// was the last child of a parked waiter, which the caller must then resume.
bool run_inline(worker& w, group_state& g, task_base* raw) {
  std::unique_ptr<task_base> task(raw);
  ult::stack* stack = w.running;
  const bool counted_here = task->unsettled && on_running_stack(w, g);
  const task_frame parent = frame_of(*stack);
  void* const parent_note = std::exchange(stack->owner_note, &g);
  frame_of(*stack) = frame_of(*task);
  const bool hooked = !frame_of(*stack).unhooked;
  if (w.probed) probe_task_begin(w, task->label);
  if (hooked && w.rt.hooks.task_begin) w.rt.sched->task_begin(w.ctx);
  void* const parent_scope = std::exchange(stack->owner_scope, nullptr);
  try {
    if (!skip_canceled(w, &g)) task->execute();
  } catch (...) {
    record_exception(g, std::current_exception());
  }
  worker* now = current_worker_here();
  if (now->probed) probe_task_end(*now, &g);
  if (hooked && now->rt.hooks.task_end) now->rt.sched->task_end(now->ctx);
  frame_of(*stack) = parent;
  stack->owner_note = parent_note;
  stack->owner_scope = parent_scope;
  free_executed(task);
  if (counted_here) {
    --g.unsettled;
    return false;
  }
  return g.pending.fetch_sub(1, std::memory_order_acq_rel) == group_state::waiter_flag + 1;
}

// The newest item of w's queue if it is a task queued into `g` (and, with `need_room`, the stack
// has room to run it here); anything else stays queued.
task_base* pop_own_queued_task(worker* w, const group_state& g, bool need_room) {
  work_item* item = w->pop_local();
  if (item == nullptr) return nullptr;
  if (item->kind == item_kind::task && item->group == &g && (!need_room || stack_has_room(w))) {
    return static_cast<task_base*>(item);
  }
  w->push_local(item);
  return nullptr;
}

// Children queued parent-first by this group may still sit in our deque: run them here rather
// than suspend (help-first join), while the stack has room.
void help_with_own_tasks(group_state& g) {
  while (g.unsettled != 0 || g.pending.load(std::memory_order_acquire) != 0) {
    worker* w = current_worker_here();  // a helped task may have moved us to another worker
    task_base* task = pop_own_queued_task(w, g, true);
    if (task == nullptr) return;
    run_inline(*w, g, task);
  }
}

// Parks the running task until its join completes; the scheduler then runs `found` (what the
// task's watch of the join found), if anything.
void suspend_until_joined(worker* w, group_state& g, work_item* found) {
  w->counters.suspensions.add();
  w->running->may_have_moved = true;
  resume_item resume;
  resume.group = &g;
  g.resume = &resume;
  switch_msg msg{what::parked, w, w->running, &g, found};
  w->running = &w->native;
  resumed(ult::switch_to(w->sched_ctx, w->native, &msg));
  // Resumed by the last child or by a scheduler: only the waiter flag is left.
  g.pending.store(0, std::memory_order_relaxed);
}

// Moves the running task to worker `target`: parks it, as a resumable waiter of a join that
// nobody else finishes, and the scheduler hands it to the target once its context is saved.
void migrate_current(worker* w, group_state& g, int target) {
  w->counters.migrations.add();
  w->running->may_have_moved = true;
  group_state hop;
  hop.policy_data = g.policy_data;  // the policy sees which group's continuation this is
  hop.pending.store(1, std::memory_order_relaxed);  // the scheduler must not resume it itself
  resume_item resume;
  resume.group = &hop;
  hop.resume = &resume;
  switch_msg msg{what::migrating, w, w->running, &hop, nullptr, target};
  w->running = &w->native;
  resumed(ult::switch_to(w->sched_ctx, w->native, &msg));
}

// A begun group's end, where its policy or the work/span meter sees the join.
[[gnu::noinline]] void end_watched_group(worker* w, group_state& g) {
  if (w->rt.hooks.group_end) {
    for (auto target = w->rt.sched->group_end(w->ctx, g); target && *target != w->index;
         target = w->rt.sched->group_end(w->ctx, g)) {
      migrate_current(w, g, *target);
      w = current_worker_here();
    }
  }
  if (w->workspan != nullptr) w->workspan->join(&g);
}

// Ends the group's own cancellation once it is joined, so that it can be reused.
void settle_cancellation(group_state& g) noexcept {
  if (g.canceling.exchange(false, std::memory_order_acq_rel))
    canceling_groups.fetch_sub(1, std::memory_order_relaxed);
}

[[gnu::noinline, gnu::cold]] void rethrow_first(group_state& g) {
  g.failed.store(false, std::memory_order_relaxed);
  std::exception_ptr first = std::move(g.exception);
  std::destroy_at(&g.exception);
  std::rethrow_exception(std::move(first));
}

// Returns whether the group, or one it is nested in, was cancelling.
inline bool finish_group(group_state& g) {
  g.unhooked = false;  // a reused group decides again
  g.continuation_taken.store(false, std::memory_order_relaxed);
  g.unjoined.store(false, std::memory_order_relaxed);
  if (g.begun.load(std::memory_order_relaxed)) {
    worker* w = current_worker_here();
    if (w != nullptr && (w->rt.hooks.group_end || w->workspan != nullptr)) {
      end_watched_group(w, g);
      w = current_worker_here();  // group_end may have moved the task
    }
    if (w != nullptr && w->rt.learner) w->rt.learner->group_ends(*w, g);
    g.begun.store(false, std::memory_order_relaxed);
  }
  bool canceled = false;
  if (any_group_canceling()) {
    canceled = group_canceling(g);
    settle_cancellation(g);
  }
  if (g.failed.load(std::memory_order_acquire)) rethrow_first(g);
  return canceled;
}

}  // namespace

[[gnu::noipa]] worker* current_worker() noexcept {
  return tls_worker;
}
void set_current_worker(worker* w) noexcept {
  tls_worker = w;
}

runtime_impl* current_runtime() noexcept {
  worker* w = current_worker();
  return w != nullptr ? &w->rt : nullptr;
}

namespace {

[[noreturn]] void fiber_loop(ult::transfer t);

// A child-first child, called on its own stack by the parent's spawn. Returns to the parent
// when the parent's continuation is still in the queue (the serial case); otherwise the child
// ran concurrently with it and finishes like a queued task. The watched copies (policy hooks,
// trace or work/span) also call the policy's task hooks and look at the inbox's first lane;
// the Probed one also tells the trace and the work/span meter that the child returned.
template <watch Watched, bool Probed>
hot_path void child_entry(void* arg, ult::fcontext parent_ctx) noexcept {
  ult::entered();
  auto* rec = static_cast<spawn_record*>(arg);
  rec->parent.ctx = parent_ctx;
  // Read before the continuation is published: from then on `rec` may die at any time.
  group_state* g = rec->group;
  worker* w = rec->spawner;
  auto* me = static_cast<ult::stack*>(rec->child_stack);
  if constexpr (Watched == watch::hooks) {
    if (w->rt.hooks.task_begin) w->rt.sched->task_begin(w->ctx);
  }
  try {
    rec->start(rec);
  } catch (...) {
    record_exception(*g, std::current_exception());
  }
  // Only a child that suspended or whose continuation was taken can be on another worker.
  if (me->may_have_moved) {
    me->may_have_moved = false;
    w = current_worker_here();
  }
  if constexpr (Probed) probe_task_end(*w, g);
  if constexpr (Watched != watch::none) {
    if constexpr (Watched == watch::hooks) {
      if (w->rt.hooks.task_end) w->rt.sched->task_end(w->ctx);
    }
    // Work that goes before the queue first: the parent stays queued (stealable, and popped by
    // this worker's scheduler loop after that work), as if it had been stolen.
    if (w->mail.has(lane::first)) fiber_loop(complete_concurrent_child(w, g, me));
  }
  if constexpr (Watched == watch::none) {
    // Unwatched spawns happen only where no worker's queue is replaced.
    if (auto item = w->default_queue.deque.pop()) {
      if (is_own_parent(*item, rec, me, w)) {
        w->running = static_cast<ult::stack*>(rec->parent.stack);
        return;  // the parent releases this stack
      }
      if ((*item)->kind == item_kind::continuation) {
        w->default_queue.deque.push_marked(*item);
      } else {
        w->default_queue.deque.push(*item);
      }
    }
  } else if (work_item* item = w->pop_local()) {
    if (is_own_parent(item, rec, me, w)) {
      w->running = static_cast<ult::stack*>(rec->parent.stack);
      return;
    }
    w->push_local(item);
  }
  // This context parks in the stack pool and may later run queued tasks.
  fiber_loop(complete_concurrent_child(w, g, me));
}

// A queued task, or a gang's member, on the stack of this context; returns its group.
[[gnu::noinline]] group_state* run_task(worker* w, work_item* item) {
  task_base* raw;
  group_state* g;
  gang_member* member = nullptr;
  if (item->kind == item_kind::gang_member) {
    member = static_cast<gang_member*>(item);
    raw = member->gang;
    g = member->group;
  } else {
    raw = static_cast<task_base*>(item);
    g = raw->group;
  }
  task_frame& frame = frame_of(*w->running);
  frame = frame_of(*raw);
  w->running->owner_note = g;
  w->running->owner_scope = nullptr;
  const bool root = member == nullptr && raw->submitted;
  if (root && w->rt.learner) w->rt.learner->root_begins(*w);
  const bool hooked = w->rt.hooks.task_begin && !frame.unhooked;
  if (w->probed) {
    probe_task_begin(*w, raw->label != nullptr ? raw->label : (root ? "root" : nullptr));
  }
  if (hooked) w->rt.sched->task_begin(w->ctx);
  std::unique_ptr<task_base> task(member == nullptr ? raw : nullptr);
  try {
    if (member != nullptr) {
      // Members always run: those of a synchronous gang wait for one another.
      member->gang->run_member(member->index);
    } else if (root || !skip_canceled(*w, g)) {
      task->execute();
    }
  } catch (...) {
    if (g != nullptr) {
      record_exception(*g, std::current_exception());
    } else {
      current_worker()->rt.count_suppressed_exception();
    }
  }
  w = current_worker_here();
  w->running->may_have_moved = false;
  // Before root_done: whoever waits for the root reads the work/span totals.
  if (w->probed) probe_task_end(*w, g);
  if (w->rt.hooks.task_end && !frame_of(*w->running).unhooked) w->rt.sched->task_end(w->ctx);
  if (root && w->rt.learner) w->rt.learner->root_ends(*w);
  if (root) {
    // Account for the root's busy time before its caller can read the statistics.
    w->enter_phase(worker::phase::busy, clock_ns());
    w->rt.root_finished();
    task->root_done();
  }
  if (member != nullptr && member->gang->member_ended()) {
    const std::unique_ptr<task_base> last(member->gang);  // the last member frees the gang
  }
  free_executed(task);
  return g;
}

// Whether this was the last child of `g`'s parked waiter, which must then be resumed.
inline bool last_child_of_waiter(group_state* g) noexcept {
  return g != nullptr &&
         g->pending.fetch_sub(1, std::memory_order_acq_rel) == group_state::waiter_flag + 1;
}

// Hands this worker over to `g`'s waiter, unless the policy routes it.
ult::transfer resume_waiter(worker* w, group_state* g, ult::stack* me) noexcept {
  switch_msg msg{what::finished, w, me, nullptr, nullptr};
  const suspended waiter = g->waiter;
  resume_item* resume = g->resume;
  resume->origin = w->index;
  if (!w->rt.hooks.route || g->unhooked || !w->rt.sched->route(w->ctx, *resume)) {
    auto* waiter_stack = static_cast<ult::stack*>(waiter.stack);
    w->running = waiter_stack;
    if (w->trace != nullptr) {
      // Straight into the waiter, without the scheduler loop that would close the slices.
      w->trace->close_all();
      w->trace->begin_resume();
    }
    return ult::switch_to(waiter.ctx, *waiter_stack, &msg);
  }
  w->running = &w->native;
  return ult::switch_to(w->sched_ctx, w->native, &msg);
}

// Back to the scheduler loop, which gives this context's stack back and dispatches `next`.
ult::transfer leave_to_scheduler(worker* w, ult::stack* me, work_item* next) noexcept {
  switch_msg msg{what::finished, w, me, nullptr, next};
  w->running = &w->native;
  return ult::switch_to(w->sched_ctx, w->native, &msg);
}

}  // namespace

namespace {
// Queued tasks run here one after another for as long as the search after each finds another.
void fiber_loop(ult::transfer t) {
  for (;;) {
    resumed(t);
    const auto* m = static_cast<const switch_msg*>(t.data);
    worker* w = m->w;
    work_item* item = m->item;
    for (;;) {
      group_state* g = run_task(w, item);
      w = current_worker_here();
      if (last_child_of_waiter(g)) {
        t = resume_waiter(w, g, w->running);
        break;
      }
      item = w->next_after_task();
      if (item == nullptr || item->kind != item_kind::task) {
        t = leave_to_scheduler(w, w->running, item);
        break;
      }
      w->counters.chained_tasks.add();
      w->enter_phase(worker::phase::busy, clock_ns());
    }
  }
}
}  // namespace

void fiber_main(ult::transfer t) {
  ult::entered();
  fiber_loop(t);
}

ult::transfer complete_concurrent_child(worker* w, group_state* g, ult::stack* me) noexcept {
  if (last_child_of_waiter(g)) return resume_waiter(w, g, me);
  return leave_to_scheduler(w, me, nullptr);
}

namespace {
// A hooked spawn: the group's begin hook at its first spawn, the child's record inherited from
// its creator's as that hook left it, then the spawn hook.
[[gnu::always_inline]] inline spawn_decision consult_policy(worker& w, group_state& g,
                                                            task_frame& child,
                                                            const spawn_options& hints,
                                                            bool queued) {
  if (w.rt.hooks.begins_groups() && !g.begun.load(std::memory_order_relaxed)) begin_group(w, g);
  inherit(child, frame_of(*w.running), g, hints.place);
  if (!w.rt.hooks.spawn) return queued ? spawn_decision::parent_first : spawn_decision::child_first;
  spawn_request request{g, hints, child, queued};
  const spawn_decision d = w.rt.sched->on_spawn(w.ctx, request);
  const bool runs_now = d == spawn_decision::child_first || d == spawn_decision::serial;
  return queued && runs_now ? spawn_decision::parent_first : d;
}

// Whether `g`'s children need no policy hook (task_frame::children_unhooked): decided at its
// first spawn, by its creator's record then, unless its hooks have begun.
// While learned size hints profile an iteration, every group begins, so that it is measured
// whatever the policy decides about its children in later iterations (as under a trace); a
// group that does not begin is counted among its creator's all the same, so that the groups
// after it have the same names either way.
inline bool unhooked_group(worker& w, group_state& g, task_frame& creator) noexcept {
  if (g.unhooked) return true;
  if (g.begun.load(std::memory_order_relaxed) || !creator.children_unhooked) return false;
  if (w.rt.learner && w.rt.learner->profiling()) return false;
  g.unhooked = true;
  ++creator.groups_started;
  return true;
}

// The spawn itself, once it is decided that the child runs here, child-first, on `child` (whose
// record is written); `parent` is the stack running now.
template <watch Watched, bool Probed>
[[gnu::always_inline]] inline void run_child_first(worker* w, spawn_record& rec, ult::stack* parent,
                                                   ult::stack* child) {
  w->counters.spawns.add();
  rec.parent.stack = parent;
  rec.child_stack = child;
  rec.spawner = w;
  w->running = child;
  const ult::transfer t = ult::call_on_stack(&rec, *child, *parent, &child_entry<Watched, Probed>);
  if (t.fctx == nullptr) {
    // The child found the continuation still queued and returned: we never left this worker.
    w->stacks.release_clean(child);
  } else {
    resumed(t);  // the continuation was taken, and something resumed it
  }
}

inline ult::stack* child_stack(worker* w) {
  if (w->stacks.has_spare()) [[likely]]
    return w->stacks.take_spare();
  ult::stack* child = w->stacks.acquire();
  ult::prepare_for_call(*child);
  return child;
}

// The child as a plain call on its parent's stack, with its own record meanwhile (as run_inline
// does for a queued child): its code may suspend, and the parent then resumes wherever it does.
void run_serially(worker* w, spawn_record& rec, const task_frame& record, const char* label) {
  w->counters.spawns.add();
  w->counters.serial_spawns.add();
  group_state& g = *rec.group;
  ult::stack* stack = w->running;
  const task_frame parent = frame_of(*stack);
  void* const parent_note = std::exchange(stack->owner_note, &g);
  void* const parent_scope = std::exchange(stack->owner_scope, nullptr);
  frame_of(*stack) = record;
  rec.publish_elsewhere = &runs_serially;
  if (w->workspan != nullptr) g.begun.store(true, std::memory_order_relaxed);  // see spawn_watched
  if (w->probed) probe_task_begin(*w, label, rec.start);
  if (w->rt.hooks.task_begin) w->rt.sched->task_begin(w->ctx);
  try {
    rec.start(&rec);
  } catch (...) {
    record_exception(g, std::current_exception());
  }
  worker* now = current_worker_here();
  if (now->probed) probe_task_end(*now, &g);
  if (now->rt.hooks.task_end) now->rt.sched->task_end(now->ctx);
  frame_of(*stack) = parent;
  stack->owner_note = parent_note;
  stack->owner_scope = parent_scope;
}

// Whether the group's children may run concurrently with its creator: one runs now, or a loop
// took the creator's continuation since the last join (the rest of a loop whose first children
// were short, all finished by the time it goes on).
[[gnu::always_inline]] inline bool children_run_elsewhere(const group_state& g) noexcept {
  return (g.pending.load(std::memory_order_relaxed) != 0) |
         g.continuation_taken.load(std::memory_order_relaxed);
}

// `ordinal`: the child's, drawn by the caller (the plain path, which draws it first), or none
// yet (draw_ordinal).
constexpr std::uint32_t draw_ordinal = ~std::uint32_t{0};

// A group with children running concurrently with its creator, or whose creator's continuation
// was taken since its last join (by a thief, or after a child suspended: the children before it
// may all have ended since), queues its further children, parent-first: in a loop of
// spawns, each child-first spawn would hand the rest of the loop to the next thief, one steal of a
// continuation per child, where queued children leave the loop with the worker that runs it and
// let the others take the children one at a time. Up to a bound: a long loop must not turn into
// as many tasks on the heap (queued_children_bound); past it the spawn is child-first, behind the
// queued ones. True if the child is to be queued (spawn_routed then queues it).
[[gnu::noinline]] bool queue_after_steal(worker* w, spawn_record& rec,
                                         std::uint32_t ordinal = draw_ordinal) {
  if (static_cast<std::size_t>(w->default_queue.deque.size()) >= queued_children_bound)
    return false;
  if (ordinal == draw_ordinal) ordinal = next_ordinal(*rec.group);
  inherit(record_of(rec), frame_of(*w->running), ordinal, rec.options.place);
  rec.route = static_cast<std::uint8_t>(spawn_decision::parent_first);
  return true;
}

// Spawns with a policy hook, a trace or a work/span measurement: out of the plain path, which
// pays one byte test for all of them. The policy decides on the child's record kept in `rec`; only
// a child that runs child-first then takes a stack.
[[gnu::noinline]] bool spawn_watched(worker* w, spawn_record& rec) {
  if (w->replaced_queue) rec.publish_elsewhere = &to_replaced_queue;
  group_state& g = *rec.group;
  note_outer(*w, g);
  task_frame& creator = frame_of(*w->running);
  if (!w->probed && unhooked_group(*w, g, creator)) {
    ult::stack* child = child_stack(w);
    task_frame& frame = frame_of(*child);
    inherit(frame, creator, g, rec.options.place);
    frame.unhooked = true;
    child->owner_note = &g;
    child->owner_scope = nullptr;
    run_child_first<watch::unhooked, false>(w, rec, w->running, child);
    return true;
  }
  // The plain path's rule (spawn_here) where only a probe took the spawn off it, so that a trace
  // or a work/span measurement sees the schedule the program gets without them.
  if (!w->rt.hooks.per_spawn() && w->replaced_queue == nullptr && children_run_elsewhere(g) &&
      queue_after_steal(w, rec)) {
    if (w->trace != nullptr) (void)w->trace->take_label();  // the queued task has it
    if (w->workspan != nullptr) g.begun.store(true, std::memory_order_relaxed);
    return false;
  }
  const char* label = w->trace != nullptr ? w->trace->take_label() : nullptr;
  task_frame& record = record_of(rec);
  spawn_decision d = consult_policy(*w, g, record, rec.options, false);
  if (d == spawn_decision::serial) {
    if (stack_has_room(w)) {
      run_serially(w, rec, record, label);
      return true;
    }
    d = spawn_decision::child_first;
  }
  if (d != spawn_decision::child_first) {
    rec.route = static_cast<std::uint8_t>(d);  // for spawn_routed
    return false;
  }
  // wait() then reaches finish_group, where the meter sees the join.
  if (w->workspan != nullptr) g.begun.store(true, std::memory_order_relaxed);
  ult::stack* child = child_stack(w);
  frame_of(*child) = record;
  child->owner_note = &g;
  child->owner_scope = nullptr;
  if (w->probed) {
    probe_task_begin(*w, label, rec.start);
    run_child_first<watch::hooks, true>(w, rec, w->running, child);
  } else {
    run_child_first<watch::hooks, false>(w, rec, w->running, child);
  }
  return true;
}

// A plain spawn's child on `child`, run at once.
template <bool Placed>
[[gnu::always_inline]] inline void run_plain_child(worker* w, spawn_record& rec,
                                                   ult::stack* running, ult::stack* child,
                                                   std::uint32_t ordinal) {
  child->owner_note = rec.group;
  const std::uint64_t parent = frame_of(*running).position;
  if constexpr (Placed) {
    frame_of(*child).position = child_position(parent, ordinal, rec.options.place);
  } else {
    frame_of(*child).position = child_position(parent, ordinal);
  }
  run_child_first<watch::none, false>(w, rec, running, child);
}

// A plain spawn that may queue its child (its group has children running concurrently) or has
// no spare stack: out of line, so that the common path makes no call but the one into the child
// and keeps little in callee-saved registers across it.
template <bool Placed>
[[gnu::noinline]] bool spawn_plain_slowly(worker* w, spawn_record& rec, std::uint32_t ordinal) {
  if (ordinal != 0 && children_run_elsewhere(*rec.group) && queue_after_steal(w, rec, ordinal)) {
    return false;
  }
  run_plain_child<Placed>(w, rec, w->running, child_stack(w), ordinal);
  return true;
}

template <bool Placed>
[[gnu::always_inline]] inline bool spawn_here(spawn_record& rec) {
  // Read once: the compiler would load them again after each store to the group.
  group_state& g = *rec.group;
  g.unjoined.store(true, std::memory_order_relaxed);
  worker* w = current_worker_here();
  if (w == nullptr) {
    spawn_from_outside(rec);
    return true;
  }
  if constexpr (Placed) w->rt.check_place(rec.options.place);
  if (!w->plain_spawn) return spawn_watched(w, rec);
  // The group's first spawn from a worker decides what encloses it. Only a spawn from outside
  // the runtime can have set `outer` before; it named no enclosing group, and the spawner here is
  // then a child of the group itself, which the walk in group_canceling takes for none as well.
  // A spawner outside any group (a root) leaves it null, which the walk reads as none too.
  // No child can run concurrently before the first spawn, so only later ones look at `pending`.
  ult::stack* const running = w->running;
  const std::uint32_t ordinal = next_ordinal(g);
  if (ordinal == 0) {
    g.outer.store(static_cast<const group_state*>(running->owner_note), std::memory_order_release);
  } else if (children_run_elsewhere(g)) [[unlikely]] {
    return spawn_plain_slowly<Placed>(w, rec, ordinal);
  }
  if (!w->stacks.has_spare()) [[unlikely]]
    return spawn_plain_slowly<Placed>(w, rec, ordinal);
  run_plain_child<Placed>(w, rec, running, w->stacks.take_spare(), ordinal);
  return true;
}
}  // namespace

hot_path bool spawn_child_first(spawn_record& rec) {
  return spawn_here<false>(rec);
}

hot_path bool spawn_child_first_placed(spawn_record& rec) {
  return spawn_here<true>(rec);
}

namespace {
[[gnu::noinline]] void publish_off_the_plain_path(spawn_record* rec) noexcept {
  if (rec->publish_elsewhere == &runs_serially) return;
  if (rec->publish_elsewhere == &to_replaced_queue) {
    worker* w = rec->spawner;
    w->replaced_queue->push(rec);
    w->rt.notify_work();
    return;
  }
  static_cast<outside_start*>(rec->publish_elsewhere)->copied.set_value();
}

}  // namespace

hot_path void publish_continuation(spawn_record* rec) noexcept {
  if (rec->publish_elsewhere != nullptr) [[unlikely]] {
    publish_off_the_plain_path(rec);
    return;
  }
  worker* w = rec->spawner;
  w->default_queue.deque.push_marked(rec);
  w->rt.notify_work();
}

void spawn_parent_first(group_state& g, std::unique_ptr<task_base> task) {
  g.unjoined.store(true, std::memory_order_relaxed);
  worker* w = current_worker_here();
  if (w == nullptr) {
    task->group = &g;
    set_outer(g, nullptr);  // no enclosing task
    g.pending.fetch_add(1, std::memory_order_relaxed);
    default_runtime().impl().submit(std::move(task));
    return;
  }
  w->rt.check_place(task->options.place);
  note_outer(*w, g);
  task_frame& creator = frame_of(*w->running);
  task_frame& frame = frame_of(*task);
  if (w->plain_spawn || (!w->probed && unhooked_group(*w, g, creator))) {
    inherit(frame, creator, g, task->options.place);
    frame.unhooked = !w->plain_spawn;
    queue_locally(*w, g, task.release());
    return;
  }
  if (w->workspan != nullptr) g.begun.store(true, std::memory_order_relaxed);  // see spawn_watched
  if (consult_policy(*w, g, frame, task->options, true) == spawn_decision::route) {
    route_or_queue(*w, g, std::move(task));
    return;
  }
  queue_locally(*w, g, task.release());
}

void spawn_routed(group_state& g, std::unique_ptr<task_base> task, const spawn_record& rec) {
  worker* w = current_worker_here();
  frame_of(*task) = record_of(rec);
  if (static_cast<spawn_decision>(rec.route) == spawn_decision::route) {
    route_or_queue(*w, g, std::move(task));
    return;
  }
  queue_locally(*w, g, task.release());
}

bool wait(group_state& g) {
  worker* w = current_worker_here();
  if (w == nullptr) {
    if (g.pending.load(std::memory_order_acquire) != 0) {
      return default_runtime().exec([&g] { return wait(g); });
    }
    return finish_group(g);
  }
  if (g.begun.load(std::memory_order_relaxed) && w->rt.hooks.group_wait)
    w->rt.sched->group_wait(w->ctx, g);
  if (g.unsettled != 0 || g.pending.load(std::memory_order_acquire) != 0) {
    help_with_own_tasks(g);
    // What is left of the tasks counted here was taken by other code: count it where that code
    // counts down.
    if (g.unsettled != 0) {
      g.pending.fetch_add(std::exchange(g.unsettled, 0), std::memory_order_acq_rel);
    }
    if (g.pending.load(std::memory_order_acquire) != 0) {
      worker* here = current_worker_here();
      // A taken continuation waits where it was stolen to, and its last child most likely ends
      // on the worker it was taken from: that worker switches straight into it (or a policy
      // hands it back there at the join) more cheaply than this one could watch the join.
      work_item* found =
          g.continuation_taken.load(std::memory_order_relaxed) ? nullptr : here->watch_join(g);
      if (found != nullptr || g.pending.load(std::memory_order_acquire) != 0)
        suspend_until_joined(here, g, found);
    }
  }
  return finish_group(g);
}

bool run_own_queued_task(group_state& g) {
  worker* w = current_worker_here();
  if (w == nullptr) return false;
  task_base* task = pop_own_queued_task(w, g, false);
  if (task == nullptr) return false;
  run_inline(*w, g, task);
  return true;
}

bool steal_and_run_task() {
  worker* w = current_worker_here();
  if (w == nullptr) return false;
  work_item* item = w->rt.sched->find_work(w->ctx);
  if (item == nullptr) return false;
  if (item->kind != item_kind::task || item->group == nullptr) {
    // A continuation, a waiter or a gang's share needs a context of its own: it waits on this
    // worker's queue, where the scheduler loop (or another thief) takes it.
    w->push_local(item);
    w->rt.notify_work();
    return false;
  }
  group_state& g = *item->group;
  if (run_inline(*w, g, static_cast<task_base*>(item))) {
    // Its group's waiter is parked and this was its last child: this context cannot switch to
    // it, so it is resumed through the queue (or where the policy routes it).
    w = current_worker_here();
    resume_item* resume = g.resume;
    resume->origin = w->index;
    if (!w->rt.hooks.route || g.unhooked || !w->rt.sched->route(w->ctx, *resume)) {
      w->push_local(resume);
      w->rt.notify_work();
    }
  }
  return true;
}

void record_exception(group_state& g, std::exception_ptr e) noexcept {
  if (!g.failed.exchange(true, std::memory_order_acq_rel)) {
    std::construct_at(&g.exception, std::move(e));
    if (!g.isolated) cancel_group(g);  // as oneTBB: siblings not started yet do not run
    return;
  }
  g.suppressed.fetch_add(1, std::memory_order_relaxed);
  if (worker* w = current_worker()) w->rt.count_suppressed_exception();
}

std::atomic<std::uint32_t> canceling_groups{0};
const group_state no_enclosing_group{};

namespace {
// Far beyond any real nesting: only a group reused from unrelated tasks could chain back onto
// itself, and the walk must end then too.
constexpr int max_enclosing_groups = 1 << 16;
}  // namespace

bool group_canceling(const group_state& g) noexcept {
  const group_state* at = &g;
  for (int hops = 0; at != nullptr && hops < max_enclosing_groups; ++hops) {
    if (at->isolated) return false;
    if (at->canceling.load(std::memory_order_acquire)) return true;
    const group_state* outer = at->outer.load(std::memory_order_acquire);
    if (outer == at || outer == &no_enclosing_group) return false;
    at = outer;
  }
  return false;
}

bool drop_canceled_spawn(group_state& g) noexcept {
  worker* w = current_worker();
  if (w != nullptr) note_outer(*w, g);  // a first spawn: `g` is nested in its creator's group
  if (!group_canceling(g)) return false;
  if (w != nullptr) w->rt.count_canceled_task();
  return true;
}

void cancel_group(group_state& g) noexcept {
  if (!g.canceling.exchange(true, std::memory_order_acq_rel))
    canceling_groups.fetch_add(1, std::memory_order_relaxed);
}

namespace {
// A join from a destructor, which must not throw: the exception is counted instead.
void wait_noexcept(group_state& g) noexcept {
  try {
    wait(g);
  } catch (...) {
    g.suppressed.fetch_add(1, std::memory_order_relaxed);
    if (worker* w = current_worker()) w->rt.count_suppressed_exception();
  }
}
}  // namespace

void close_group(group_state& g) noexcept {
  // A failed group is joined too, even with nothing left to wait for: the join disposes of the
  // exception (and counts it suppressed).
  if (g.begun.load(std::memory_order_relaxed) || g.unsettled != 0 ||
      g.pending.load(std::memory_order_relaxed) != 0 || g.failed.load(std::memory_order_acquire)) {
    wait_noexcept(g);
  }
  if (g.canceling.load(std::memory_order_relaxed)) settle_cancellation(g);
}

bool current_group_canceling() noexcept {
  const worker* w = current_worker();
  if (w == nullptr) return false;
  const auto* g = static_cast<const group_state*>(w->running->owner_note);
  return g != nullptr && group_canceling(*g);
}

}  // namespace locus::detail
