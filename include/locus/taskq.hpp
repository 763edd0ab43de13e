// locus::taskq: HotSLAW's task-queue API (Min, Iancu, Yelick, PGAS 2011, §2.1 and §3.1) on
// locus's spawn machinery.
//
//   void fib_task(const int& n, long& out) {
//     if (n < cutoff) { out = fib_serial(n); return; }
//     long x, y;
//     q.put(fib_task, n - 1, x);   // the input is copied into the task: a temporary is fine
//     q.put(fib_task, n - 2, y);
//     q.wait();                    // joins the tasks this task put, helping meanwhile
//     out = x + y;
//   }
//   locus::taskq q{locus::task_function(fib_task)};
//   long r;
//   locus::root_exec([&] { q.put(fib_task, 30, r); q.wait(); });
//
// A queue is created over the task functions it may run, each with its input and output size
// (HotSLAW's taskq_all_alloc). A task function is the seed's `void f(void* in, void* out)`, or,
// in the typed layer, `void f(const In&, Out&)` or `void f(const In&)` with trivially copyable
// In and Out (checked at compile time).
//
// Verbs (the seed's names):
//   put(f, in, out)  copies the input into the task (the caller may reuse its buffer at once) and
//                    hands the task to the scheduler, which runs it now (work-first: the caller's
//                    continuation becomes stealable) or queues it (help-first), as the selected
//                    locus scheduler decides. The task writes its output through `out`, which
//                    must stay valid until the wait that joins the task; the output is defined
//                    once that wait returns.
//   wait()           joins every task the calling task put (or, outside any task of this queue,
//                    that the caller put at the top level), running and stealing work meanwhile;
//                    rethrows the first exception one of them threw (oneTBB's task_group::wait).
//                    A task also joins its own tasks when it returns, as Cilk's implicit sync.
//   fence()          non-blocking: tasks the caller puts after it start only after every task it
//                    put before it has ended. A fence with nothing before it is a no-op. Tasks
//                    held by a fence are released by the caller's next wait (or its end).
//   execute()        runs one task the caller put that is still queued on this worker; returns
//                    whether it ran one.
//   steal()          asks the scheduler for work from other workers and runs it here when it is a
//                    queued task; returns whether it ran one. (A stolen continuation is left on
//                    this worker's queue, where the scheduler resumes it when the caller waits.)
//   all_empty()      collective emptiness: no task of this queue anywhere, neither queued, running
//                    nor held (true in the seed's SPMD loop once all work is done).
//
// Dependences (§3.1): put_after(after, f, in, out) puts a task that starts only after the tasks
// named by `after` have ended, and sees their outputs; it is held in a wait list until its count
// of unfinished predecessors reaches zero, then released by the predecessor that ended last (as
// that task's child: the waits that join the predecessors join it too). It returns a dep that
// later tasks may depend on; put_after({}, ...) puts a task that others can depend on. A task
// whose predecessor threw is not run (the exception reaches the wait that joins the predecessor),
// and neither are the tasks that depend on it.
//
// Calls made from a taskq task refer to that task; calls made anywhere else (a root, a thread
// that is not a worker) refer to the queue's top level, which one thread at a time may use. Which
// task is calling is kept per worker and renewed at every taskq call that may switch tasks; a
// taskq task that blocks in something else (a task_group::wait, a parallel_for) stays current on
// its worker meanwhile, so work that worker picks up then, unless it is a taskq task itself,
// must not call this queue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <type_traits>

#include "locus/runtime.hpp"
#include "locus/task_group.hpp"

