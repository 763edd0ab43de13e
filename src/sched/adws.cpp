// adws: Almost Deterministic Work Stealing, single level (seed 000: Shiina & Taura, "Improving
// Cache Utilization of Nested Parallel Programs by Almost Deterministic Work Stealing", IEEE
// TPDS 33(12), 2022; §3.1, Fig. 5-8: deterministic task mapping).
//
// Every task carries a distribution range [lo, hi) over the workers; the root's is [0, P). A
// task group divides its task's range among its children left to right in proportion to their
// work hints (Fig. 7, RUN): a child of work w, spawned while the group has W work left (w
// included), gets the first w / W of what is left of the range. A task belongs to worker
// floor(lo) (its owner). In a cross-worker group (floor(lo) != floor(hi) for the task that
// created it), a child owned by another worker migrates there, into that worker's migration
// queue for the child's depth; every other child runs at once, child-first. A cross-worker
// task's continuation, once its children are done, resumes on its owner (Fig. 7, WAIT).
// Depth counts cross-worker groups from the root (§3.2): a cross-worker group's children are
// one deeper than the task that created it.
//
// Choices where the paper leaves details open (tested in tests/adws_test.cpp):
// - No group work hint: each child takes half of what is left, so the common pattern "run one
//   child, do the other half inline, wait" splits 1 : 1 (the paper's assumption without hints).
//   A child without a work hint counts as work 1. Hints that overdraw the group's total leave
//   later children an empty range at the current boundary (they run on its owner).
// - Work a task does inline after its run() calls belongs to the rest of the range (nested
//   groups there divide it), but runs where the task runs: only spawned children migrate.
// - The root runs on worker 0, the owner of [0, P): only worker 0 takes submitted roots.
// - A continuation sent back to its owner goes through the owner's single-entry mailbox;
//   when that is full it waits in the owner's queue of returned continuations, which the
//   owner checks before its migration queues.
#include <algorithm>
#include <cmath>
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
  double lo = 0, hi = 0;  // what is left of the range to divide among the next children
  double remaining = 0;   // work hint left
  bool hinted = false;    // the group has a work hint (else each child takes half)
  int depth = 0;          // of the children
  bool cross = false;     // created by a cross-worker task
  int creator_owner = 0;  // owner of the task that created the group
  task_state creator{};   // that task's state, restored when the group ends
};

// Migration queues of one worker, one FIFO per depth, and the continuations sent back to it.
struct worker_queues {
  std::mutex lock;
  std::vector<std::deque<work_item*>> by_depth;
  std::deque<work_item*> returned;
};

class adws_policy final : public policy {
 public:
  std::string_view name() const noexcept override { return "adws"; }
  policy_hooks hooks() const noexcept override {
    return {.spawn = true, .group = true, .ready = true};
  }

  void attach(runtime_impl& rt) override {
    workers_ = rt.size();
    queues_.clear();
    for (int i = 0; i < workers_; ++i) queues_.push_back(std::make_unique<worker_queues>());
  }

  bool takes_roots(const worker& w) const noexcept override { return w.index == 0; }

  void group_begin(worker& w, group_state& g) override {
    task_state& cur = w.running->task;
    if (!cur.set) cur = {0.0, static_cast<double>(workers_), 0, true};  // a root
    auto plan = std::make_unique<group_plan>();
    plan->lo = cur.lo;
    plan->hi = cur.hi;
    plan->hinted = g.hints.work > 0;
    plan->remaining = g.hints.work;
    plan->cross = std::floor(cur.lo) != std::floor(cur.hi);
    plan->depth = cur.depth + (plan->cross ? 1 : 0);
    plan->creator_owner = owner(cur.lo);
    plan->creator = cur;
    g.policy_data = plan.release();
  }

  void group_end(worker& w, group_state& g) override {
    std::unique_ptr<group_plan> plan(static_cast<group_plan*>(g.policy_data));
    g.policy_data = nullptr;
    w.running->task = plan->creator;
  }

  spawn_decision on_spawn(worker& w, work_item& child) override {
    auto& plan = *static_cast<group_plan*>(child.group->policy_data);
    const double work = child.options.work > 0 ? child.options.work : 1.0;
    double share = 0.5;
    if (plan.hinted) {
      share = plan.remaining > 0 ? std::min(1.0, work / plan.remaining) : 0.0;
      plan.remaining = std::max(0.0, plan.remaining - work);
    }
    const double lo = plan.lo;
    const double hi = share >= 1.0 ? plan.hi : lo + (plan.hi - lo) * share;
    plan.lo = hi;
    child.state = {lo, hi, plan.depth, true};
    // The creator goes on with the rest of the range (inline work, nested groups).
    w.running->task = {plan.lo, plan.hi, plan.depth, true};
    const int target = owner(lo);
    if (plan.cross && target != w.index) return {spawn_decision::action::send, target};
    return {};
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
      return true;
    }
    worker_queues& q = *queues_[static_cast<std::size_t>(target)];
    const auto depth = static_cast<std::size_t>(std::max(0, item->state.depth));
    const std::lock_guard hold(q.lock);
    if (q.by_depth.size() <= depth) q.by_depth.resize(depth + 1);
    q.by_depth[depth].push_back(item);
    return true;
  }

  work_item* find_work(worker& w) override {
    worker_queues& q = *queues_[static_cast<std::size_t>(w.index)];
    const std::lock_guard hold(q.lock);
    if (!q.returned.empty()) return take_front(q.returned);
    // Fig. 11, lines 36-38: migration queues from the top (depth 0) down, oldest first.
    for (auto& fifo : q.by_depth) {
      if (!fifo.empty()) return take_front(fifo);
    }
    return nullptr;
  }

 private:
  static work_item* take_front(std::deque<work_item*>& fifo) {
    work_item* item = fifo.front();
    fifo.pop_front();
    return item;
  }

  int owner(double x) const noexcept {
    const auto i = static_cast<int>(std::floor(x));
    return std::clamp(i, 0, workers_ - 1);
  }

  int workers_ = 1;
  std::vector<std::unique_ptr<worker_queues>> queues_;
};

}  // namespace

std::unique_ptr<policy> make_adws_policy() {
  return std::make_unique<adws_policy>();
}

}  // namespace locus::detail
