// adws and ml-adws: Almost Deterministic Work Stealing (seed 000: Shiina & Taura, "Improving
// Cache Utilization of Nested Parallel Programs by Almost Deterministic Work Stealing", IEEE
// TPDS 33(12), 2022; §3.1, Fig. 5-8: deterministic task mapping; §3.2, Fig. 10-11: stealing
// within the topmost dominant task group; §5, Fig. 14-15: multi-level ADWS with cache hierarchy
// flattening).
//
// Both run single-level ADWS among the units of one level of a tree of caches (multilevel.hpp):
// adws on the tree of the memory and the workers, so that its units are the workers; ml-adws on
// the whole tree. Ranges below are in units of the level a group is scheduled at, and a unit's
// tasks run on its server (its first worker). A group begins at its creator's level; when its
// size_hint fits the units its creator's range covers, Fig. 15 picks the level it is scheduled
// at instead (the first level down whose units there no longer hold it, or the workers), and
// ties those units to it until it ends (a group with no size_hint fits everywhere). A root task
// is the memory's one unit, [0, 1) at level 0, so a root group always goes a level down at least.
//
// Every task carries a distribution range [lo, hi) over the workers; the root's is [0, P). A
// task group divides its task's range among its children in spawn order in proportion to
// their work hints (Fig. 7, RUN): a child of work w, spawned while the group has W work left
// (w included), gets the top w / W of what is left of the range (the paper draws worker 0 on
// the right, and children left to right). A task belongs to worker floor(lo) (its owner). In a
// cross-worker group (floor(lo) != floor(hi) for the task that created it), a child owned by
// another worker migrates there, into that worker's migration queue for the child's depth; every
// other child runs at once, child-first (but see below for a group's later children). A
// cross-worker task's continuation, once its children are done, resumes on its owner (Fig. 7,
// WAIT). Depth counts cross-worker groups from the root (§3.2): a cross-worker group's children
// are one deeper than the task that created it.
//
// Stealing (§3.2): a cross-worker group becomes dominant once one of its children with
// floor(lo) != floor(hi) (the paper's cross-worker task: this includes a child that ends on a
// unit boundary, such as [1.6, 2)) has finished, or its creator's inline part with
// floor(lo) != floor(hi) has (the creator reached wait); it dominates the workers floor(x) <= i <
// floor(y) of its range [x, y). A worker steals only within the topmost (shallowest) dominant
// group that dominates it, from victims floor(x)..ceil(y) - 1: migration queues deepest first
// down to the group's depth, newest first, then the victim's deque (not of floor(y)), oldest
// first; only tasks whose range lies in [x, y) at the group's depth or deeper. An undominated
// worker does not steal, so migrated work is not taken too early. A stolen task that lies on one
// unit is moved onto the thief's unit (its range shifted), so that its descendants are planned on
// the thief's side. LOCUS_ADWS_STEAL=0 turns stealing off to test the deterministic plan.
//
// Choices where the paper leaves details open (tested in tests/adws_test.cpp):
// - Ranges are half-open, so [i, i + 1) lies on worker i alone: for the mapping (which
//   children migrate, which continuations go back, task depth) a task is cross-worker when its
//   range meets the unit intervals of more than one worker, and the victims of a steal range
//   [x, y) are floor(x) .. ceil(y) - 1. Dominance keeps the paper's floor(x) != floor(y): with
//   the half-open sense a group whose last child ends on a boundary ([0, 2) on two workers,
//   children [1.6, 2) and [0, 1.6)) would not become dominant until its whole first part was
//   done, and the worker of its second part could never help (Fig. 19's imbalance).
// - No group work hint (or 0): the paper's 1 : 1, as a binary fork: the first child gets the
//   top half, the second child all the rest (or, if there is none, the creator's inline work
//   keeps it), and further children an empty range at the creator's start (they run where the
//   creator runs, and stealing spreads them once the group is dominant). A child without a work
//   hint counts as work 1. Hints that overdraw the group's total leave later children an empty
//   range at the boundary. A child with an empty range never migrates: it runs child-first
//   wherever it is spawned (on a thief that took its creator's continuation, say).
// - Work a task does inline after its run() calls gets the rest of the range, which starts at
//   the task's own worker (nested groups there divide it): "run(left); right(); wait()" maps
//   like two spawned children.
// - The root runs on worker 0, the owner of [0, P): only worker 0 takes submitted roots.
// - One primary queue per worker and level, the core's queue (and what it set aside when it went
//   a level down), instead of one per depth: a thief takes its oldest item without checking
//   that item's depth (migration queues are by depth).
// - The continuation of a cross-worker or tied group goes back to its creator's server before
//   the group ends, whether it waited (on_ready) or found its children done (group_end).
// - Continuations sent back go to the `first` lane of the server's inbox, which it takes before
//   its own primary and migration queues.
// - The paper does not steal from floor(x)'s migration queues, which may hold tasks migrated
//   from outside the range; here the range and depth bound every steal, and so those queues are
//   stolen from too. They hold work of the group itself whenever a thief took a continuation of
//   the group's creator: the creator's later children are planned on floor(x) and go there, and
//   a thief that could not take them back would idle while floor(x) runs them all (a flat loop
//   whose hints understate the work of its last children; tests/adws_steal_range_test.cpp).
// - A child that stays on its creator's worker runs child-first only if it is the group's first
//   child; later ones are queued on the creator's deque (parent-first) and run at its wait, on
//   its stack, newest first, or by a thief within the range. The worker that runs each child is
//   the plan's either way. In a flat loop of spawns, child-first would switch the creator onto a
//   stack of its own for every child and leave the loop's continuation for thieves to take, which
//   then spawn the creator's later children and send them back to it; queued, the creator spawns
//   its part of the loop at a plain queue push each, as oneTBB's and OpenMP's owners do
//   (bench/README, "Where locus is behind a peer", sparselu), up to 256 in its queue. A binary
//   fork ("run(left); right(); wait()") has one spawned child and is unchanged.
// - A migrating child travels to its owner through a ring kept for each pair of workers that
//   has routed a child (src/sched/routed_ring.hpp) and enters the owner's migration queue when the
//   holder of its queue lock next looks: the owner searching for work, a thief stealing from it, or
//   a sender whose ring is full. The sender only stores and takes no lock: a locked send had to
//   wait for the line the idle owner was polling, on every child of a flat loop, while its creator
//   was still spawning (bench/README, "Where locus is behind a peer", sparselu). As with a push
//   onto the core's queue, no fence separates the send from the look at the owner's sleep flag: a
//   wake-up missed in that window waits for the sleep's timeout.
// - A worker that runs out of work waits before its first steal within a group that has a size
//   hint (src/sched/steal_patience.hpp): about as long as moving one of the group's parts (its
//   size over its children and inline work, at most the cache of one unit of the group's level,
//   and scaled by how much of a unit's share of the group that cache holds) to another core
//   would take, and at most as long as its own part took; later steals in the group
//   go at once; no wait while another process shares a worker's PU (the owner may be descheduled).
//   The paper steals as soon as a worker is dominated; at the end of every step of an iterative
//   program whose plan is balanced but not exact, that moved a few tasks' data to the other core
//   and the next step's plan moved it back (bench/README, "The thief's wait").
//   LOCUS_ADWS_PATIENCE=0 steals at once.
// - Fig. 15 ties the units it flattens (and those between them and the level it picks), so that
//   one unit is never given two groups at once; a tie that fails (the units are busy) leaves the
//   group at its creator's level. Only a creator running on the server of the first unit of its
//   range ties.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "sched/adws_audit.hpp"
#include "sched/context.hpp"
#include "sched/multilevel.hpp"
#include "sched/policy.hpp"
#include "sched/routed_ring.hpp"
#include "sched/steal_patience.hpp"