namespace locus {

// A task function in the seed's form: `in` is the task's own copy of its input, `out` the output
// buffer given to put.
using task_fn = void (*)(void* in, void* out);

namespace detail {

class taskq_impl;
struct taskq_node;
struct taskq_frame;
using taskq_thunk = void (*)(task_fn fn, void* in, void* out);

// A typed task function travels as a task_fn and is cast back to its own type before any call
// (a round trip the standard allows); the cast goes through void(*)() to say it is meant.
template <class F>
task_fn erase_fn(F* fn) noexcept {
  return reinterpret_cast<task_fn>(reinterpret_cast<void (*)()>(fn));
}
template <class F>
F* restore_fn(task_fn fn) noexcept {
  return reinterpret_cast<F*>(reinterpret_cast<void (*)()>(fn));
}

template <class T>
inline constexpr bool taskq_value = std::is_trivially_copyable_v<T> && !std::is_reference_v<T> &&
                                    alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__;

template <class In, class Out>
void typed_thunk(task_fn fn, void* in, void* out) {
  restore_fn<void(const In&, Out&)>(fn)(*std::launder(static_cast<const In*>(in)),
                                        *static_cast<Out*>(out));
}
template <class In>
void typed_thunk_no_output(task_fn fn, void* in, void* /*out*/) {
  restore_fn<void(const In&)>(fn)(*std::launder(static_cast<const In*>(in)));
}

// Runs `call(arg)` as the body of one task of `q`: sets it as the current task, joins what it
// puts, ends `self` (a dependence node, or null) and releases what waited for it. `depth`: the
// putter's depth + 1.
void taskq_run(taskq_impl& q, void (*call)(void*), void* arg, taskq_node* self,
               std::uint32_t depth);
// The same for a plain put of `putter` (alive until it has joined the task): the queue and the
// depth come from it, so that a put's closure carries one pointer for both.
void taskq_run_put(const taskq_frame& putter, void (*call)(void*), void* arg);

// One typed put on the fast path: the caller's current task, or the top level, its task group
// (null when a fence holds the put back, or the function is not registered) and, on destruction,
// the current task restored on whatever worker the caller then runs on.
class taskq_put_site {
 public:
  taskq_put_site(taskq_impl& q, task_fn fn, taskq_thunk thunk, std::size_t in_size,
                 std::size_t out_size);
  taskq_put_site(const taskq_put_site&) = delete;
  taskq_put_site& operator=(const taskq_put_site&) = delete;
  ~taskq_put_site();
  task_group* group() const noexcept { return group_; }
  const taskq_frame& frame() const noexcept { return *frame_; }  // the putter's
  // The slow path: a copy of the input on the heap, held back by a fence.
  void defer(const void* in, void* out);

 private:
  taskq_impl& q_;
  taskq_frame* frame_;
  void* previous_;
  task_group* group_;
  task_fn fn_;
};

}  // namespace detail

// A registered task function (HotSLAW's triplet of function, input size and output size).
struct taskq_function {
  task_fn fn = nullptr;
  detail::taskq_thunk thunk = nullptr;  // the typed layer's call, null for a task_fn
  std::size_t in_size = 0;
  std::size_t out_size = 0;
};

inline taskq_function task_function(task_fn fn, std::size_t in_size, std::size_t out_size) {
  return {fn, nullptr, in_size, out_size};
}

template <class In, class Out>
taskq_function task_function(void (*fn)(const In&, Out&)) {
  static_assert(detail::taskq_value<In> && detail::taskq_value<Out>,
                "locus::taskq: task input and output types must be trivially copyable (copied "
                "bytewise into the task) and no more aligned than operator new's default");
  return {detail::erase_fn(fn), &detail::typed_thunk<In, Out>, sizeof(In), sizeof(Out)};
}

template <class In>
taskq_function task_function(void (*fn)(const In&)) {
  static_assert(detail::taskq_value<In>,
                "locus::taskq: task input and output types must be trivially copyable (copied "
                "bytewise into the task) and no more aligned than operator new's default");
  return {detail::erase_fn(fn), &detail::typed_thunk_no_output<In>, sizeof(In), 0};
}

class taskq {
 public:
  // A task later puts may depend on (put_after). Copyable; done() tells whether it has ended.
  class dep {
   public:
    dep() noexcept = default;
    bool done() const noexcept;
    explicit operator bool() const noexcept { return node_ != nullptr; }

   private:
    friend class taskq;
    friend class detail::taskq_impl;
    std::shared_ptr<detail::taskq_node> node_;
  };

