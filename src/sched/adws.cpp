// adws: Almost Deterministic Work Stealing, single level (seed 000: Shiina & Taura, "Improving
// Cache Utilization of Nested Parallel Programs by Almost Deterministic Work Stealing", IEEE
// TPDS 33(12), 2022; §3.1, Fig. 5-8: deterministic task mapping; §3.2, Fig. 10-11: stealing
// within the topmost dominant task group).
//
// Every task carries a distribution range [lo, hi) over the workers; the root's is [0, P). A
// task group divides its task's range among its children in spawn order in proportion to
// their work hints (Fig. 7, RUN): a child of work w, spawned while the group has W work left
// (w included), gets the top w / W of what is left of the range (the paper draws worker 0 on
// the right, and children left to right). A task belongs to worker floor(lo) (its owner). In a
// cross-worker group (floor(lo) != floor(hi) for the task that created it), a child owned by
// another worker migrates there, into that worker's migration queue for the child's depth; every
// other child runs at once, child-first. A cross-worker task's continuation, once its children are
// done, resumes on its owner (Fig. 7, WAIT). Depth counts cross-worker groups from the root (§3.2):
// a cross-worker group's children are one deeper than the task that created it.
//
// Stealing (§3.2): a cross-worker group becomes dominant once one of its cross-worker children
// has finished; it dominates the workers floor(x) <= i < floor(y) of its range [x, y). A worker
// steals only within the topmost (shallowest) dominant group that dominates it, from victims
// floor(x)..floor(y): migration queues (not of floor(x)) deepest first down to the group's
// depth, newest first, then the victim's deque (not of floor(y)), oldest first. An undominated
// worker does not steal, so migrated work is not taken too early. LOCUS_ADWS_STEAL=0 turns
// stealing off to test the deterministic plan.
//
// Choices where the paper leaves details open (tested in tests/adws_test.cpp):
// - Ranges are half-open, so [i, i + 1) lies on worker i alone: a task is cross-worker when its
//   range meets the unit intervals of more than one worker (the paper's floor(x) != floor(y)
//   would call [i, i + 1) cross-worker), and the victims of a steal range [x, y) are
//   floor(x) .. ceil(y) - 1.
// - No group work hint (or 0): the paper's 1 : 1, as a binary fork: the first child gets the
//   top half, the second child all the rest (or, if there is none, the creator's inline work
//   keeps it), and further children an empty range at the creator's start (they run on the
//   creator's owner, and stealing spreads them once the group is dominant). A child without a work
//   hint counts as work 1. Hints that overdraw the group's total leave later children an empty
//   range at the boundary.
// - Work a task does inline after its run() calls gets the rest of the range, which starts at
//   the task's own worker (nested groups there divide it): "run(left); right(); wait()" maps
//   like two spawned children.
// - The root runs on worker 0, the owner of [0, P): only worker 0 takes submitted roots.
// - One primary queue per worker, the core's deque, instead of one per depth: a thief takes
//   its oldest item without checking that item's depth (migration queues are by depth).
// - A continuation that was stolen and whose children were all done before wait() goes on
//   where it is; one that waited is resumed on its owner.
// - A continuation sent back to its owner goes through the owner's single-entry mailbox;
//   when that is full it waits in the owner's queue of returned continuations, which the
//   owner checks before its migration queues.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "config/config.hpp"
#include "sched/policy.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"

namespace locus::detail {
namespace {

// The plan of one task group (group_state::policy_data).
struct group_plan {
  double x = 0, y = 0;    // the group's whole range (its creator's when it began)
  double lo = 0, hi = 0;  // what is left of the range to divide among the next children
  double remaining = 0;   // work hint left
  bool hinted = false;    // the group has a work hint (else it is split 1 : 1)
  int spawned = 0;
  int depth = 0;          // of the children
  bool cross = false;     // created by a cross-worker task
  int creator_owner = 0;  // owner of the task that created the group
  task_state creator{};   // that task's state, restored when the group ends
  std::uint64_t id = 0;   // names the group in the workers' steal ranges
  std::atomic<bool> dominant{false};
};

// The topmost dominant group dominating a worker (Fig. 10), by value: groups end while
// workers still look at their ranges.
struct steal_range {
  double x = 0, y = 0;
  int depth = 0;
  std::uint64_t group = 0;
  bool valid = false;
};

// Group plans a worker has at hand (its own thread only).
struct plan_cache {
  std::vector<std::unique_ptr<group_plan>> owned;  // plans allocated here, wherever they are
  std::vector<group_plan*> free;
  std::uint64_t next_id = 0;
};

// Migration queues of one worker, one FIFO per depth, and the continuations sent back to it.
struct worker_queues {
  std::mutex lock;
  std::vector<std::deque<work_item*>> by_depth;
  std::deque<work_item*> returned;
  steal_range range;  // under `lock`
  // Items in `by_depth` and `returned`, readable without the lock (a worker about to sleep).
  std::atomic<int> queued{0};
};

class adws_policy final : public policy {
 public:
  std::string_view name() const noexcept override { return "adws"; }
  policy_hooks hooks() const noexcept override {
    return {.spawn = true, .group = true, .ready = true};
  }

