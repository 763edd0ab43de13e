// The boundary between the header-only API and the runtime core. Everything here is an
// implementation detail; user code includes <locus/locus.hpp>.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "locus/hints.hpp"

namespace locus::detail {

class worker;

// Hints carried by one spawn. place == inherit_place keeps the parent's place; a place id the
// program gave below any_place becomes bad_place, which the spawn rejects.
inline constexpr int inherit_place = -2;
inline constexpr int bad_place = -3;
struct spawn_options {
  double work = 0.0;  // 0 = no work hint
  int place = inherit_place;
};

// A suspended execution: an opaque machine context plus the stack it lives on.
struct suspended {
  void* ctx;
  void* stack;
};

// What a queue holds: the continuation of a parent that spawned a child child-first, a queued
// (parent-first) task, a suspended waiter to resume, or one worker's share of a task that
// several workers run at once (a gang member).
enum class item_kind : std::uint8_t { continuation, task, resume, gang_member };

struct group_state;

// Bytes of the runtime's record of a task (its scheduler state, place and spawn path), kept
// here for a task that has not started; its layout belongs to the runtime (sched/task_frame.hpp).
inline constexpr std::size_t task_record_bytes = 48;

struct work_item {
  explicit work_item(item_kind k) noexcept : kind(k) {}
  item_kind kind;
  bool submitted = false;  // came from outside the runtime (a root): counted until it finishes
  group_state* group = nullptr;
  spawn_options options{};
};

// Lives on the parent's stack for the duration of one child-first spawn.
struct spawn_record final : work_item {
  spawn_record() noexcept : work_item(item_kind::continuation) {}
  void (*start)(spawn_record*) = nullptr;  // copies the closure to the child's stack, runs it
  void* closure = nullptr;
  // Filled in by the core: where the parent's continuation is, the child's stack (to recognise
  // this record when popping it back) and the spawning worker. Left uninitialised here: the core
  // writes them before any read, and this record is built on every spawn.
  suspended parent;
  void* child_stack;
  worker* spawner;
  // Set by the core when the continuation is not to be pushed on the spawner's default queue:
  // a thread outside the runtime waits for the closure to be copied, or the spawner's queue is
  // one its scheduler chose.
  void* publish_elsewhere = nullptr;
  // Set when the scheduler does not run this child at once (see spawn_child_first).
  std::uint8_t route;
  // The child's record while a scheduler policy decides where the child runs; written only on
  // spawns a policy watches, so that a child it queues never takes a stack.
  alignas(16) std::byte child_record[task_record_bytes];
};

// A parent-first task: owns its closure; destroyed by whoever runs it.
struct task_base : work_item {
  task_base() noexcept : work_item(item_kind::task) {}
  task_base(const task_base&) = delete;
  task_base& operator=(const task_base&) = delete;
  virtual ~task_base() = default;
  // From per-thread free lists (src/mem/task_memory.cpp): a help-first scheduler allocates one
  // task per queued child. The size a task is freed with is its dynamic type's (the destructor
  // is virtual).
  static void* operator new(std::size_t bytes);
  static void operator delete(void* p, std::size_t bytes) noexcept;
  static void* operator new(std::size_t bytes, std::align_val_t align);
  static void operator delete(void* p, std::size_t bytes, std::align_val_t align) noexcept;
  virtual void execute() = 0;
  // Called by the core once a submitted (root) task has finished and its worker has accounted
  // for it, so that whoever waits for the root sees complete statistics.
  virtual void root_done() noexcept {}
  alignas(16) std::byte record[task_record_bytes];  // written by the core when it is queued
  const char* label = nullptr;                      // locus::label, for traces
  int origin = -1;  // worker that queued or sent it (trace flow arrows)
  // Queued from its group's own stack and counted in group_state::unsettled, not in pending.
  bool unsettled = false;
  // execute() handed the task to others who free it (a gang's members): the core does not
  // delete it afterwards.
  bool outlives_execute = false;