namespace locus::detail {
namespace {

using multilevel::cache_tree;
using multilevel::state_of;
using multilevel::task_state;
using multilevel::tie_record;
using multilevel::tie_table;
using multilevel::worker_levels;

// The plan of one task group (group_state::policy_data).
struct group_plan {
  dist_range whole;      // the group's range (its creator's when it began)
  dist_range left;       // what is left of it to divide among the next children
  double remaining = 0;  // work hint left
  bool hinted = false;   // the group has a work hint (else it is split 1 : 1)
  // Children so far: read by whichever worker makes the group dominant.
  std::atomic<int> spawned{0};
  int level = 0;       // of the tree of caches, where the children are scheduled
  int depth = 0;       // of the children
  bool cross = false;  // the children's range spans units
  // Facts of `level` that every spawn reads, looked up once when the group begins.
  int units = 0;
  bool leaf = false;  // `level` is the workers'
  const multilevel::cache_unit* unit_at = nullptr;
  int creator_server = 0;  // worker that runs the creator's continuation
  task_state creator{};    // that task's state, restored when the group ends
  bool creator_unhooked = false;
  tie_record tie;              // units tied to this group
  std::uint64_t id = 0;        // names the group in the workers' steal ranges
  std::size_t size_bytes = 0;  // the group's size hint
  std::uint64_t begun_ns = 0;  // when a cross-worker group began
  std::atomic<bool> dominant{false};
};

// The topmost dominant group dominating a worker at one level (Fig. 10), by value: groups end
// while workers still look at their ranges.
struct steal_range {
  dist_range range;
  int depth = 0;
  std::uint64_t group = 0;
  bool valid = false;
  std::size_t part_bytes = 0;  // the group's data per part (its children and inline work)
  std::uint64_t begun_ns = 0;
};

// A worker's queues of every level, and its steal range at each (under queues.lock). The worker
// itself keeps a copy of its ranges, taken again only when their version moves: an idle worker
// searches once per round, and taking its lock each time would pull the lock's line away from a
// worker routing children into these queues.
struct worker_queues {
  worker_queues(int levels, int workers)
      : queues(levels),
        inbound(workers),
        range(static_cast<std::size_t>(levels)),
        seen(static_cast<std::size_t>(levels)) {}
  worker_levels queues;
  // Children routed here, until a holder of queues.lock moves them into `queues`
  // (drain_inbound).
  routed_inbox inbound;
  std::vector<steal_range> range;
  alignas(64) std::atomic<std::uint64_t> range_version{0};  // bumped under the lock with `range`
  alignas(64) std::vector<steal_range> seen;                // the worker's own thread only
  std::uint64_t seen_version = ~std::uint64_t{0};
  steal_patience patience;  // the worker's own thread only
};

std::atomic<adws_steal_observer> steal_observer{nullptr};

class adws_policy final : public policy_base<adws_policy> {
 public:
  explicit adws_policy(bool multi_level) : multi_level_(multi_level) {}

