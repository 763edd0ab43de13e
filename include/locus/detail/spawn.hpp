// The boundary between the header-only API and the runtime core. Everything here is an
// implementation detail; user code includes <locus/locus.hpp>.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "locus/hints.hpp"

namespace locus::detail {

class worker;

// Hints carried by one spawn. place == inherit_place keeps the parent's place.
inline constexpr int inherit_place = -2;
struct spawn_options {
  double work = 0.0;  // 0 = no work hint
  int place = inherit_place;
  // Per-task identity for the policy's own use (CATS: the spawn-path id), set in on_spawn.
  std::uint32_t tag = 0;
};

// A suspended execution: an opaque machine context plus the stack it lives on.
struct suspended {
  void* ctx;
  void* stack;
};

// What a deque holds: either the continuation of a parent that spawned a child child-first, or a
// queued (parent-first) task.
enum class item_kind : std::uint8_t { continuation, task, resume };

struct group_state;

// Per-task state owned by the scheduler policy (ADWS: the task's distribution range and its
// depth among cross-worker groups; multi-level policies: the cache level it is scheduled at). A
// policy with a spawn hook sets a child's in on_spawn; the
// core copies it onto the stack the task runs on, where the policy finds the running task's.
// `set` is false for a root. Left uninitialised in spawn records: only a policy that sets it
// (one with a spawn hook) reads it.
//
// `quiet`: the policy needs no hook for the groups this task begins (ADWS: a task on one worker's
// unit, whose groups have no plan). The core then spawns their children child-first without
// group_begin, on_spawn, group_wait, on_ready, group_end or the children's task_done, and each
// child starts with its parent's state, `group` cleared (traced or measured runtimes, whose
// spawns all take the hooked path, still call them). Read when a group spawns its first child: a
// group whose hooks began keeps them until it ends, even if its creator turns quiet meanwhile.
struct task_state {
  double lo;
  double hi;
  std::int32_t depth;
  std::int16_t level;
  bool set;
  bool quiet;
  void* group;  // the policy's record of the group the task belongs to
};

struct work_item {
  explicit work_item(item_kind k) noexcept : kind(k) {}
  item_kind kind;
  bool submitted = false;  // came from outside the runtime (a root): counted until it finishes
  group_state* group = nullptr;
  spawn_options options{};

  // The policy's state for this task (a continuation or a task, not a resume item); in spawn
  // records it comes after the fields the spawn path uses. A queued spawn record's is its
  // child's: the continuation's own is on the parent's stack (queued_state, sched/worker.hpp).
  task_state& state() noexcept;
};

// Lives on the parent's stack for the duration of one child-first spawn.
struct spawn_record final : work_item {
  spawn_record() noexcept : work_item(item_kind::continuation) {}
  void (*start)(spawn_record*) = nullptr;  // copies the closure to the child's stack, runs it
  void* closure = nullptr;
  // Filled in by the core: where the parent's continuation is, the child's stack (to recognise
  // this record when popping it back), the spawning worker, and, for a spawn from a thread
  // outside the runtime, the hand-shake that tells the caller the closure has been copied.
  // Left uninitialised here: the core writes them before any read, and this record is built on
  // every spawn.
  suspended parent;
  void* child_stack;
  worker* spawner;
  void* outside = nullptr;
  // Set when the policy routes this child elsewhere than child-first (see spawn_child_first).
  std::uint8_t route;
  int route_target;
  task_state policy_state;
};

// A parent-first task: owns its closure; destroyed by whoever runs it.
struct task_base : work_item {
  task_base() noexcept : work_item(item_kind::task) {}
  task_base(const task_base&) = delete;
  task_base& operator=(const task_base&) = delete;
  virtual ~task_base() = default;
  virtual void execute() = 0;
  // Called by the core once a submitted (root) task has finished and its worker has accounted
  // for it, so that whoever waits for the root sees complete statistics.
  virtual void root_done() noexcept {}
  task_state policy_state{};
  const char* label = nullptr;  // locus::label, for traces
  int origin = -1;              // worker that queued or sent it (trace flow arrows)
};

inline task_state& work_item::state() noexcept {
  if (kind == item_kind::continuation) return static_cast<spawn_record*>(this)->policy_state;
  return static_cast<task_base*>(this)->policy_state;
}

// Where runtime::exec keeps a root's outcome: in the calling thread's frame, which outlives the
// task object.
template <class R>
struct root_outcome {
  std::optional<std::conditional_t<std::is_void_v<R>, bool, R>> value;
  std::exception_ptr error;
};

// A root submitted by runtime::exec. The caller is signalled only after the core is done with
// the task, so it sees complete statistics.
template <class F, class R>
struct root_task final : task_base {
  root_task(F& fn, root_outcome<R>& out) : f(fn), outcome(out) {}
  void execute() override {
    try {
      if constexpr (std::is_void_v<R>) {
        f();
        outcome.value.emplace(true);
      } else {
        outcome.value.emplace(f());
      }
    } catch (...) {
      outcome.error = std::current_exception();
    }
  }
  void root_done() noexcept override { done.set_value(); }
  F& f;
  root_outcome<R>& outcome;
  std::promise<void> done;
};

template <class Fn>
struct closure_task final : task_base {
  template <class F>
  explicit closure_task(F&& f) : fn(std::forward<F>(f)) {}
  void execute() override { fn(); }
  Fn fn;
};

// A suspended waiter, queued when a policy resumes it on another worker than the one where its
// last child finished. It lives in the waiter's own (suspended) frame, so groups that never
// wait pay nothing for it.
struct resume_item final : work_item {
  resume_item() noexcept : work_item(item_kind::resume) {}
  int origin = -1;  // worker that sent it to a mailbox (trace flow arrows)
};

// Join state of one task group. `pending` counts children that may still run concurrently with
// the parent: continuations taken by another worker and queued tasks. A child that ran serially
// before its parent's continuation is never counted.
struct group_state {
  static constexpr std::int64_t waiter_flag = std::int64_t{1} << 40;

