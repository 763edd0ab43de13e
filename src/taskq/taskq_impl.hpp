// The state behind locus::taskq: the registered functions, the top-level task, the count of live
// tasks, and the per-task frames that put, wait and fence act on.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "locus/taskq.hpp"
#include "sched/group_access.hpp"
#include "taskq/live_count.hpp"

namespace locus::detail {

class taskq_impl;

// A task whose input lives on the heap: one held back by a fence, or put with put_after. Owned by
// a unique_ptr, except while it sits in the wait lists of its predecessors, where the one whose
// end brings `waiting` to zero takes it back.
struct held_task {
  taskq_function fn;
  std::unique_ptr<std::byte[]> input;
  void* out = nullptr;
  std::uint32_t depth = 0;             // of the task's own frame
  std::vector<taskq::dep> after;       // put_after's predecessors, while a fence holds it
  std::shared_ptr<taskq_node> self;    // for tasks that others may depend on
  std::atomic<int> waiting{0};         // unfinished predecessors
  std::atomic<bool> cancelled{false};  // a predecessor threw
};

// HotSLAW's sync node: the end of one task and the wait list of the tasks that depend on it.
struct taskq_node {
  std::mutex lock;
  std::atomic<bool> ended{false};
  bool failed = false;
  std::vector<held_task*> waiters;
};

// Puts held by fences, by epoch: epochs[0] runs once everything put before the first fence has
// ended, epochs[1] after that, and so on; puts go to the last epoch.
struct fence_state {
  std::deque<std::vector<std::unique_ptr<held_task>>> epochs;
};

// One task of a queue (or its top level): the group its puts join, and its fences.
struct taskq_frame {
  taskq_frame(taskq_impl& queue, std::uint32_t nesting) noexcept : q(queue), depth(nesting) {
    group_access::of(tg).isolated = true;
  }
  taskq_impl& q;
  // 0 for the top level, 1 + the putter's depth for a task: how a distributed queue tells big
  // pieces of work from small.
  const std::uint32_t depth;
  task_group tg;
  bool put_any = false;  // since the last join: a fence with nothing before it is a no-op
  std::unique_ptr<fence_state> fences;
  // Tasks this frame put that run on another process (src/dist): the join waits for their
  // outputs as it waits for tg.
  std::atomic<int> remote_pending{0};
};

// How a distributed queue (src/dist) extends a taskq. Plain puts may be offered instead of
// spawned: the remote side keeps them where both this process's workers and thieves from other
// processes can take them, and counts in the frame's remote_pending those that leave. A join
// whose remote_pending is not zero calls help() until it is.
class taskq_remote {
 public:
  virtual ~taskq_remote() = default;
  // Whether the next plain put from frame f, of a task with an output of out_size bytes, should
  // be offered (asked on every put: must be cheap).
  virtual bool wants_offer(const taskq_frame& f, std::size_t out_size) const noexcept = 0;
  // Takes the put (already counted live); copies `in` before returning.
  virtual void offer(taskq_frame& f, const taskq_function& fn, const void* in, void* out) = 0;
  // Runs one task that came from another process, or idles briefly when there is none.
  virtual void help() noexcept = 0;
};

// What taskq keeps per thread: the current task of the calling worker (null outside any taskq
// task), and its slot in the live counts.
struct taskq_thread_state {
  taskq_frame* frame;
  unsigned slot;  // 1 + live_count slot; 0 until the thread first needs one
};

[[gnu::noipa]] taskq_thread_state* taskq_thread_state_noipa() noexcept;

// The calling thread's state, its address computed afresh at every call: a task may resume on
// another worker's thread after a put or a wait, and a compiler may keep a thread-local address
// across calls (the thread pointer is constant to it). Inline where the target allows an
// initial-exec load the compiler cannot merge (as the spawn path reads its worker).
inline taskq_thread_state& this_taskq_thread() noexcept {
#if defined(__x86_64__) && defined(__ELF__)
  taskq_thread_state* t;
  asm volatile(
      "movq locus_tls_taskq@gottpoff(%%rip), %0\n\t"
      "addq %%fs:0, %0"
      : "=r"(t));
  return *t;
#else
  return *taskq_thread_state_noipa();
#endif
}

inline taskq_frame* current_taskq_frame() noexcept {
  return this_taskq_thread().frame;
}
inline void set_current_taskq_frame(taskq_frame* f) noexcept {
  this_taskq_thread().frame = f;
}
inline unsigned this_thread_live_slot() noexcept {
  taskq_thread_state& t = this_taskq_thread();
  if (t.slot == 0) [[unlikely]]
    t.slot = live_count::acquire_slot() + 1;
  return t.slot - 1;
}

class taskq_impl {
 public:
  explicit taskq_impl(std::span<const taskq_function> fns) : functions(fns.begin(), fns.end()) {}

  // The registered entry of fn, or throws std::invalid_argument naming `verb`.
  const taskq_function& find(task_fn fn, const char* verb) const;
  // The frame calls on this queue refer to: the calling task's, or the top level's.
  taskq_frame& frame_of(taskq_frame* current) noexcept {
    return current != nullptr && &current->q == this ? *current : top;
  }

  // A task put by frame f.
  std::unique_ptr<held_task> make_held(const taskq_frame& f, const taskq_function& fn,
                                       const void* in, void* out) const;
  // Starts h in f once its predecessors (`after`) have ended: now, or from the wait lists.
  void submit(taskq_frame& f, std::unique_ptr<held_task> h, std::span<const taskq::dep> after);
  // Ends node n: marks it, and releases (or, when it failed, cancels) the tasks waiting for it,
  // as children of frame f.
  void end(taskq_node& n, bool failed, taskq_frame& f);
  // Joins f's tasks, releasing the epochs its fences hold one after the other; the first
  // exception goes to `error` (later ones are dropped, as a task_group does).
  void join(taskq_frame& f, std::exception_ptr& error) noexcept;

  const std::vector<taskq_function> functions;
  taskq_frame top{*this, 0};
  live_count live;                 // put and not yet ended, held ones included
  taskq_remote* remote = nullptr;  // set by a distributed queue with more than one process

 private:
  void release(taskq_frame& f, std::unique_ptr<held_task> h);
  void launch(taskq_frame& f, std::unique_ptr<held_task> h);
  void cancel(taskq_frame& f, std::unique_ptr<held_task> h);
};

}  // namespace locus::detail