 protected:
  explicit task_base(item_kind k) noexcept : work_item(k) {}
};

// How the thread that called runtime::exec learns that its root has ended: `running` until
// then, `done` after; `awaited` while the caller blocks on the word (a futex), so that the
// worker that ends the root makes a system call only when somebody sleeps on it.
struct root_signal {
  static constexpr std::uint32_t running = 0, done = 1, awaited = 2;
  std::atomic<std::uint32_t> state{running};
  bool ended() const noexcept { return state.load(std::memory_order_acquire) == done; }
};
// Called by the worker that ends the root; wakes its caller wherever it waits.
void signal_root(root_signal& signal) noexcept;
// Blocks the calling thread until signal_root.
void await_root(root_signal& signal) noexcept;

// Where runtime::exec keeps a root's outcome: in the calling thread's frame, which outlives the
// task object.
template <class R>
struct root_outcome {
  std::optional<std::conditional_t<std::is_void_v<R>, bool, R>> value;
  std::exception_ptr error;
  root_signal signal;
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
  void root_done() noexcept override { signal_root(outcome.signal); }
  F& f;
  root_outcome<R>& outcome;
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
  int origin = -1;  // worker that sent it to another one's inbox (trace flow arrows)
};

// Join state of one task group. `pending` counts children that may still run concurrently with
// the parent: continuations taken by another worker and queued tasks. A child that ran serially
// before its parent's continuation is never counted.
//
// Tasks queued or routed to another worker by code running on the stack that holds the group
// (its creator, or children the creator runs there) are counted in `unsettled` instead, without
// an atomic (a spawner's read-modify-write would pull the counter's line from the worker that
// just counted a child down), and wait() takes its slow path while any are left: most of those
// queued here are popped and run by the creator's own wait, which just counts them down again.
// Whoever else runs one decrements `pending`, which may go negative; the creator's wait adds what
// is left of `unsettled` to `pending` before it looks at `pending` or parks.
struct group_state {
  static constexpr std::int64_t waiter_flag = std::int64_t{1} << 40;

  group_state() noexcept {}
  group_state(const group_state&) = delete;
  group_state& operator=(const group_state&) = delete;
  ~group_state() {}  // the join destroys `exception`

