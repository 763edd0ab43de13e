// The generic worker loop: take work delivered to go first, then local work, then the rest of
// the inbox, then submitted roots, then ask the policy to steal; spin, yield, then sleep when
// there is nothing.
#include "sched/worker.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "sched/fork_join.hpp"
#include "sched/idle_schedule.hpp"
#include "sched/probe.hpp"
#include "sched/runtime_impl.hpp"

namespace locus::detail {

ult::stack* worker::acquire_stack_or_die() noexcept {
  // The scheduler loop has nobody to hand an exception to: a task that cannot get a stack ends
  // the program with the reason rather than a bare std::terminate.
  try {
    return stacks.acquire();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "locus: worker %d cannot start a task: %s\n", index, e.what());
    std::abort();
  }
}

worker::worker(runtime_impl& runtime, int idx, int leaf_index, int distance_levels,
               ult::stack_arena& arena, std::unique_ptr<ready_queue> replaced)
    : rt(runtime),
      index(idx),
      leaf(leaf_index),
      place(runtime.topology.numa_of(leaf_index)),
      plain_spawn(!runtime.hooks.per_spawn() && !runtime.any_queue_replaced() &&
                  !runtime.settings.workspan && runtime.settings.trace.empty()),
      probed(runtime.settings.workspan || !runtime.settings.trace.empty()),
      replaced_queue(std::move(replaced)),
      stacks(arena),
      counters(distance_levels),
      rng_state(0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(idx + 1)) {}

void worker::enter_phase(phase next, std::uint64_t now) noexcept {
  // Time since the last phase change (or since the last statistics reset, whichever is later)
  // belongs to the phase that is ending.
  const std::uint64_t since =
      std::max(phase_since_ns.load(std::memory_order_relaxed), rt.stats_epoch_ns());
  if (now > since) phase_counter(current_phase.load(std::memory_order_relaxed)).add(now - since);
  current_phase.store(next, std::memory_order_relaxed);
  phase_since_ns.store(now, std::memory_order_relaxed);
}

counter& worker::phase_counter(phase p) noexcept {
  switch (p) {
    case phase::busy:
      return counters.busy_ns;
    case phase::idle:
      return counters.idle_ns;
    case phase::overhead:
      break;
  }
  return counters.overhead_ns;
}

// The clock is read three times per dispatched item (at the search round that finds it, when it
// starts running and when it gives control back): idle time begins at the first round of a
// search, and the round that finds work counts as overhead, as does what follows a return.
void worker::main_loop() {
  std::uint64_t found_at = 0;
  while (work_item* item = find_work(found_at)) {
    enter_phase(phase::overhead, found_at);
    dispatch(item);
  }
  enter_phase(phase::overhead, clock_ns());
}

void worker::host(task_base* root, const root_signal& signal) {
  guest_ = &signal;
  enter_phase(phase::overhead, clock_ns());
  dispatch(root);
  main_loop();
  // The worker's own thread sleeps on: its time is idle again.
  enter_phase(phase::idle, clock_ns());
  guest_ = nullptr;
}

// Binds this worker to its place while any worker's PU is contended, to its PU otherwise.
void worker::follow_cpu_contention(std::uint64_t now) noexcept {
  if (!cpu_watch.close_window(now)) return;
  const bool contended = rt.any_worker_contended(now);
  if (contended == cpu_watch.widened) return;
  const bool done = contended ? rt.topology.pin_current_thread_to_place(place)
                              : rt.topology.pin_current_thread(leaf);
  if (!done) return;
  cpu_watch.widened = contended;
  if (contended) counters.cpu_unbinds.add();
}

work_item* worker::find_work(std::uint64_t& found_at) {
  // A seated caller's thread is the user's: it is never bound.
  if (cpu_watch.watching() && guest_ == nullptr) [[unlikely]]
    follow_cpu_contention(clock_ns());
  unsigned rounds = 0;
  bool searching = false;
  while (!rt.stopping() && !guest_done()) {
    if (rt.seat_wanted_of(*this) && guest_ == nullptr) [[unlikely]] {
      rounds = rt.give_up_seat(*this) ? 0 : idle_schedule::rounds_before_sleep - 1;
      continue;
    }
    found_at = clock_ns();
    search_beat_ns.store(found_at, std::memory_order_relaxed);
    if (!searching) {
      enter_phase(phase::idle, found_at);
      searching = true;
    }
    if (work_item* item = look_once()) return item;
    ++rounds;
    const idle_step next = idle_schedule::after(rounds, cpu_watch.widened);
    if (next == idle_step::spin) {
      idle_schedule::spin();
    } else if (next == idle_step::yield) {
      ::sched_yield();
    } else if (rt.sleep(*this)) {
      // A seated caller woke where the OS put it, maybe on another worker's PU.
      if (hosting()) rt.move_caller_to_seat_pu(*this);
      rounds = 0;
    } else {
      // Nobody called: one full search (the policy's steals too), then straight back to sleep.
      // The seat's own thread, spinning instead, would keep the seat from the next caller.
      rounds = idle_schedule::rounds_before_sleep - 1;
    }
  }
  return nullptr;
}

