// Dependences between taskq tasks (HotSLAW §3.1): a task that waits for others sits in their
// nodes' wait lists with a count of unfinished predecessors; the predecessor whose end brings the
// count to zero releases it as its own child, so the waits that join the predecessors join it.
#include <utility>

#include "taskq/taskq_impl.hpp"

namespace locus::detail {

void taskq_impl::submit(taskq_frame& f, std::unique_ptr<held_task> h,
                        std::span<const taskq::dep> after) {
  // One count more than there are predecessors, dropped at the end, so that no predecessor
  // ending meanwhile releases the task before every wait list has it.
  h->waiting.store(static_cast<int>(after.size()) + 1, std::memory_order_relaxed);
  held_task* waiting = h.release();
  for (const taskq::dep& d : after) {
    taskq_node* n = d.node_.get();
    if (n != nullptr) {
      const std::lock_guard hold(n->lock);
      if (!n->ended.load(std::memory_order_relaxed)) {
        n->waiters.push_back(waiting);
        continue;
      }
      if (n->failed) waiting->cancelled.store(true, std::memory_order_relaxed);
    }
    waiting->waiting.fetch_sub(1, std::memory_order_acq_rel);  // never the last: ours is left
  }
  if (waiting->waiting.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    release(f, std::unique_ptr<held_task>(waiting));
  }
}

void taskq_impl::end(taskq_node& n, bool failed, taskq_frame& f) {
  std::vector<held_task*> waiters;
  {
    const std::lock_guard hold(n.lock);
    n.failed = failed;
    n.ended.store(true, std::memory_order_release);
    waiters.swap(n.waiters);
  }
  for (held_task* w : waiters) {
    if (failed) w->cancelled.store(true, std::memory_order_relaxed);
    if (w->waiting.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      release(f, std::unique_ptr<held_task>(w));
    }
  }
}

void taskq_impl::release(taskq_frame& f, std::unique_ptr<held_task> h) {
  if (h->cancelled.load(std::memory_order_relaxed)) {
    cancel(f, std::move(h));
  } else {
    launch(f, std::move(h));
  }
}

void taskq_impl::cancel(taskq_frame& f, std::unique_ptr<held_task> h) {
  if (h->self) end(*h->self, true, f);
  live.end(this_thread_live_slot());
}

}  // namespace locus::detail