  std::atomic<std::int64_t> pending{0};
  suspended waiter;
  resume_item* resume;  // how the waiter travels; valid while it is parked
  // The first exception a child threw, alive only while `failed` is set: record_exception builds
  // it and the join moves it out, so that a group that never fails neither builds nor destroys one.
  union {
    std::exception_ptr exception;
  };
  // From here on every field starts zeroed, the narrow ones side by side, so that the compiler
  // builds a group with one store per word: a recursion like fib builds a group on every spawn.
  double work_hint = 0;        // the group's own work hint (total of its children); 0 = none
  std::size_t size_bytes = 0;  // size_hint
  // Learned size hints (options::size_hints): the group's name; while the first iteration is
  // profiled, where its tasks' footprints go; and the group its creator's own work counted
  // towards before this one began. Written when the group begins.
  std::uint64_t learn_key = 0;
  // Up to here, fields read when the group begins or joins; from here on, the ones every spawn
  // reads, 64 bytes or more after `pending`, which children finishing on other workers write: on
  // one cache line with it, each spawn of a loop whose children run elsewhere would wait for the
  // line to come back.
  void* policy_data = nullptr;  // per-group state owned by the scheduler policy
  void* learn_node = nullptr;
  void* learn_outer = nullptr;
  // The group of the task that spawned into this one first (its creator, normally), through
  // which a nested group sees an enclosing one cancelled: null until that first spawn, and after
  // it when that task ran in no group; &no_enclosing_group when a spawn found none otherwise.
  std::atomic<const group_state*> outer{nullptr};
  std::atomic<std::uint32_t> suppressed{0};
  // Children spawned into this group: they number the spawn paths. Counted without an atomic
  // read-modify-write: children that spawn into their parent's group while it goes on may draw
  // the same ordinal, which only names two paths alike.
  std::atomic<std::uint32_t> spawned{0};
  std::uint32_t unsettled = 0;  // tasks counted here, not in pending (see above)
  // `failed` and `begun` are bytes rather than bools so that wait()'s fast path ORs them as they
  // are, without turning each into 0 or 1 first.
  std::atomic<std::uint8_t> failed{0};
  // The policy's group-begin hook has run, or the join is one that group_end or the work/span
  // meter must see (a continuation was taken): wait() must not take its fast path. Atomic only
  // because children may spawn into the group while its creator marks it.
  std::atomic<std::uint8_t> begun{0};
  // The scheduler needs no hook for this group's children (decided at its first spawn, until
  // its wait() returns).
  bool unhooked = false;
  // A scheduler loop took the continuation of one of the group's children (a thief, or the
  // owner after the child suspended), until the join: the waiter then leaves its resumption to
  // the last child's worker rather than watch the join (worker::watch_join), and the plain spawn
  // path queues the group's further children (queue_after_steal in fork_join.cpp). Written by
  // that loop before it resumes the continuation; atomic only because children may spawn into
  // the group while it goes on.
  std::atomic<bool> continuation_taken{false};
  // Cancellation: set by task_group::cancel() or the first exception of a child; children not
  // started yet then never start, and neither do those of groups nested in this one.
  std::atomic<bool> canceling{false};
  // A layer's own group (a taskq frame's) that its tasks' exceptions do not cancel and that no
  // enclosing group's cancellation reaches: that layer keeps its own account of every task.
  bool isolated = false;
  // Something was spawned into the group since it was last joined: its destructor has to look
  // at the rest. Set by every spawn into it (its children's too), cleared by the join.
  std::atomic<bool> unjoined{false};
};

// group_state::outer of a group spawned into first from outside any task.
extern const group_state no_enclosing_group;

// Groups of every runtime that are cancelling now. While it is zero, which is almost always, a
// spawn pays one load for cancellation; otherwise the slow paths below walk the groups.
extern std::atomic<std::uint32_t> canceling_groups;
[[nodiscard]] inline bool any_group_canceling() noexcept {
  return canceling_groups.load(std::memory_order_relaxed) != 0;
}
// Whether `g` or a group it is nested in is cancelling.
[[nodiscard]] bool group_canceling(const group_state& g) noexcept;

// The tests on task_group's fast paths, each one branch over words ORed together rather than a
// branch per word: a recursion with one child per group, like fib, takes both on every spawn.
// wait() has nothing to do: no child runs concurrently, nothing failed, no policy hook began the
// group, and no group anywhere is cancelling.
[[gnu::always_inline]] inline bool trivially_joined(const group_state& g) noexcept {
  return (static_cast<std::uint64_t>(g.pending.load(std::memory_order_acquire)) | g.unsettled |
          static_cast<std::uint64_t>(g.begun.load(std::memory_order_relaxed)) |
          static_cast<std::uint64_t>(g.failed.load(std::memory_order_relaxed)) |
          canceling_groups.load(std::memory_order_relaxed)) == 0;
}
// The destructor may have to join children or end the group's own cancellation (close_group).
[[gnu::always_inline]] inline bool left_open(const group_state& g) noexcept {
  return g.unjoined.load(std::memory_order_relaxed) | g.canceling.load(std::memory_order_relaxed);
}
// Joins what the group still has running or queued, disposes of a child's exception (counted
// suppressed) and ends the group's own cancellation.
void close_group(group_state& g) noexcept;
// Whether a spawn into `g` is to be dropped (counted in the runtime's statistics).
[[nodiscard]] bool drop_canceled_spawn(group_state& g) noexcept;
void cancel_group(group_state& g) noexcept;
// Whether the group of the task running on the calling thread is cancelling.
[[nodiscard]] bool current_group_canceling() noexcept;

// The calling OS thread's worker, or nullptr outside any runtime. Never inlined: a user-level
// thread may resume on another OS thread, so the thread-local lookup must not be cached.
[[gnu::noinline]] worker* current_worker() noexcept;

// Returns false when the scheduler policy routes this child elsewhere; the caller then boxes the
// closure and calls spawn_routed with the same record. A spawn whose hints name a place calls the
// _placed variant: the others inherit their parent's place without reading the record's.
[[nodiscard]] bool spawn_child_first(spawn_record& rec);
[[nodiscard]] bool spawn_child_first_placed(spawn_record& rec);
void publish_continuation(spawn_record* rec) noexcept;
void spawn_parent_first(group_state& g, std::unique_ptr<task_base> task);
void spawn_routed(group_state& g, std::unique_ptr<task_base> task, const spawn_record& rec);
// Joins; returns whether the group, or one it is nested in, was cancelling.
bool wait(group_state& g);
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

// Hint collection for run(...) and task_group(...). Each takes its own hint types and rejects
// the others at compile time: a hint the call would ignore is a mistake in the program.
template <class H, class... Accepted>
inline constexpr bool one_of = (std::is_same_v<H, Accepted> || ...);
template <class H>
inline constexpr bool is_spawn_hint = one_of<H, work_hint, place, parent_first_t, label>;
template <class H>
inline constexpr bool is_group_hint = one_of<H, work_hint, size_hint>;

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
  h.options.place = p.id >= any_place.id ? p.id : bad_place;
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
template <class... H>
inline constexpr bool has_place = (std::is_same_v<H, place> || ...);
template <class... H>
inline constexpr bool has_parent_first = (std::is_same_v<H, parent_first_t> || ...);

template <class Fn, class F>
inline const bool spawn_site_registered = register_spawn_site(&start_closure<Fn, F>,
                                                              type_name<Fn>());

template <class... H>
collected_hints collect(H... hints) noexcept {
  collected_hints h;
  (apply_hint(h, hints), ...);
  return h;
}

// A closure as a queued task, with its spawn hints.
template <class Fn, class F, class... H>
std::unique_ptr<task_base> box(F&& f, H... hints) {
  const collected_hints h = collect(hints...);
  auto task = std::make_unique<closure_task<Fn>>(std::forward<F>(f));
  task->options = h.options;
  task->label = h.label;
  return task;
}

}  // namespace locus::detail