  void attach(const topo::topology& topology, int workers) override {
    if (const char* v = config::env_value("LOCUS_ADWS_STEAL")) {
      steal_ = config::parse_bool("LOCUS_ADWS_STEAL", v);
    }
    if (const char* v = config::env_value("LOCUS_ADWS_PATIENCE")) {
      patient_ = config::parse_bool("LOCUS_ADWS_PATIENCE", v);
    }
    tree_ = cache_tree::build(topology, workers, !multi_level_);
    ties_.emplace(tree_);
    queues_.clear();
    for (int i = 0; i < workers; ++i) {
      queues_.push_back(std::make_unique<worker_queues>(tree_.levels(), workers));
    }
    plans_.reset(workers);
  }

  std::vector<policy_setting> settings() const override {
    return {{"LOCUS_ADWS_STEAL", steal_ ? "1" : "0"},
            {"LOCUS_ADWS_PATIENCE", patient_ ? "1" : "0"}};
  }

  // The root's range is [0, P): it starts on its owner, worker 0.
  std::optional<int> root_worker() const noexcept override { return 0; }

  bool has_work(const context& ctx) const noexcept override {
    const int level = ties_->active_level(ctx.self());
    const worker_queues& wq = queues_of(ctx.self());
    return wq.queues.has(level) || wq.inbound.has_arrivals();
  }