  // The functions this queue may run. put() of any other function throws std::invalid_argument.
  explicit taskq(std::initializer_list<taskq_function> functions);
  explicit taskq(std::span<const taskq_function> functions);
  taskq(const taskq&) = delete;
  taskq& operator=(const taskq&) = delete;
  // Joins the top-level tasks still running; an exception pending then is dropped (a destructor
  // must not throw), as task_group's destructor does.
  ~taskq();

  void put(task_fn fn, const void* in, void* out);

  template <class In, class Out>
  void put(void (*fn)(const In&, Out&), const std::type_identity_t<In>& in, Out& out) {
    static_assert(detail::taskq_value<In> && detail::taskq_value<Out>,
                  "locus::taskq: task input and output types must be trivially copyable (copied "
                  "bytewise into the task) and no more aligned than operator new's default");
    detail::taskq_put_site site(*impl_, detail::erase_fn(fn), &detail::typed_thunk<In, Out>,
                                sizeof(In), sizeof(Out));
    if (task_group* tg = site.group()) [[likely]] {
      tg->run([fn, in, o = &out, f = &site.frame()]() mutable {
        struct call {
          void (*fn)(const In&, Out&);
          const In* in;
          Out* out;
          static void run(void* self) {
            auto* c = static_cast<call*>(self);
            c->fn(*c->in, *c->out);
          }
        } c{fn, &in, o};
        detail::taskq_run_put(*f, &call::run, &c);
      });
      return;
    }
    site.defer(&in, &out);
  }

  template <class In>
  void put(void (*fn)(const In&), const std::type_identity_t<In>& in) {
    static_assert(detail::taskq_value<In>,
                  "locus::taskq: task input and output types must be trivially copyable (copied "
                  "bytewise into the task) and no more aligned than operator new's default");
    detail::taskq_put_site site(*impl_, detail::erase_fn(fn), &detail::typed_thunk_no_output<In>,
                                sizeof(In), 0);
    if (task_group* tg = site.group()) [[likely]] {
      tg->run([fn, in, f = &site.frame()]() mutable {
        struct call {
          void (*fn)(const In&);
          const In* in;
          static void run(void* self) {
            auto* c = static_cast<call*>(self);
            c->fn(*c->in);
          }
        } c{fn, &in};
        detail::taskq_run_put(*f, &call::run, &c);
      });
      return;
    }
    site.defer(&in, nullptr);
  }

  dep put_after(std::span<const dep> after, task_fn fn, const void* in, void* out);
  dep put_after(std::initializer_list<dep> after, task_fn fn, const void* in, void* out) {
    return put_after(std::span<const dep>(after.begin(), after.size()), fn, in, out);
  }
  template <class In, class Out>
  dep put_after(std::initializer_list<dep> after, void (*fn)(const In&, Out&),
                const std::type_identity_t<In>& in, Out& out) {
    static_assert(detail::taskq_value<In> && detail::taskq_value<Out>,
                  "locus::taskq: task input and output types must be trivially copyable (copied "
                  "bytewise into the task) and no more aligned than operator new's default");
    return put_after(std::span<const dep>(after.begin(), after.size()), detail::erase_fn(fn), &in,
                     &out);
  }
  template <class In>
  dep put_after(std::initializer_list<dep> after, void (*fn)(const In&),
                const std::type_identity_t<In>& in) {
    static_assert(detail::taskq_value<In>,
                  "locus::taskq: task input and output types must be trivially copyable (copied "
                  "bytewise into the task) and no more aligned than operator new's default");
    return put_after(std::span<const dep>(after.begin(), after.size()), detail::erase_fn(fn), &in,
                     nullptr);
  }

  bool execute();
  bool steal();
  void wait();
  void fence();
  bool all_empty() const noexcept;

 private:
  friend class dist_taskq;  // stitches per-process queues into one (locus/dist_taskq.hpp)
  std::unique_ptr<detail::taskq_impl> impl_;
};

}  // namespace locus
