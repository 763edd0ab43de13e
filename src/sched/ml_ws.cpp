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
//   unit's server (the `first` lane of its inbox) before the group ends, so that its server
//   unties it.
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "sched/context.hpp"
#include "sched/multilevel.hpp"
#include "sched/policy.hpp"

namespace locus::detail {
namespace {

using multilevel::cache_tree;
using multilevel::state_of;
using multilevel::task_state;
using multilevel::tie_record;
using multilevel::tie_table;
using multilevel::worker_levels;

struct group_plan {
  int level = 0;           // where the children are scheduled
  int creator_server = 0;  // worker that unties the group and runs the creator's continuation
  task_state creator{};
  bool creator_unhooked = false;
  tie_record tie;
};

class ml_ws_policy final : public policy_base<ml_ws_policy> {
 public:
  void attach(const topo::topology& topology, int workers) override {
    tree_ = cache_tree::build(topology, workers, false);
    ties_.emplace(tree_);
    queues_.clear();
    for (int i = 0; i < workers; ++i) {
      queues_.push_back(std::make_unique<worker_levels>(tree_.levels()));
    }
    plans_.reset(workers);
  }

  // The root is at the memory's level, whose server is worker 0.
  std::optional<int> root_worker() const noexcept override { return 0; }
  // A second root's group finds the memory's unit tied to the first root's and is scheduled
  // where the first's worker, working a level below, does not look until its own group ends,
  // which may need that worker: roots from several threads wait for each other.
  bool concurrent_roots() const noexcept override { return false; }

  bool has_work(const context& ctx) const noexcept override {
    const int level = ties_->active_level(ctx.self());
    return queues_of(ctx.self()).has(level);
  }

  void group_begin(context& ctx, group_state& g) override {
    task_frame& creator = ctx.current();
    task_state& cur = state_of(creator);
    if (!cur.set) cur = {{0.0, 1.0}, 0, 0, true, nullptr};  // a root: at the memory
    group_plan* plan = plans_.take(ctx.self()).first;
    plan->creator = cur;
    plan->creator_unhooked = creator.children_unhooked;
    plan->tie = {};
    int level = cur.level;
    const int unit = tree_.unit_of(level, ctx.self());
    plan->creator_server = tree_.server(level, unit);
    if (level < tree_.leaf_level()) {
      const int before = ties_->active_level(ctx.self());
      // Fig. 13, line 55: tie the group to the unit this worker leads, if it fits.
      const bool leads = level == 0 || (before == level && plan->creator_server == ctx.self());
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
          if (ties_->active_level(ctx.self()) != before) {
            multilevel::set_aside_queue(ctx, queues_of(ctx.self()), before);
          }
          // The unit's children have work now.
          const auto& tied = tree_.unit(level, unit);
          multilevel::wake_workers(ctx, tied.first_worker, tied.last_worker);
          level = to;
        }
      }
    }
    plan->level = level;
    // The creator's continuation, and children it queues, belong there.
    cur.level = static_cast<std::int16_t>(level);
    creator.children_unhooked = level == tree_.leaf_level();
    g.policy_data = plan;
  }

  std::optional<int> group_end(context& ctx, group_state& g) override {
    auto* plan = static_cast<group_plan*>(g.policy_data);
    if (plan->tie.active() && ctx.self() != plan->creator_server) return plan->creator_server;
    g.policy_data = nullptr;
    state_of(ctx.current()) = plan->creator;
    ctx.current().children_unhooked = plan->creator_unhooked;
    if (plan->tie.active()) {
      ties_->untie(plan->tie.level, plan->tie.first, plan->tie.last, plan->tie.to);
    }
    plans_.give_back(ctx.self(), plan);
    return std::nullopt;
  }

  spawn_decision on_spawn(context& ctx, spawn_request& spawn) override {
    const auto& plan = *static_cast<const group_plan*>(spawn.group.policy_data);
    const auto level = static_cast<std::int16_t>(plan.level);
    // A task at the workers' level needs no hooks for its groups: they fit no cache below and
    // are stolen among the workers of its unit, as every task there is.
    const bool unhooked = plan.level == tree_.leaf_level();
    state_of(spawn.child) = {{}, 0, level, true, nullptr};
    spawn.child.children_unhooked = unhooked;
    task_frame& creator = ctx.current();
    state_of(creator).level = level;  // the creator's continuation belongs to the group's level
    creator.children_unhooked = unhooked;
    return spawn.queued ? spawn_decision::parent_first : spawn_decision::child_first;
  }

  // Only continuations travel: a tied group's goes back to the tied unit's server to untie it.
  bool route(context& ctx, work_item& item) override {
    const auto* plan = static_cast<const group_plan*>(item.group->policy_data);
    if (item.kind != item_kind::resume || plan == nullptr || !plan->tie.active() ||
        plan->creator_server == ctx.self()) {
      return false;
    }
    ctx.deliver(plan->creator_server, &item, lane::first);
    return true;
  }

  work_item* find_work(context& ctx) override {
    const int level = ties_->active_level(ctx.self());
    worker_levels& q = queues_of(ctx.self());
    {
      const std::lock_guard hold(q.lock);
      if (work_item* own = q.take_own(level)) return own;
    }
    // Random victims among the units that share this worker's unit's parent.
    const int mine = tree_.unit_of(level, ctx.self());
    const int parent_unit = tree_.unit_of(level - 1, ctx.self());
    const auto& parent = tree_.unit(level - 1, parent_unit);
    const int siblings = parent.last_child - parent.first_child;
    if (siblings < 2 || !ties_->tied(level - 1, parent_unit)) return nullptr;
    for (int attempt = 0; attempt < siblings - 1; ++attempt) {
      int victim = parent.first_child + ctx.random_below(siblings - 1);
      if (victim >= mine) ++victim;
      const int server = tree_.server(level, victim);
      const steal_result r = ctx.steal_with(server, [&] {
        return multilevel::steal_primary(ctx, server, queues_of(server), level, *ties_);
      });
      if (r) return r.item;
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