  void group_begin(context& ctx, group_state& g) override {
    task_frame& creator = ctx.current();
    task_state& cur = state_of(creator);
    if (!cur.set) assign(creator, 0, {0.0, 1.0}, 0, nullptr);  // a root: the memory's one unit
    if (within_one_worker(cur.level, cur.range)) {
      // Reached by parent-first spawns and in traced or measured runtimes: otherwise the core
      // spawns the children of a task on one worker's unit without hooks (they share its range).
      g.policy_data = nullptr;
      return;
    }
    group_plan* plan = take_plan(ctx);
    plan->creator = cur;
    plan->creator_unhooked = creator.children_unhooked;
    plan->creator_server = tree_.server(cur.level, cur.range.owner(tree_.units(cur.level)));
    dist_range range = cur.range;
    int level = cur.level, base_depth = cur.depth;
    plan->tie = {};
    if (level < tree_.leaf_level()) {
      // Fig. 15: the units this range covers, and the level to flatten them to.
      const int i = range.owner(tree_.units(level));
      const int j = dist_range::floor_of(range.hi);
      const int next = tree_.flatten_level(level, i, j, g.size_bytes);
      const int k = std::clamp(std::max(i, j - 1), i, tree_.units(level) - 1);
      if (next != level) {
        const int before = ties_->active_level(ctx.self());
        bool tied = false;
        if (ctx.self() == tree_.server(level, i) && (level == 0 || before == level)) {
          tied = ties_->try_tie(level, i, k, next);
        }
        if (tied) {
          plan->tie = {level, i, k, next};
          if (ties_->active_level(ctx.self()) != before) {
            multilevel::set_aside_queue(ctx, queues_of(ctx.self()).queues, before);
            multilevel::wake_workers(ctx, 0, ctx.workers());
          }
          const auto [a, b] = tree_.descendants(level, i, k, next);
          range = {static_cast<double>(a), static_cast<double>(b)};
          level = next;
          base_depth = 0;
        } else if (level == 0) {
          // Another root holds the caches: schedule among the memory's children anyway.
          range = {0.0, static_cast<double>(tree_.units(1))};
          level = 1;
          base_depth = 0;
        }
      }
    }
    plan->level = level;
    plan->units = tree_.units(level);
    plan->leaf = level == tree_.leaf_level();
    plan->unit_at = &tree_.unit(level, 0);
    plan->whole = plan->left = range;
    plan->hinted = g.work_hint > 0;
    plan->remaining = g.work_hint;
    plan->cross = range.spans_units(tree_.units(level));
    plan->size_bytes = g.size_bytes;
    // Only a cross-worker group becomes dominant and is stolen from.
    plan->begun_ns = plan->cross && patient_ && g.size_bytes > 0 ? ctx.now_ns() : 0;
    plan->depth = base_depth + (plan->cross ? 1 : 0);
    // The creator's continuation, and children it queues without the spawn hook, belong there.
    assign(creator, level, range, plan->depth, cur.group);
    g.policy_data = plan;
  }

