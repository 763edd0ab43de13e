// ml-ws: multi-level work stealing (seed 000: Shiina & Taura, IEEE TPDS 33(12), 2022; §4,
// Fig. 12-13, and the ML-WS of §6): random work stealing among the units of each level of the
// tree of caches (multilevel.hpp). A task group whose size_hint fits the unit its creator's
// worker serves is tied to that unit (Fig. 13, line 55): its descendants are stolen only among
// the unit's children, and the unit takes no other group until it ends. A group that does not
// fit (or whose unit is busy) is scheduled among the units of its creator's level. A group with
// no size_hint fits every cache. There is no flattening (§5: it helps ADWS, whose single-level
// schedule is already cache-aware, not random stealing).
//
// Choices where the paper leaves details open:
// - A thief works at one level at a time (multilevel.hpp): it steals from the servers of its
//   sibling units, from the primary items they set aside when they went a level down (oldest
//   first), or from their deque when they work at the thief's level.
// - A unit with a single child (the memory above one L3) would run a group tied to it on that
//   child's server alone; a group that fits the child is tied to the child too, and scheduled
//   among the child's children.
// - Spawns are child-first at every level; a tied group's continuation goes back to the tied
//   unit's server before the group ends, so that its server unties it.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "sched/multilevel.hpp"
#include "sched/policy.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"

namespace locus::detail {
namespace {

using multilevel::cache_tree;
using multilevel::tie_record;
using multilevel::tie_table;
using multilevel::worker_levels;

struct group_plan {
  int level = 0;           // where the children are scheduled
  int creator_server = 0;  // worker that unties the group and runs the creator's continuation
  task_state creator{};
  tie_record tie;
};

class ml_ws_policy final : public policy {
 public:
  std::string_view name() const noexcept override { return "ml-ws"; }
  policy_hooks hooks() const noexcept override {
    return {.spawn = true, .group = true, .ready = true};
  }

  void attach(runtime_impl& rt) override {
    tree_ = cache_tree::build(rt.topology, rt.size(), false);
    ties_.emplace(tree_);
    queues_.clear();
    for (int i = 0; i < rt.size(); ++i) {
      queues_.push_back(std::make_unique<worker_levels>(tree_.levels()));
    }
    plans_.reset(rt.size());
  }

  bool takes_roots(const worker& w) const noexcept override { return w.index == 0; }

  bool has_work(const worker& w) const noexcept override {
    const int level = ties_->active_level(w.index);
    return queues_of(w.index).has(level);
  }

  void group_begin(worker& w, group_state& g) override {
    task_state& cur = w.running->task;
    if (!cur.set) cur = {0.0, 1.0, 0, 0, true, false, nullptr};  // a root: at the memory
    group_plan* plan = plans_.take(w.index).first;
    plan->creator = cur;
    plan->tie = {};
    int level = cur.level;
    const int unit = tree_.unit_of(level, w.index);
    plan->creator_server = tree_.server(level, unit);
    if (level < tree_.leaf_level()) {
      const int before = ties_->active_level(w.index);
      // Fig. 13, line 55: tie the group to the unit this worker leads, if it fits.
      const bool leads = level == 0 || (before == level && plan->creator_server == w.index);
      if (leads && g.size_bytes <= tree_.unit(level, unit).capacity) {
        // Scheduling among the children of a unit that has only one would run the group on
        // that child's server alone: a group that fits the child is tied to it as well.
        int to = level + 1;
        for (int u = unit; to < tree_.leaf_level(); ++to) {
          const auto& parent = tree_.unit(to - 1, u);
          if (parent.last_child - parent.first_child != 1) break;
          u = parent.first_child;
          if (g.size_bytes > tree_.unit(to, u).capacity) break;
        }
        if (ties_->try_tie(level, unit, unit, to)) {
          plan->tie = {level, unit, unit, to};
          if (ties_->active_level(w.index) != before) {
            multilevel::set_aside_deque(w, queues_of(w.index), before);
          }
          w.rt.wake_all_for_mailbox();  // the unit's children have work now
          level = to;
        }
      }
    }
    plan->level = level;
    // The creator's continuation, and children it queues without the spawn hook, belong there.
    cur.level = static_cast<std::int16_t>(level);
    cur.quiet = level == tree_.leaf_level();
    g.policy_data = plan;
  }

