#include "sched/context.hpp"

#include <algorithm>

#include "sched/gang.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"

namespace locus::detail {

int context::workers() const noexcept {
  return w_.rt.size();
}
const topo::topology& context::topology() const noexcept {
  return w_.rt.topology;
}
int context::distance(int a, int b) const noexcept {
  return w_.rt.distance(a, b);
}
int context::levels() const noexcept {
  return w_.rt.distance_levels();
}
int context::workers_at(int level) const noexcept {
  if (level < 0 || level >= levels()) return 0;
  int count = 0;
  (void)w_.rt.workers_at(w_.index, level, &count);
  return count;
}
std::uint64_t context::now_ns() const noexcept {
  return clock_ns();
}

bool context::searching(int worker, std::uint64_t within_ns) const noexcept {
  const detail::worker& t = w_.rt.at(worker);
  if (t.current_phase.load(std::memory_order_relaxed) != worker::phase::idle) return false;
  if (t.asleep.load(std::memory_order_relaxed)) return false;
  const std::uint64_t beat = t.search_beat_ns.load(std::memory_order_relaxed);
  return clock_ns() < beat + within_ns;
}

bool context::any_worker_contended() const noexcept {
  return w_.rt.any_worker_contended(clock_ns());
}

std::uint32_t context::random() noexcept {
  return w_.next_random();
}
int context::random_below(int n) noexcept {
  return static_cast<int>(w_.next_random() % static_cast<std::uint32_t>(n));
}
int context::random_victim() noexcept {
  const int n = workers();
  if (n < 2) return -1;
  const int v = random_below(n - 1);
  return v >= w_.index ? v + 1 : v;
}
int context::random_victim_at(int level) noexcept {
  if (level < 0 || level >= levels()) return -1;
  int count = 0;
  const int* at = w_.rt.workers_at(w_.index, level, &count);
  return count == 0 ? -1 : at[random_below(count)];
}

task_frame& context::current() noexcept {
  return frame_of(*w_.running);
}
task_frame& context::record_of(work_item& item) noexcept {
  switch (item.kind) {
    case item_kind::continuation:
      return frame_of(*static_cast<ult::stack*>(static_cast<spawn_record&>(item).parent.stack));
    case item_kind::resume:
      return frame_of(*static_cast<ult::stack*>(item.group->waiter.stack));
    case item_kind::gang_member:
      return frame_of(*static_cast<gang_member&>(item).gang);
    case item_kind::task:
      break;
  }
  return frame_of(static_cast<task_base&>(item));
}
void*& context::worker_data() noexcept {
  return w_.policy_data;
}

work_item* context::pop_own() {
  return w_.pop_local();
}
void context::push_own(work_item* item) {
  w_.push_local(item);
}
std::size_t context::own_queue_size() const noexcept {
  return w_.queue().size();
}

steal_result context::steal(int victim, std::size_t max, chunk rule) {
  ready_queue& q = w_.rt.at(victim).queue();
  const steal_result r =
      rule == chunk::of_queued_tasks ? steal_queued_tasks(q, max) : steal_any_items(q, max);
  count_steal(victim, r);
  return r;
}

steal_result context::steal_any_items(ready_queue& q, std::size_t max) {
  constexpr std::size_t batch = 64;
  work_item* taken[batch];
  steal_result r;
  std::size_t want = max < 1 ? 1 : max;
  while (want > 0) {
    steal_status why = steal_status::empty;
    const std::size_t n = q.steal(taken, want < batch ? want : batch, &why);
    if (n == 0) {
      if (r.taken == 0) r.status = why;
      break;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (r.item == nullptr) {
        r.item = taken[i];
      } else {
        w_.push_local(taken[i]);
      }
    }
    r.taken += n;
    r.status = steal_status::taken;
    want -= n;
  }
  return r;
}

// The oldest alone first, to see what it is. Children of its group behind it (a loop's) go to
// this worker's queue newest first, so that it runs them oldest first, towards those the victim
// still holds, and a thief of its own takes the one nearest to those: with two workers each keeps
// one contiguous run of a loop's children, whoever steals from whom. In their order, the children
// this worker ran last, or lost to a thief, were the loop's first, farthest from the victim's (in
// sparselu, the blocks of the next step's panel row). A chunk that spans groups keeps its order:
// its oldest are the outer levels of a recursion, the biggest, which a thief should take first.
steal_result context::steal_queued_tasks(ready_queue& q, std::size_t max) {
  constexpr std::size_t most = queued_children_bound;
  work_item* taken[most];
  steal_result r;
  steal_status why = steal_status::empty;
  if (q.steal(taken, 1, &why) == 0) {
    r.status = why;
    return r;
  }
  r.item = taken[0];
  r.taken = 1;
  r.status = steal_status::taken;
  if (r.item->kind != item_kind::task || max <= 1) return r;
  const std::size_t more = std::min(max - 1, most);
  const std::size_t n = q.steal(taken, more, &why);
  const group_state* loop = r.item->group;
  if (std::all_of(taken, taken + n, [loop](const work_item* x) {
        return x->kind == item_kind::task && x->group == loop;
      })) {
    for (std::size_t i = n; i-- > 0;) w_.push_local(taken[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) w_.push_local(taken[i]);
  }
  r.taken += n;
  return r;
}

work_item* context::take_from(int victim, steal_status* why) {
  work_item* item = nullptr;
  steal_status status = steal_status::empty;
  w_.rt.at(victim).queue().steal(&item, 1, &status);
  if (why != nullptr) *why = status;
  return item;
}

std::size_t context::queue_size(int victim) const noexcept {
  return w_.rt.at(victim).queue().size();
}

bool context::oldest_is_continuation(int victim) const noexcept {
  return w_.rt.at(victim).queue().oldest_marked();
}
std::size_t context::stealable(int victim) const noexcept {
  return w_.rt.at(victim).queue().stealable();
}

void context::count_steal(int victim, const steal_result& r) noexcept {
  const auto level = static_cast<std::size_t>(w_.rt.distance(w_.index, victim));
  if (r.item != nullptr) {
    w_.counters.steals[level].add();
    w_.counters.stolen_items.add(r.taken);
    w_.counters.stolen_items_by_level[level].add(r.taken);
    return;
  }
  w_.counters.failed_steals[level].add();
  if (r.status == steal_status::lost_race) w_.counters.lost_races.add();
}

void context::deliver(int target, work_item* item, lane where) {
  w_.counters.pushes.add();
  w_.rt.deliver(target, item, where);
}

void context::posted(int target) {
  w_.counters.pushes.add();
  w_.rt.wake(target);
}

void context::wake(int target) {
  w_.rt.wake(target);
}

}  // namespace locus::detail