  std::optional<int> group_end(context& ctx, group_state& g) override {
    auto* plan = static_cast<group_plan*>(g.policy_data);
    if (plan == nullptr) return std::nullopt;
    // Fig. 7, WAIT: the continuation of a cross-worker group (and of a tied one, which unties
    // its units on their server) goes on on its creator's server.
    if ((plan->cross || plan->tie.active()) && ctx.self() != plan->creator_server) {
      return plan->creator_server;
    }
    g.policy_data = nullptr;
    state_of(ctx.current()) = plan->creator;
    ctx.current().children_unhooked = plan->creator_unhooked;
    if (plan->dominant.load(std::memory_order_acquire)) {
      // Its workers are no longer dominated by it; an enclosing group takes over once it
      // becomes dominant in turn.
      for_each_dominated(*plan, [&](steal_range& r) {
        if (r.valid && r.group == plan->id) r.valid = false;
      });
    }
    if (plan->tie.active()) {
      ties_->untie(plan->tie.level, plan->tie.first, plan->tie.last, plan->tie.to);
    }
    plans_.give_back(ctx.self(), plan);
    return std::nullopt;
  }

  spawn_decision on_spawn(context& ctx, spawn_request& spawn) override {
    const spawn_decision stay =
        spawn.queued ? spawn_decision::parent_first : spawn_decision::child_first;
    auto* planned = static_cast<group_plan*>(spawn.group.policy_data);
    if (planned == nullptr || spawn.queued) {
      // A queued child, or one of a group that has no plan, keeps its creator's range and
      // counts as a member of the group that spawned it.
      state_of(spawn.child).group = planned;
      return stay;
    }
    group_plan& plan = *planned;
    const double work = spawn.hints.work > 0 ? spawn.hints.work : 1.0;
    // Without a group hint: 1 : 1 between the first child and the rest, which then goes to the
    // next child (or stays with the creator's inline work); later children get nothing.
    const int spawned = plan.spawned.load(std::memory_order_relaxed) + 1;
    plan.spawned.store(spawned, std::memory_order_relaxed);
    double share = spawned == 1 ? 0.5 : 1.0;
    if (plan.hinted) {
      share = plan.remaining > 0 ? std::min(1.0, work / plan.remaining) : 0.0;
      plan.remaining = std::max(0.0, plan.remaining - work);
    }
    // Children take the range from its top down, so the ones that migrate to other workers go
    // first, then the cross-worker child the creator runs itself, and the creator's own part,
    // where its inline work and later children run, comes last.
    const auto [child, rest] = plan.left.divide(share);
    plan.left = rest;
    assign(spawn.child, plan, child, &plan);
    // The creator goes on with the rest of the range (inline work, nested groups).
    task_frame& creator = ctx.current();
    assign(creator, plan, rest, state_of(creator).group);
    const int target = plan.unit_at[child.owner(plan.units)].first_worker;
    // A child with an empty share (hints that overdraw the group's total) has no work planned
    // anywhere: it runs where it is spawned. Sent to its nominal owner it would wait behind all
    // of that worker's own work, and with it the group, which keeps the steal range deep.
    if (plan.cross && target != ctx.self() && !child.empty()) return spawn_decision::route;
    // The group's second child or later, kept here: queued, to run at the creator's wait.
    if (spawned > 1 && ctx.own_queue_size() < queued_children_bound) {
      return spawn_decision::parent_first;
    }
    return stay;
  }

  // A child planned on another worker migrates into that worker's migration queue for its
  // depth; the continuation of a cross-worker or tied group goes back to its creator's server.
  bool route(context& ctx, work_item& item) override {
    if (item.kind == item_kind::resume) {
      const auto* plan = static_cast<const group_plan*>(item.group->policy_data);
      if (plan == nullptr || !(plan->cross || plan->tie.active()) ||
          plan->creator_server == ctx.self()) {
        return false;
      }
      ctx.deliver(plan->creator_server, &item, lane::first);
      return true;
    }
    const task_state& t = state_of(context::record_of(item));
    const int target = tree_.server(t.level, t.range.owner(tree_.units(t.level)));
    worker_queues& wq = queues_of(target);
    if (!wq.inbound.try_send(ctx.self(), &item)) {
      const std::lock_guard hold(wq.queues.lock);
      drain_inbound(wq, true);  // what this worker sent before goes first
      migrate(wq.queues, item);
    }
    ctx.posted(target);
    return true;
  }

