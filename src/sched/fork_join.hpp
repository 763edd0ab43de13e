// Entry points of user-level threads and the completion path, shared by the worker loop.
#pragma once

#include <utility>
#include "locus/detail/spawn.hpp"

#include "sched/worker.hpp"
#include "ult/context.hpp"

namespace locus::detail {

// Entry of every queued-task context: runs queued tasks one after the other, parking in the
// stack pool in between.
void fiber_main(ult::transfer t);

// The context to switch to for running a new job on `s`: its parked context, or a fresh one.
inline ult::fcontext fiber_context(ult::stack& s) noexcept {
  if (s.parked != nullptr) return static_cast<ult::fcontext>(std::exchange(s.parked, nullptr));
  return ult::make_context(s, &fiber_main);
}

// Handles the message of the context that switched to us; returns the worker we now run on.
inline worker* resumed(const ult::transfer& t) noexcept {
  const auto* m = static_cast<const switch_msg*>(t.data);
  worker* w = m->w;
  if (m->kind == switch_msg::what::from_scheduler) {
    w->sched_ctx = t.fctx;
  } else if (m->kind == switch_msg::what::finished) {
    m->stack->parked = t.fctx;
    w->stacks.release(m->stack);
  }
  return w;
}

// A task that ran concurrently with its parent (or a root) is done: account for it in its
// group, resume the waiter if it was the last child, else return to the scheduler. Returns
// when this context is given its next job.
ult::transfer complete_concurrent_child(worker* w, group_state* g, ult::stack* me) noexcept;

// For layers that let a task help by hand (taskq's execute and steal). Runs the newest item of
// the calling worker's queue if it is a task queued into `g`; returns whether it ran one.
bool run_own_queued_task(group_state& g);
// Asks the policy for work as an idle worker would and runs it here when it is a queued task;
// anything else is left on this worker's queue. Returns whether it ran a task.
bool steal_and_run_task();

}  // namespace locus::detail