  std::atomic<std::int64_t> pending{0};
  suspended waiter;
  resume_item* resume;  // how the waiter travels; valid while it is parked
  std::atomic<bool> failed{false};
  std::exception_ptr exception;
  std::atomic<std::uint32_t> suppressed{0};
  spawn_options hints{};        // the group's own work hint (total) and place
  std::size_t size_bytes = 0;   // size_hint
  void* policy_data = nullptr;  // per-group state owned by the scheduler policy
  bool begun = false;           // the policy's group-begin hook has run
  bool quiet = false;           // begun by a quiet task (task_state::quiet): no hooks
};

// The calling OS thread's worker, or nullptr outside any runtime. Never inlined: a user-level
// thread may resume on another OS thread, so the thread-local lookup must not be cached.
[[gnu::noinline]] worker* current_worker() noexcept;

// Returns false when the scheduler policy routes this child elsewhere; the caller then boxes the
// closure and calls spawn_routed with the same record.
[[nodiscard]] bool spawn_child_first(spawn_record& rec);
void publish_continuation(spawn_record* rec) noexcept;
void spawn_parent_first(group_state& g, std::unique_ptr<task_base> task);
void spawn_routed(group_state& g, std::unique_ptr<task_base> task, const spawn_record& rec);
void wait(group_state& g);
void wait_noexcept(group_state& g) noexcept;
void record_exception(group_state& g, std::exception_ptr e) noexcept;

// A labeled child-first spawn hands its label to the traced spawn path of the calling worker
// (only labeled spawns pay for this call; unlabeled ones carry nothing).
void set_spawn_label(const char* name) noexcept;

// Spawn sites: each closure type's start function is registered at static initialisation with
// the type's name, so that traces can name unlabeled tasks without a store on the spawn path.
bool register_spawn_site(void (*start)(spawn_record*), std::string_view name) noexcept;

template <class T>
constexpr std::string_view type_name() noexcept {
  return __PRETTY_FUNCTION__;  // parsed when the trace is written (the compiler's format)
}

template <class Fn, class F>
void start_closure(spawn_record* rec) {
  // The closure may be a temporary in the parent's frame, which dies once the parent's
  // continuation runs; take it onto the child's stack before the continuation becomes stealable.
  // The continuation is published even if copying the closure throws: the parent must go on.
  struct publish_on_exit {
    spawn_record* rec;
    ~publish_on_exit() { publish_continuation(rec); }
  };
  Fn local = [rec]() -> Fn {
    publish_on_exit guard{rec};
    return Fn(std::forward<F>(*static_cast<std::remove_reference_t<F>*>(rec->closure)));
  }();
  local();
}

// Hint collection for run(...) and task_group(...).
struct collected_hints {
  spawn_options options{};
  std::size_t size_bytes = 0;
  bool parent_first = false;
  const char* label = nullptr;
};
inline void apply_hint(collected_hints& h, work_hint w) noexcept {
  h.options.work = w.value;
}
inline void apply_hint(collected_hints& h, place p) noexcept {
  h.options.place = p.id;
}
inline void apply_hint(collected_hints& h, size_hint s) noexcept {
  h.size_bytes = s.bytes;
}
inline void apply_hint(collected_hints& h, parent_first_t) noexcept {
  h.parent_first = true;
}
inline void apply_hint(collected_hints& h, label l) noexcept {
  h.label = l.name;
}
template <class... H>
inline constexpr bool has_label = (std::is_same_v<H, label> || ...);

template <class Fn, class F>
inline const bool spawn_site_registered = register_spawn_site(&start_closure<Fn, F>,
                                                              type_name<Fn>());

template <class... H>
collected_hints collect(H... hints) noexcept {
  collected_hints h;
  (apply_hint(h, hints), ...);
  return h;
}

}  // namespace locus::detail