  void task_end(context& ctx) override {
    const task_state& t = state_of(ctx.current());
    if (!t.set || t.group == nullptr || !t.range.reaches_next_unit()) return;
    // A cross-worker child (in §3.2's sense) of a cross-worker group finished: the group is
    // dominant from now on.
    make_dominant(*static_cast<group_plan*>(t.group));
  }

  // The creator's inline work is the group's last child ("run(left); right(); wait()" maps like
  // two spawned children), so its end counts as a child's: with 1 : 2 hints on two workers the
  // root's inline part [0, 1.33) ends first, and worker 0 may then help with [1.33, 2).
  void group_wait(context& ctx, group_state& g) override {
    (void)ctx;
    auto* plan = static_cast<group_plan*>(g.policy_data);
    if (plan != nullptr && plan->left.reaches_next_unit()) make_dominant(*plan);
  }

  work_item* find_work(context& ctx) override {
    const int level = ties_->active_level(ctx.self());
    worker_queues& wq = queues_of(ctx.self());
    worker_levels& q = wq.queues;
    if (q.has(level) || wq.inbound.has_arrivals()) {
      const std::lock_guard hold(q.lock);
      drain_inbound(wq);
      if (work_item* own = q.take_own(level)) return own;
      // Fig. 11, lines 36-38: migration queues from the top (depth 0) down, oldest first.
      for (auto& fifo : q.at[static_cast<std::size_t>(level)].by_depth) {
        if (!fifo.empty()) return q.take_front(level, fifo);
      }
    }
    const steal_range range = own_range(wq, level);
    if (!steal_ || !range.valid) return nullptr;  // Fig. 11, line 40
    // On a shared machine the owner may be waiting for its PU, not working: no wait then.
    if (range.part_bytes > 0 && !ctx.any_worker_contended() &&
        !wq.patience.may_steal(range.group, range.part_bytes, range.begun_ns, ctx.now_ns())) {
      return nullptr;
    }
    return steal_within(ctx, level, range);
  }

 private:
  worker_queues& queues_of(int worker) const noexcept {
    return *queues_[static_cast<std::size_t>(worker)];
  }

  // Into the migration queue of `item`'s depth at its level; under q.lock.
  static void migrate(worker_levels& q, work_item& item) {
    const task_state& t = state_of(context::record_of(item));
    const auto depth = static_cast<std::size_t>(std::max(0, t.depth));
    auto& by_depth = q.at[static_cast<std::size_t>(t.level)].by_depth;
    if (by_depth.size() <= depth) by_depth.resize(depth + 1);
    by_depth[depth].push_back(&item);
    q.add(t.level);
  }

  // Moves the children routed to wq's worker into its migration queues; under its queues.lock.
  static void drain_inbound(worker_queues& wq, bool all = false) {
    wq.inbound.drain([&](work_item* item) { migrate(wq.queues, *item); }, all);
  }

  // The calling worker's steal range at `level`, as of a moment since this call began.
  static const steal_range& own_range(worker_queues& wq, int level) {
    if (wq.range_version.load(std::memory_order_acquire) != wq.seen_version) {
      const std::lock_guard hold(wq.queues.lock);
      wq.seen = wq.range;
      wq.seen_version = wq.range_version.load(std::memory_order_relaxed);
    }
    return wq.seen[static_cast<std::size_t>(level)];
  }

  group_plan* take_plan(context& ctx) {
    const auto [plan, taken] = plans_.take(ctx.self());
    plan->spawned.store(0, std::memory_order_relaxed);
    plan->dominant.store(false, std::memory_order_relaxed);
    plan->id = taken * static_cast<std::uint64_t>(ctx.workers()) +
               static_cast<std::uint64_t>(ctx.self());  // unique without a shared counter
    return plan;
  }