  void attach(runtime_impl& rt) override {
    if (const char* v = std::getenv("LOCUS_ADWS_STEAL")) {
      steal_ = config::parse_bool("LOCUS_ADWS_STEAL", v);
    }
    workers_ = rt.size();
    queues_.clear();
    caches_.clear();
    for (int i = 0; i < workers_; ++i) {
      queues_.push_back(std::make_unique<worker_queues>());
      caches_.push_back(std::make_unique<plan_cache>());
    }
  }

  bool takes_roots(const worker& w) const noexcept override { return w.index == 0; }

  bool has_work(const worker& w) const noexcept override {
    return queues_[static_cast<std::size_t>(w.index)]->queued.load(std::memory_order_seq_cst) > 0;
  }

  void group_begin(worker& w, group_state& g) override {
    task_state& cur = w.running->task;
    if (!cur.set) cur = {0.0, static_cast<double>(workers_), 0, true, nullptr};  // a root
    group_plan* plan = take_plan(w);
    plan->lo = cur.lo;
    plan->hi = cur.hi;
    plan->hinted = g.hints.work > 0;
    plan->remaining = g.hints.work;
    plan->cross = crosses_workers(cur.lo, cur.hi);
    plan->depth = cur.depth + (plan->cross ? 1 : 0);
    plan->creator_owner = owner(cur.lo);
    plan->creator = cur;
    plan->x = cur.lo;
    plan->y = cur.hi;
    g.policy_data = plan;
  }

  void group_end(worker& w, group_state& g) override {
    auto* plan = static_cast<group_plan*>(g.policy_data);
    g.policy_data = nullptr;
    w.running->task = plan->creator;
    if (plan->dominant.load(std::memory_order_acquire)) {
      // Its workers are no longer dominated by it; an enclosing group takes over once it
      // becomes dominant in turn.
      for_each_dominated(*plan, [&](worker_queues& q) {
        if (q.range.valid && q.range.group == plan->id) q.range.valid = false;
      });
    }
    caches_[static_cast<std::size_t>(w.index)]->free.push_back(plan);
  }

  spawn_decision on_spawn(worker& w, work_item& child) override {
    auto& plan = *static_cast<group_plan*>(child.group->policy_data);
    const double work = child.options.work > 0 ? child.options.work : 1.0;
    // Without a group hint: 1 : 1 between the first child and the rest, which then goes to the
    // next child (or stays with the creator's inline work); later children get nothing.
    double share = plan.spawned == 0 ? 0.5 : 1.0;
    ++plan.spawned;
    if (plan.hinted) {
      share = plan.remaining > 0 ? std::min(1.0, work / plan.remaining) : 0.0;
      plan.remaining = std::max(0.0, plan.remaining - work);
    }
    // Children take the range from its top down (the figures' left to right), so the ones that
    // migrate to other workers go first, then the cross-worker child the creator runs itself,
    // and the creator's own part, where its inline work and later children run, comes last.
    const double hi = plan.hi;
    const double lo = share >= 1.0 ? plan.lo : hi - (hi - plan.lo) * share;
    plan.hi = lo;
    child.state() = {lo, hi, plan.depth, true, &plan};
    // The creator goes on with the rest of the range (inline work, nested groups).
    w.running->task = {plan.lo, plan.hi, plan.depth, true, w.running->task.group};
    const int target = owner(lo);
    if (plan.cross && target != w.index) return {spawn_decision::action::send, target};
    return {};
  }

  void task_done(worker& w, const task_state& t) override {
    (void)w;
    if (!t.set || t.group == nullptr || !crosses_workers(t.lo, t.hi)) return;
    // A cross-worker child finished: its group is dominant from now on.
    auto& plan = *static_cast<group_plan*>(t.group);
    if (plan.dominant.exchange(true, std::memory_order_acq_rel)) return;
    for_each_dominated(plan, [&](worker_queues& q) {
      if (!q.range.valid || q.range.depth > plan.depth) {
        q.range = {plan.x, plan.y, plan.depth, plan.id, true};
      }
    });
  }

  int on_ready(worker& w, group_state& g) override {
    const auto& plan = *static_cast<const group_plan*>(g.policy_data);
    return plan.cross ? plan.creator_owner : w.index;
  }

  bool deliver(worker& from, int target, work_item* item) override {
    if (item->kind == item_kind::resume) {
      if (policy::deliver(from, target, item)) return true;
      worker_queues& q = *queues_[static_cast<std::size_t>(target)];
      const std::lock_guard hold(q.lock);
      q.returned.push_back(item);
      q.queued.fetch_add(1, std::memory_order_seq_cst);
      return true;
    }
    worker_queues& q = *queues_[static_cast<std::size_t>(target)];
    const auto depth = static_cast<std::size_t>(std::max(0, item->state().depth));
    const std::lock_guard hold(q.lock);
    if (q.by_depth.size() <= depth) q.by_depth.resize(depth + 1);
    q.by_depth[depth].push_back(item);
    q.queued.fetch_add(1, std::memory_order_seq_cst);
    return true;
  }

