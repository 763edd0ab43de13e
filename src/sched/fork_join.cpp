// Spawn, join and task completion: the paths every task takes. A child-first spawn calls the
// child on a fresh user-level thread's stack and leaves the parent's continuation in the deque;
// a child that finds its parent's continuation still there simply returns to it, with no
// context switch and no atomic read-modify-write on the group. Only continuations taken by a
// scheduler (stolen, or picked up locally after the child suspended) are counted in
// group_state::pending, and only their children decrement it.
#include <future>

#include "sched/fork_join.hpp"
#include "sched/probe.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"
#include "ult/call_on_stack.hpp"

namespace locus::detail {
namespace {

// initial-exec: one %fs-relative load instead of a __tls_get_addr call in the PIC library.
[[gnu::tls_model("initial-exec")]] thread_local worker* tls_worker asm("locus_tls_worker") =
    nullptr;

// current_worker() for the spawn path, without the call. A user-level thread may resume on
// another OS thread, so the compiler must not reuse a thread-local address it computed before
// a switch; a volatile asm that reads through %fs each time cannot be merged or hoisted.
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

// What a child-first child owes the scheduler policy: nothing (no hooks, or none that apply to
// spawns); its state from on_spawn, task_done and urgent work; or, for a child of a quiet task
// (task_state::quiet), its parent's state and urgent work.
enum class watch : std::uint8_t { none, hooks, inherited };

// Only policies with group hooks mark a group as begun; for the others wait() stays inline.
[[gnu::noinline]] void begin_group(worker& w, group_state& g) {
  g.begun = true;
  w.rt.sched->group_begin(w, g);
}

// Work a thread outside the runtime spawned child-first: the caller blocks until the closure
// has been copied onto the child's stack, then returns; the child finishes like a queued task.
struct outside_start final : task_base {
  explicit outside_start(spawn_record* r) : rec(r) {}
  void execute() override { rec->start(rec); }
  spawn_record* rec;
  std::promise<void> copied;
};

[[gnu::noinline, gnu::cold]] void spawn_from_outside(spawn_record& rec) {
  runtime& rt = default_runtime();
  auto task = std::make_unique<outside_start>(&rec);
  auto copied = task->copied.get_future();
  rec.outside = task.get();
  task->group = rec.group;
  task->options = rec.options;
  rec.group->pending.fetch_add(1, std::memory_order_relaxed);
  rt.impl().submit(std::move(task));
  copied.wait();
}

void queue_locally(worker& w, group_state& g, std::unique_ptr<task_base> task) {
  task->group = &g;
  task->origin = w.index;
  g.pending.fetch_add(1, std::memory_order_relaxed);
  w.counters.spawns.add();
  w.deque.push(task.release());
  w.rt.notify_work();
}

bool is_own_parent(work_item* item, const spawn_record* rec, const ult::stack* me) noexcept {
  // Address equality alone could be an unrelated record reusing the same stack slot after the
  // parent moved on; the child stack pins it to this very spawn.
  return item == rec && static_cast<spawn_record*>(item)->child_stack == me;
}

void run_inline(worker& w, group_state& g, task_base* raw) {
  std::unique_ptr<task_base> task(raw);
  if (w.probed) probe_task_begin(w, task->label);
  try {
    task->execute();
  } catch (...) {
    record_exception(g, std::current_exception());
  }
  if (worker* now = current_worker(); now->probed) probe_task_end(*now, &g);
  task.reset();
  g.pending.fetch_sub(1, std::memory_order_acq_rel);
}

// Children queued parent-first by this group may still sit in our deque: run them here rather
// than suspend (help-first join).
void help_with_own_tasks(group_state& g) {
  while (g.pending.load(std::memory_order_acquire) != 0) {
    worker* w = current_worker();  // a helped task may have moved us to another worker
    auto item = w->deque.pop();
    if (!item) return;
    if ((*item)->kind == item_kind::task && (*item)->group == &g) {
      run_inline(*w, g, static_cast<task_base*>(*item));
      continue;
    }
    w->deque.push(*item);
    return;
  }
}

void suspend_until_joined(worker* w, group_state& g) {
  w->counters.suspensions.add();
  w->running->may_have_moved = true;
  resume_item resume;
  resume.group = &g;
  g.resume = &resume;
  switch_msg msg{what::parked, w, w->running, &g, nullptr};
  w->running = &w->native;
  resumed(ult::switch_to(w->sched_ctx, w->native, &msg));
  // Resumed by the last child or by a scheduler: only the waiter flag is left.
  g.pending.store(0, std::memory_order_relaxed);
}

// Moves the running task to worker `target`: parks it, as a resumable waiter of a join that
// nobody else finishes, and the scheduler hands it to the target once its context is saved.
void migrate_current(worker* w, group_state& g, int target) {
  w->counters.suspensions.add();
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

void finish_group(group_state& g) {
  g.quiet = false;  // a reused group decides again
  if (g.begun) {
    worker* w = current_worker();
    if (w != nullptr && w->rt.hooks.group) {
      for (int target = w->rt.sched->group_end(*w, g); target >= 0 && target != w->index;
           target = w->rt.sched->group_end(*w, g)) {
        migrate_current(w, g, target);
        w = current_worker();
      }
    }
    if (w != nullptr && w->workspan != nullptr) w->workspan->join(&g);
    g.begun = false;
  }
  if (g.failed.load(std::memory_order_acquire)) {
    g.failed.store(false, std::memory_order_relaxed);
    std::rethrow_exception(std::exchange(g.exception, nullptr));
  }
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
// when the parent's continuation is still in the deque (the serial case); otherwise the child
// ran concurrently with it and finishes like a queued task. The watched copies (policy hooks,
// trace or work/span) also keep the policy's task state; the Probed one also tells the
// trace and the work/span meter that the child returned.
template <watch Watched, bool Probed>
void child_entry(void* arg, ult::fcontext parent_ctx) noexcept {
  ult::entered();
  auto* rec = static_cast<spawn_record*>(arg);
  rec->parent.ctx = parent_ctx;
  // Read before the continuation is published: from then on `rec` may die at any time.
  group_state* g = rec->group;
  worker* w = rec->spawner;
  auto* me = static_cast<ult::stack*>(rec->child_stack);
  if constexpr (Watched == watch::hooks) {
    if (w->rt.hooks.spawn) me->task = rec->policy_state;  // set by on_spawn
  }
  try {
    rec->start(rec);
  } catch (...) {
    record_exception(*g, std::current_exception());
  }
  // Only a child that suspended or whose continuation was taken can be on another worker.
  if (me->may_have_moved) {
    me->may_have_moved = false;
    w = current_worker();
  }
  if constexpr (Probed) probe_task_end(*w, g);
  if constexpr (Watched != watch::none) {
    if constexpr (Watched == watch::hooks) w->rt.sched->task_done(*w, me->task);
    // Urgent work first: the parent stays queued (stealable, and popped by this worker's
    // scheduler loop after the urgent work), as if it had been stolen.
    if (w->rt.hooks.urgent && w->rt.sched->has_urgent(*w)) {
      fiber_loop(complete_concurrent_child(w, g, me));
    }
  }
  if (auto item = w->deque.pop()) {
    if (is_own_parent(*item, rec, me)) {
      w->running = static_cast<ult::stack*>(rec->parent.stack);
      return;  // the parent releases this stack
    }
    w->deque.push(*item);
  }
  // This context parks in the stack pool and may later run queued tasks.
  fiber_loop(complete_concurrent_child(w, g, me));
}

[[gnu::noinline]] ult::transfer run_task(const switch_msg* m) {
  auto* raw = static_cast<task_base*>(m->item);
  group_state* g = raw->group;
  const bool root = raw->submitted;
  m->w->running->task = raw->policy_state;
  std::unique_ptr<task_base> task(raw);
  if (worker* w = m->w; w->probed) {
    probe_task_begin(*w, task->label != nullptr ? task->label : (root ? "root" : nullptr));
  }
  try {
    task->execute();
  } catch (...) {
    if (g != nullptr) {
      record_exception(*g, std::current_exception());
    } else {
      current_worker()->rt.count_suppressed_exception();
    }
  }
  worker* w = current_worker();
  w->running->may_have_moved = false;
  // Before root_done: whoever waits for the root reads the work/span totals.
  if (w->probed) probe_task_end(*w, g);
  if (!w->plain_spawn) w->rt.sched->task_done(*w, w->running->task);
  if (root) {
    // Account for the root's busy time before its caller can read the statistics.
    w->enter_phase(worker::phase::busy, clock_ns());
    w->rt.root_finished();
    task->root_done();
  }
  task.reset();
  return complete_concurrent_child(w, g, w->running);
}

}  // namespace

namespace {
void fiber_loop(ult::transfer t) {
  for (;;) {
    resumed(t);
    t = run_task(static_cast<const switch_msg*>(t.data));
  }
}
}  // namespace

void fiber_main(ult::transfer t) {
  ult::entered();
  fiber_loop(t);
}

ult::transfer complete_concurrent_child(worker* w, group_state* g, ult::stack* me) noexcept {
  switch_msg msg{what::finished, w, me, nullptr, nullptr};
  if (g != nullptr &&
      g->pending.fetch_sub(1, std::memory_order_acq_rel) == group_state::waiter_flag + 1) {
    // Last child of a parked waiter: hand this worker over to it.
    const suspended waiter = g->waiter;
    runtime_impl& rt = w->rt;
    const int target = rt.hooks.ready && !g->quiet ? rt.sched->on_ready(*w, *g) : w->index;
    g->resume->origin = w->index;
    if (target == w->index || !rt.sched->deliver(*w, target, g->resume)) {
      auto* waiter_stack = static_cast<ult::stack*>(waiter.stack);
      w->running = waiter_stack;
      if (w->trace != nullptr) {
        // Straight into the waiter, without the scheduler loop that would close the slices.
        w->trace->close_all();
        w->trace->begin_resume();
      }
      return ult::switch_to(waiter.ctx, *waiter_stack, &msg);
    }
    w->counters.mailbox_pushes.add();
    rt.wake_all_for_mailbox();
  }
  w->running = &w->native;
  return ult::switch_to(w->sched_ctx, w->native, &msg);
}

namespace {
// The policy's group-begin and spawn hooks; false when it routes the child elsewhere.
[[gnu::noinline]] bool consult_policy(worker& w, spawn_record& rec) {
  group_state& g = *rec.group;
  if (w.rt.hooks.group && !g.begun) begin_group(w, g);
  if (w.rt.hooks.spawn) {
    const spawn_decision d = w.rt.sched->on_spawn(w, rec);
    if (d.what != spawn_decision::action::child_first) {
      rec.route = static_cast<std::uint8_t>(d.what);
      rec.route_target = d.target;
      return false;
    }
  }
  return true;
}

// Whether `g`'s children need no policy hooks (task_state::quiet): decided at its first spawn,
// by its creator's state then, unless its hooks have begun.
inline bool quiet_group(const worker& w, group_state& g) noexcept {
  if (g.quiet) return true;
  if (g.begun || !w.rt.hooks.spawn || !w.running->task.quiet) return false;
  g.quiet = true;
  return true;
}

// The spawn itself, once it is decided that the child runs here, child-first.
template <watch Watched, bool Probed>
[[gnu::always_inline]] inline void run_child_first(worker* w, spawn_record& rec) {
  w->counters.spawns.add();
  ult::stack* child = w->stacks.acquire();
  ult::prepare_for_call(*child);
  ult::stack* parent = w->running;
  if constexpr (Watched == watch::inherited) {
    child->task = parent->task;
    child->task.group = nullptr;
  }
  rec.parent.stack = parent;
  rec.child_stack = child;
  rec.spawner = w;
  w->running = child;
  const ult::transfer t = ult::call_on_stack(&rec, *child, *parent, &child_entry<Watched, Probed>);
  if (t.fctx == nullptr) {
    // The child found the continuation still queued and returned: we never left this worker.
    w->stacks.release(child);
  } else {
    resumed(t);  // the continuation was taken, and something resumed it
  }
}

// Spawns with a policy hook, a trace or a work/span measurement: out of the plain path, which
// pays one byte test for all of them.
[[gnu::noinline]] bool spawn_watched(worker* w, spawn_record& rec) {
  if (!w->probed) {
    if (quiet_group(*w, *rec.group)) {
      run_child_first<watch::inherited, false>(w, rec);
      return true;
    }
    if (!consult_policy(*w, rec)) return false;
    run_child_first<watch::hooks, false>(w, rec);
    return true;
  }
  const char* label = w->trace != nullptr ? w->trace->take_label() : nullptr;
  if (!consult_policy(*w, rec)) return false;
  // wait() then reaches finish_group, where the meter sees the join.
  if (w->workspan != nullptr) rec.group->begun = true;
  probe_task_begin(*w, label, rec.start);
  run_child_first<watch::hooks, true>(w, rec);
  return true;
}

}  // namespace

bool spawn_child_first(spawn_record& rec) {
  worker* w = current_worker_here();
  if (w == nullptr) {
    spawn_from_outside(rec);
    return true;
  }
  if (!w->plain_spawn) return spawn_watched(w, rec);
  run_child_first<watch::none, false>(w, rec);
  return true;
}

namespace {
[[gnu::noinline, gnu::cold]] void publish_to_outside_caller(spawn_record* rec) noexcept {
  static_cast<outside_start*>(rec->outside)->copied.set_value();
}
}  // namespace

void publish_continuation(spawn_record* rec) noexcept {
  if (rec->outside != nullptr) [[unlikely]] {
    publish_to_outside_caller(rec);
    return;
  }
  worker* w = rec->spawner;
  w->deque.push(rec);
  w->rt.notify_work();
}

void spawn_parent_first(group_state& g, std::unique_ptr<task_base> task) {
  worker* w = current_worker();
  if (w == nullptr) {
    task->group = &g;
    g.pending.fetch_add(1, std::memory_order_relaxed);
    default_runtime().impl().submit(std::move(task));
    return;
  }
  if (w->rt.hooks.group && !g.begun && !g.quiet) begin_group(*w, g);
  if (w->workspan != nullptr) g.begun = true;  // see spawn_watched
  // A queued child inherits its parent's policy state (no spawn hook decides about it), as a
  // member of this group: the parent's group record is the parent's, and a policy that counts
  // its members' ends there (ADWS dominance) must not see this child's.
  task->policy_state = w->running->task;
  task->policy_state.group = g.policy_data;
  queue_locally(*w, g, std::move(task));
}

void spawn_routed(group_state& g, std::unique_ptr<task_base> task, const spawn_record& rec) {
  worker* w = current_worker();
  task->policy_state = rec.policy_state;  // set by the policy's on_spawn
  const auto action = static_cast<spawn_decision::action>(rec.route);
  if (action == spawn_decision::action::send && rec.route_target >= 0 &&
      rec.route_target < w->rt.size() && rec.route_target != w->index) {
    task->group = &g;
    task->origin = w->index;
    g.pending.fetch_add(1, std::memory_order_relaxed);
    task_base* raw = task.release();
    if (w->rt.sched->deliver(*w, rec.route_target, raw)) {
      w->counters.spawns.add();
      w->counters.mailbox_pushes.add();
      w->rt.wake_all_for_mailbox();
      return;
    }
    task.reset(raw);  // mailbox occupied: keep it here
    g.pending.fetch_sub(1, std::memory_order_relaxed);
  }
  queue_locally(*w, g, std::move(task));
}

void wait(group_state& g) {
  worker* w = current_worker();
  if (w == nullptr) {
    if (g.pending.load(std::memory_order_acquire) != 0) {
      default_runtime().exec([&g] { wait(g); });
      return;
    }
    finish_group(g);
    return;
  }
  if (g.begun && w->rt.hooks.group) w->rt.sched->group_wait(*w, g);
  if (g.pending.load(std::memory_order_acquire) != 0) {
    help_with_own_tasks(g);
    if (g.pending.load(std::memory_order_acquire) != 0) suspend_until_joined(current_worker(), g);
  }
  finish_group(g);
}

void wait_noexcept(group_state& g) noexcept {
  try {
    wait(g);
  } catch (...) {
    g.suppressed.fetch_add(1, std::memory_order_relaxed);
    if (worker* w = current_worker()) w->rt.count_suppressed_exception();
  }
}

void record_exception(group_state& g, std::exception_ptr e) noexcept {
  if (!g.failed.exchange(true, std::memory_order_acq_rel)) {
    g.exception = std::move(e);
    return;
  }
  g.suppressed.fetch_add(1, std::memory_order_relaxed);
  if (worker* w = current_worker()) w->rt.count_suppressed_exception();
}

}  // namespace locus::detail