  // Fig. 11, lines 41-50, among the units of `level`.
  work_item* steal_within(context& ctx, int level, const steal_range& range) {
    const int units = tree_.units(level);
    const int first = range.range.owner(units);
    const int last = range.range.last_unit(units);
    if (last <= first) return nullptr;
    const int mine = tree_.unit_of(level, ctx.self());
    int victim = first + ctx.random_below(last - first);
    if (victim >= mine) ++victim;  // a choice among first..last except this worker's unit
    if (victim > last) return nullptr;
    const int server = tree_.server(level, victim);
    worker_queues& vwq = queues_of(server);
    worker_levels& vq = vwq.queues;
    // Only tasks inside the range: at its ends a victim also holds tasks of the groups beside
    // it (at the same depth), and a victim's one primary queue mixes depths.
    const multilevel::steal_bounds bounds{range.range, range.depth};
    const steal_result r = ctx.steal_with(server, [&]() -> work_item* {
      if (vq.has(level) || vwq.inbound.has_arrivals()) {
        const std::lock_guard hold(vq.lock);
        drain_inbound(vwq);
        auto& by_depth = vq.at[static_cast<std::size_t>(level)].by_depth;
        for (int d = static_cast<int>(by_depth.size()) - 1; d >= range.depth; --d) {
          auto& fifo = by_depth[static_cast<std::size_t>(d)];
          if (work_item* item = vq.take_admitted(level, fifo, &bounds, true)) return item;
        }
      }
      // Worker floor(y)'s primary items lie beyond the range; when y is a unit boundary that
      // worker is not in the range at all, and the last one is wholly inside it.
      if (victim == dist_range::floor_of(range.range.hi)) return nullptr;
      return multilevel::steal_primary(ctx, server, vq, level, *ties_, &bounds);
    });
    if (!r) return nullptr;
    return stolen(ctx, level, server, range, *r.item);
  }

  work_item* stolen(context& ctx, int level, int victim, const steal_range& range,
                    work_item& item) const {
    if (const auto observe = steal_observer.load(std::memory_order_relaxed)) {
      const task_state& t = state_of(context::record_of(item));
      observe({ctx.self(), victim, level, t.range.lo, t.range.hi, t.depth, range.range.lo,
               range.range.hi, range.depth,
               queues_of(ctx.self()).patience.held_back_in(range.group), range.part_bytes});
    }
    return adopt(level, tree_.unit_of(level, ctx.self()), item);
  }

  // A stolen task that lies on one unit moves onto the thief's unit, so that its descendants
  // are planned there: in ml-adws, a group it creates that fits the thief's cache is tied to
  // and flattened onto that cache instead of staying at the steal's level on the thief alone.
  // Tasks that span units (continuations of cross-worker groups) keep their ranges: their
  // children still go to the units they were planned for. A stolen continuation takes the rest
  // of its group's plan along (that group lies on the same unit: a group that spans units
  // makes its creator's range span them too).
  work_item* adopt(int level, int unit, work_item& item) const noexcept {
    task_frame& record = context::record_of(item);
    task_state& t = state_of(record);
    const int units = tree_.units(level);
    if (!t.set || t.level != level || t.range.spans_units(units)) return &item;
    const double shift = static_cast<double>(unit - t.range.owner(units));
    if (shift == 0) return &item;
    t.range = t.range.moved_onto(unit, shift);
    if (item.kind == item_kind::continuation && item.group != nullptr &&
        item.group->policy_data != nullptr) {
      auto& plan = *static_cast<group_plan*>(item.group->policy_data);
      if (!plan.cross && !plan.tie.active() && plan.level == level) {
        plan.whole = plan.whole.moved_onto(unit, shift);
        plan.left = plan.left.moved_onto(unit, shift);
      }
    }
    return &item;
  }