// One round of the search: work delivered to go first, local work, the rest of the inbox,
// submitted roots, the policy's steal.
work_item* worker::look_once() {
  if (work_item* first = mail.take(lane::first)) {
    if (trace != nullptr) {
      if (const int from = origin_of(first); from >= 0) trace->migrated_from(from);
    }
    return first;
  }
  if (work_item* item = pop_local()) {
    if (item->kind == item_kind::continuation) counters.local_resumes.add();
    return item;
  }
  if (work_item* delivered = mail.take(lane::normal)) {
    if (trace != nullptr) {
      if (const int from = origin_of(delivered); from >= 0) trace->migrated_from(from);
    }
    return delivered;
  }
  if (rt.has_submitted()) {
    if (task_base* root = rt.take_submitted()) return root;
  }
  if (work_item* stolen = rt.sched->find_work(ctx)) {
    if (trace != nullptr) {
      // A waiter a policy handed over through its own queues moved; it was not stolen.
      if (const int from = origin_of(stolen); from >= 0) {
        if (stolen->kind == item_kind::resume) {
          trace->migrated_from(from);
        } else {
          trace->steal_from(from);
        }
      }
    }
    return stolen;
  }
  return nullptr;
}

bool worker::loop_has_business() const noexcept {
  return probed || rt.stopping() || guest_done() || rt.seat_wanted_of(*this);
}

work_item* worker::next_after_task() {
  if (loop_has_business()) return nullptr;
  const std::uint64_t now = clock_ns();
  if (cpu_watch.watching() && guest_ == nullptr) [[unlikely]]
    follow_cpu_contention(now);
  // A round as find_work's: searching from its start (context::searching, which a policy asks of
  // a worker it would hand work to), and counted as overhead if it finds work.
  search_beat_ns.store(now, std::memory_order_relaxed);
  enter_phase(phase::idle, now);
  work_item* item = look_once();
  if (item != nullptr) enter_phase(phase::overhead, now);
  return item;
}

work_item* worker::watch_join(const group_state& group) {
  bool watched = false;
  for (unsigned rounds = 1; idle_schedule::after(rounds, false) == idle_step::spin; ++rounds) {
    if (group.pending.load(std::memory_order_acquire) == 0 || cpu_watch.widened ||
        loop_has_business())
      break;
    watched = true;  // the search's time is idle time
    if (work_item* item = next_after_task()) return item;
    idle_schedule::spin();
  }
  if (watched) enter_phase(phase::busy, clock_ns());
  return nullptr;
}

void worker::dispatch(work_item* item) {
  while (item != nullptr) {
    ult::fcontext to = nullptr;
    ult::stack* stk = nullptr;
    work_item* payload = nullptr;
    switch (item->kind) {
      case item_kind::continuation: {
        // The child is running elsewhere or suspended: from now on it runs concurrently with
        // its parent, so the group must wait for it.
        auto* rec = static_cast<spawn_record*>(item);
        rec->group->pending.fetch_add(1, std::memory_order_acq_rel);
        rec->group->continuation_taken.store(true, std::memory_order_relaxed);
        // Its join is no longer trivial: the policy's group_end sees it (the parent, resumed
        // below on this thread, reads the flag when its wait completes).
        if (rt.hooks.group_end && !rec->group->unhooked)
          rec->group->begun.store(true, std::memory_order_relaxed);
        to = static_cast<ult::fcontext>(rec->parent.ctx);
        stk = static_cast<ult::stack*>(rec->parent.stack);
        stk->may_have_moved = true;
        break;
      }
      case item_kind::task:
      case item_kind::gang_member:
        stk = acquire_stack_or_die();
        to = fiber_context(*stk);
        payload = item;
        break;
      case item_kind::resume:
        to = static_cast<ult::fcontext>(item->group->waiter.ctx);
        stk = static_cast<ult::stack*>(item->group->waiter.stack);
        break;
    }
    running = stk;
    // A queued task opens its own slice once it runs (run_task); a context that continues
    // opens one here.
    if (trace != nullptr && payload == nullptr) trace->begin_resume();
    switch_msg msg{switch_msg::what::from_scheduler, this, nullptr, nullptr, payload};
    // Busy time is what runs between switching into a context and getting control back.
    enter_phase(phase::busy, clock_ns());
    const ult::transfer t = ult::switch_to(to, *stk, &msg);
    enter_phase(phase::overhead, clock_ns());
    // Whatever still runs on this track's open slices has suspended or moved to another worker.
    if (trace != nullptr) trace->close_all();
    item = after_return(t);
  }
}

work_item* worker::after_return(const ult::transfer& t) {
  const auto* m = static_cast<const switch_msg*>(t.data);
  if (m->kind == switch_msg::what::finished) {
    work_item* next = m->item;  // what the finished context found (next_after_task), if anything
    m->stack->parked = t.fctx;
    stacks.release(m->stack);
    return next;
  }
  if (m->kind != switch_msg::what::parked && m->kind != switch_msg::what::migrating) {
    return nullptr;
  }
  group_state* g = m->group;
  g->waiter = {t.fctx, m->stack};
  resume_item* resume = g->resume;
  if (m->kind == switch_msg::what::migrating) {
    // A policy that routes places the moving task itself (its own mailbox, say), or keeps it
    // here; otherwise the task goes to the worker group_end named, before that worker's queue.
    resume->origin = index;
    if (rt.hooks.route) return rt.sched->route(ctx, *resume) ? nullptr : resume;
    rt.deliver(m->target, resume, lane::first);
    return nullptr;
  }
  work_item* found = m->item;  // what the waiter's watch found (watch_join), if anything
  if (g->pending.fetch_add(group_state::waiter_flag, std::memory_order_acq_rel) == 0) {
    // Every child finished while the waiter was switching out: resume it right away, or right
    // after what its watch found.
    if (found == nullptr) return resume;
    rt.deliver(index, resume, lane::first);
  }
  return found;
}

}  // namespace locus::detail