  work_item* find_work(worker& w) override {
    worker_queues& q = *queues_[static_cast<std::size_t>(w.index)];
    steal_range range;
    {
      const std::lock_guard hold(q.lock);
      if (!q.returned.empty()) return take_front(q, q.returned);
      // Fig. 11, lines 36-38: migration queues from the top (depth 0) down, oldest first.
      for (auto& fifo : q.by_depth) {
        if (!fifo.empty()) return take_front(q, fifo);
      }
      range = q.range;
    }
    if (!steal_ || !range.valid) return nullptr;  // Fig. 11, line 40
    return steal_within(w, range);
  }

 private:
  // A group plan from the worker's cache (a group ends on whichever worker resumes its
  // creator, and returns the plan to that worker's cache: no locks, no allocation per group).
  group_plan* take_plan(worker& w) {
    plan_cache& c = *caches_[static_cast<std::size_t>(w.index)];
    group_plan* plan = nullptr;
    if (!c.free.empty()) {
      plan = c.free.back();
      c.free.pop_back();
    } else {
      c.owned.push_back(std::make_unique<group_plan>());
      plan = c.owned.back().get();
    }
    plan->spawned = 0;
    plan->dominant.store(false, std::memory_order_relaxed);
    plan->id = ++c.next_id * static_cast<std::uint64_t>(workers_) +
               static_cast<std::uint64_t>(w.index);  // unique without a shared counter
    return plan;
  }

  // Fig. 11, lines 41-50.
  work_item* steal_within(worker& w, const steal_range& range) {
    const int first = owner(range.x);
    const int last = last_worker(range.y);
    if (last <= first) return nullptr;
    int victim =
        first + static_cast<int>(w.next_random() % static_cast<std::uint32_t>(last - first));
    if (victim >= w.index) ++victim;  // a choice among first..last except w itself
    if (victim > last) return nullptr;
    const auto level = static_cast<std::size_t>(w.rt.distance(w.index, victim));
    if (victim != first) {
      worker_queues& vq = *queues_[static_cast<std::size_t>(victim)];
      const std::lock_guard hold(vq.lock);
      for (int d = static_cast<int>(vq.by_depth.size()) - 1; d >= range.depth; --d) {
        auto& fifo = vq.by_depth[static_cast<std::size_t>(d)];
        if (!fifo.empty()) {
          work_item* item = fifo.back();
          fifo.pop_back();
          vq.queued.fetch_sub(1, std::memory_order_relaxed);
          w.counters.steals[level].add();
          return item;
        }
      }
    }
    if (victim != last) {
      if (auto item = w.rt.at(victim).deque.steal()) {
        w.counters.steals[level].add();
        return *item;
      }
    }
    w.counters.failed_steals[level].add();
    return nullptr;
  }

  template <class F>
  void for_each_dominated(const group_plan& plan, F&& f) {
    const int first = owner(plan.x);
    const int end = std::min(workers_, floor_of(plan.y));
    for (int i = first; i < end; ++i) {
      worker_queues& q = *queues_[static_cast<std::size_t>(i)];
      const std::lock_guard hold(q.lock);
      f(q);
    }
  }

  static work_item* take_front(worker_queues& q, std::deque<work_item*>& fifo) {
    work_item* item = fifo.front();
    fifo.pop_front();
    q.queued.fetch_sub(1, std::memory_order_relaxed);
    return item;
  }

  // Ranges are never negative, so truncation is floor (and needs no libm call on the spawn path).
  static int floor_of(double x) noexcept { return static_cast<int>(std::max(0.0, x)); }

  // The last worker whose unit interval [i, i + 1) meets a range ending at y (exclusive).
  int last_worker(double y) const noexcept {
    const int f = floor_of(y);
    const int i = static_cast<double>(f) == y ? f - 1 : f;
    return std::clamp(i, 0, workers_ - 1);
  }

  // A cross-worker task or group: its range meets more than one worker's unit interval.
  bool crosses_workers(double lo, double hi) const noexcept {
    return hi > lo && owner(lo) != last_worker(hi);
  }

  int owner(double x) const noexcept {
    const int i = floor_of(x);
    return std::clamp(i, 0, workers_ - 1);
  }

  int workers_ = 1;
  bool steal_ = true;
  std::vector<std::unique_ptr<worker_queues>> queues_;
  std::vector<std::unique_ptr<plan_cache>> caches_;
};

}  // namespace

std::unique_ptr<policy> make_adws_policy() {
  return std::make_unique<adws_policy>();
}

}  // namespace locus::detail