  void make_dominant(group_plan& plan) {
    if (!plan.cross || plan.dominant.exchange(true, std::memory_order_acq_rel)) return;
    // Its children so far and the creator's inline work: the parts a thief may take.
    const auto parts = static_cast<std::size_t>(plan.spawned.load(std::memory_order_relaxed)) + 1;
    // A part larger than a unit's cache has no more than that cache's worth of data to lose (a
    // capacity of 0: the topology names no cache there).
    const std::size_t cache =
        tree_.unit(plan.level, plan.whole.owner(tree_.units(plan.level))).capacity;
    std::size_t part_bytes = plan.begun_ns != 0 ? plan.size_bytes / parts : 0;
    if (cache != 0) {
      part_bytes = std::min(part_bytes, cache);
      // Each unit sweeps its share of the group's data every iteration, and its cache keeps at
      // most `cache` of that share: of a larger one, the part a thief would take (the one its
      // owner runs last) has mostly been evicted by the time it runs again, so count it as
      // resident in that proportion (none of it under strict LRU).
      const double width = plan.whole.hi - plan.whole.lo;
      const double share = width > 0 ? static_cast<double>(plan.size_bytes) / width : 0.0;
      const auto held = static_cast<double>(cache);
      if (share > held) {
        part_bytes = static_cast<std::size_t>(static_cast<double>(part_bytes) * (held / share));
      }
    }
    for_each_dominated(plan, [&](steal_range& r) {
      if (!r.valid || r.depth > plan.depth) {
        r = {plan.whole, plan.depth, plan.id, true, part_bytes, plan.begun_ns};
      }
    });
  }

  template <class F>
  void for_each_dominated(const group_plan& plan, F&& f) {
    const int first = plan.whole.owner(tree_.units(plan.level));
    const int end = std::min(tree_.units(plan.level), dist_range::floor_of(plan.whole.hi));
    for (int u = first; u < end; ++u) {
      worker_queues& wq = queues_of(tree_.server(plan.level, u));
      const std::lock_guard hold(wq.queues.lock);
      f(wq.range[static_cast<std::size_t>(plan.level)]);
      wq.range_version.fetch_add(1, std::memory_order_release);
    }
  }

  // A task that lies on one worker's unit: its groups need no plan (the most common group, and
  // the one a fine-grained program creates per task). Their children stay on this unit at the
  // creator's depth, and only which unit a task lies on places it, so they share the creator's
  // range: the core spawns them without hooks (task_frame::children_unhooked).
  bool within_one_worker(int level, const dist_range& r) const noexcept {
    return level == tree_.leaf_level() && !r.spans_units(tree_.units(level));
  }

  void assign(task_frame& f, int level, const dist_range& r, int depth,
              void* group) const noexcept {
    state_of(f) = {r, depth, static_cast<std::int16_t>(level), true, group};
    f.children_unhooked = within_one_worker(level, r);
  }
  // The same for a child of `plan` or its creator, from the facts the plan keeps.
  static void assign(task_frame& f, const group_plan& plan, const dist_range& r,
                     void* group) noexcept {
    state_of(f) = {r, plan.depth, static_cast<std::int16_t>(plan.level), true, group};
    f.children_unhooked = plan.leaf && !r.spans_units(plan.units);
  }

  const bool multi_level_;
  bool steal_ = true;
  bool patient_ = true;  // LOCUS_ADWS_PATIENCE: a thief waits before its first steal in a group
  cache_tree tree_;
  std::optional<tie_table> ties_;
  std::vector<std::unique_ptr<worker_queues>> queues_;
  multilevel::plan_pool<group_plan> plans_;
};

}  // namespace

void set_adws_steal_observer(adws_steal_observer observer) noexcept {
  steal_observer.store(observer, std::memory_order_relaxed);
}

std::unique_ptr<policy> make_adws_policy() {
  return std::make_unique<adws_policy>(false);
}

std::unique_ptr<policy> make_ml_adws_policy() {
  return std::make_unique<adws_policy>(true);
}

}  // namespace locus::detail