  int group_end(worker& w, group_state& g) override {
    auto* plan = static_cast<group_plan*>(g.policy_data);
    if (plan->tie.active() && w.index != plan->creator_server) return plan->creator_server;
    g.policy_data = nullptr;
    w.running->task = plan->creator;
    if (plan->tie.active()) {
      ties_->untie(plan->tie.level, plan->tie.first, plan->tie.last, plan->tie.to);
    }
    plans_.give_back(w.index, plan);
    return -1;
  }

  spawn_decision on_spawn(worker& w, work_item& child) override {
    const auto& plan = *static_cast<const group_plan*>(child.group->policy_data);
    const auto level = static_cast<std::int16_t>(plan.level);
    // A task at the workers' level is quiet (task_state::quiet): its groups fit no cache below
    // and are stolen among the workers of its unit, as every task there is.
    const bool quiet = plan.level == tree_.leaf_level();
    child.state() = {0.0, 0.0, 0, level, true, quiet, nullptr};
    w.running->task.level = level;  // the creator's continuation belongs to the group's level
    w.running->task.quiet = quiet;
    return {};
  }

  int on_ready(worker& w, group_state& g) override {
    const auto& plan = *static_cast<const group_plan*>(g.policy_data);
    return plan.tie.active() ? plan.creator_server : w.index;
  }

  bool deliver(worker& from, int target, work_item* item) override {
    (void)from;
    // Only continuations travel (to untie their group on the unit's server).
    const auto* plan = static_cast<const group_plan*>(item->group->policy_data);
    queues_of(target).return_continuation(
        plan != nullptr ? plan->level : ties_->active_level(target), item);
    return true;
  }

  work_item* find_work(worker& w) override {
    const int level = ties_->active_level(w.index);
    worker_levels& q = queues_of(w.index);
    {
      const std::lock_guard hold(q.lock);
      if (work_item* own = q.take_own(level)) return own;
    }
    // Random victims among the units that share this worker's unit's parent.
    const int mine = tree_.unit_of(level, w.index);
    const auto& parent = tree_.unit(level - 1, tree_.unit_of(level - 1, w.index));
    const int siblings = parent.last_child - parent.first_child;
    if (siblings < 2 || !ties_->tied(level - 1, tree_.unit_of(level - 1, w.index))) {
      return nullptr;
    }
    for (int attempt = 0; attempt < siblings - 1; ++attempt) {
      int victim = parent.first_child +
                   static_cast<int>(w.next_random() % static_cast<std::uint32_t>(siblings - 1));
      if (victim >= mine) ++victim;
      const int server = tree_.server(level, victim);
      const auto distance = static_cast<std::size_t>(w.rt.distance(w.index, server));
      if (work_item* item =
              multilevel::steal_primary(w.rt.at(server), queues_of(server), level, *ties_)) {
        w.counters.steals[distance].add();
        return item;
      }
      w.counters.failed_steals[distance].add();
    }
    return nullptr;
  }

 private:
  worker_levels& queues_of(int worker) const noexcept {
    return *queues_[static_cast<std::size_t>(worker)];
  }

  cache_tree tree_;
  std::optional<tie_table> ties_;
  std::vector<std::unique_ptr<worker_levels>> queues_;
  multilevel::plan_pool<group_plan> plans_;
};

}  // namespace

std::unique_ptr<policy> make_ml_ws_policy() {
  return std::make_unique<ml_ws_policy>();
}

}  // namespace locus::detail
