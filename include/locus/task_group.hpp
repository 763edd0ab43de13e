// locus::task_group: fork-join with continuation stealing.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include "locus/detail/spawn.hpp"
#include "locus/hints.hpp"

namespace locus {

namespace detail {
struct group_access;
}

// What wait() found: every child ran (or was joined), or the group was cancelled (cancel(), an
// exception, or an enclosing group's cancellation) and children that had not started did not run.
enum class task_group_status { complete, canceled };

// A set of child tasks joined by wait(). Children run child-first by default: run() starts the
// child at once on a fresh user-level thread and the caller's continuation becomes stealable.
//
// Exceptions: the first exception thrown by a child (in completion order) is rethrown by wait();
// later ones are destroyed and counted in suppressed_exceptions() and in the runtime statistics.
// The destructor waits for unfinished children; an exception still pending then is dropped and
// counted, because a destructor must not throw. A group can be reused after wait() returns.
//
// Cancellation (as oneTBB's task_group): after cancel(), or once a child has thrown, children
// that have not started never run: run() drops them, and queued ones are skipped when taken.
// Running children go on; they can poll is_canceling() or locus::is_current_task_group_canceling()
// and return early. A group created by a task of a cancelled group (at any depth) is cancelled
// with it. wait() joins as usual and returns task_group_status::canceled; the group is then
// no longer cancelled and can be reused.
//
// run() and wait() may also be called from a thread that is not a locus worker: the children are
// then submitted to the default runtime and wait() blocks the calling thread.
class task_group {
 public:
  task_group() noexcept = default;
  // Group hints: work_hint (total work of the children) and size_hint (working set in bytes).
  template <class... H>
  explicit task_group(H... hints) noexcept {
    static_assert((detail::is_group_hint<H> && ...),
                  "task_group(...) takes locus::work_hint and locus::size_hint; per-task hints "
                  "(place, parent_first, label) go to run()");
    const auto h = detail::collect(hints...);
    state_.work_hint = h.options.work;
    state_.size_bytes = h.size_bytes;
  }
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;
  ~task_group() {
    if (detail::left_open(state_)) [[unlikely]]
      detail::close_group(state_);
  }

  // Per-task hints: work_hint, place, parent_first, label.
  template <class F, class... H>
  void run(F&& f, H... hints) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&>, "task_group::run needs a callable taking no arguments");
    static_assert((detail::is_spawn_hint<H> && ...),
                  "task_group::run takes locus::work_hint, locus::place, locus::parent_first and "
                  "locus::label; size_hint describes a whole group: pass it to task_group(...)");
    if (detail::any_group_canceling() && detail::drop_canceled_spawn(state_)) return;
    if constexpr (detail::has_parent_first<H...>) {
      detail::spawn_parent_first(state_, detail::box<Fn>(std::forward<F>(f), hints...));
      return;
    }
    detail::spawn_record rec;
    rec.group = &state_;
    // Without hints the record's own defaults stand: copying a default-built options block in
    // would read it back as one 16-byte load over two 8-byte stores, a store-forwarding stall
    // that cost a quarter of an unhinted spawn.
    if constexpr (sizeof...(H) > 0) rec.options = detail::collect(hints...).options;
    rec.start = &detail::start_closure<Fn, F&&>;
    // Names this spawn site in traces: registered at static initialisation, no code here.
    (void)&detail::spawn_site_registered<Fn, F&&>;
    if constexpr (detail::has_label<H...>) detail::set_spawn_label(detail::collect(hints...).label);
    rec.closure = const_cast<void*>(static_cast<const volatile void*>(std::addressof(f)));
    if constexpr (detail::has_place<H...>) {
      if (detail::spawn_child_first_placed(rec)) return;
    } else {
      if (detail::spawn_child_first(rec)) return;
    }
    // The hints are collected again here rather than kept from above: kept, they would be
    // stored on every spawn for this rare path.
    detail::spawn_routed(state_, detail::box<Fn>(std::forward<F>(f), hints...), rec);
  }

  // Joins all children; rethrows the first exception one of them threw.
  task_group_status wait() {
    // Fast path: no child ran concurrently (or all are done), nothing failed, no policy hook,
    // no cancellation anywhere.
    if (detail::trivially_joined(state_)) {
      // A reused group decides about hooks again, by its creator's record then. Tested before
      // storing: an unconditional store cost ws 1.3% on fib without a cutoff.
      if (state_.unhooked) state_.unhooked = false;
      state_.unjoined.store(false, std::memory_order_relaxed);
      return task_group_status::complete;
    }
    return detail::wait(state_) ? task_group_status::canceled : task_group_status::complete;
  }

  // Children not started yet will not run (see above). Callable from any thread, any number of
  // times; a no-op once the group is cancelling.
  void cancel() noexcept { detail::cancel_group(state_); }
  // Whether this group, or a group it is nested in, is cancelling.
  bool is_canceling() const noexcept {
    return detail::any_group_canceling() && detail::group_canceling(state_);
  }

  unsigned suppressed_exceptions() const noexcept {
    return state_.suppressed.load(std::memory_order_relaxed);
  }

 private:
  friend struct detail::group_access;  // layers built on task_group (taskq) reach its join state
  detail::group_state state_;
};

// Whether the task group of the running task (the group it was spawned into), or one that group
// is nested in, is cancelling: a long-running child polls this to return early. False outside
// a task.
inline bool is_current_task_group_canceling() noexcept {
  return detail::any_group_canceling() && detail::current_group_canceling();
}

}  // namespace locus
