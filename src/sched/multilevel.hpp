// Multi-level scheduling (seed 000: Shiina & Taura, IEEE TPDS 33(12), 2022; §4, Fig. 12-13) and
// the capacity rule of cache hierarchy flattening (§5, Fig. 15): the tree of caches over the
// workers, the caches tied to task groups, and the level each worker works at. Shared by the
// ADWS policies (adws.cpp: adws on a tree of memory and workers only, ml-adws on the whole tree)
// and ml-ws (ml_ws.cpp).
//
// Level 0 is the memory (the root, unbounded), the last level one private unit per worker, and
// the levels between are the caches shared by more than one worker, from the outermost in. Units
// of one level are numbered in worker order, so the units under a range of units form a range.
//
// Leaders (Fig. 13): the paper elects them bottom-up and moves them as groups are tied; here the
// leader (server) of a unit is always its first worker, which is what the bottom-up election
// gives at start-up. A worker serves the units whose first worker it is, from its topmost such
// unit down to its private one, and works at the level of the first of them that is not tied:
// tying a unit moves its server one level down, and untying moves it back. So that untying
// happens on the server, the continuation of a tied group always moves to the server of the
// tied unit before the group ends (policy::group_end returns it), where the paper lets whichever
// worker runs the continuation become the leader. A unit holds at most one tied group (a
// compare-and-swap); a group that cannot be tied (its unit is busy, or it does not run on the
// unit's server) is scheduled at the level where it is.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "locus/detail/spawn.hpp"
#include "sched/adws_range.hpp"
#include "sched/spin_lock.hpp"
#include "sched/task_frame.hpp"

namespace locus::topo {
class topology;
}

namespace locus::detail {
class context;
}

namespace locus::detail::multilevel {

inline constexpr std::size_t unbounded = static_cast<std::size_t>(-1);

struct cache_unit {
  std::size_t capacity = 0;  // bytes; `unbounded` for the memory
  int first_worker = 0;      // the workers under it are [first_worker, last_worker)
  int last_worker = 0;
  int first_child = 0;  // its units one level down are [first_child, last_child)
  int last_child = 0;
};

class cache_tree {
 public:
  // `flat`: memory and workers only (single-level scheduling).
  static cache_tree build(const topo::topology& t, int workers, bool flat);

  int levels() const noexcept { return static_cast<int>(units_.size()); }
  int leaf_level() const noexcept { return levels() - 1; }
  int units(int level) const noexcept { return static_cast<int>(units_[idx(level)].size()); }
  const cache_unit& unit(int level, int i) const noexcept { return units_[idx(level)][idx(i)]; }
  int unit_of(int level, int worker) const noexcept { return unit_of_[idx(level)][idx(worker)]; }
  int server(int level, int i) const noexcept { return unit(level, i).first_worker; }
  // The shallowest level at which `worker` serves a unit.
  int top_level(int worker) const noexcept { return top_level_[idx(worker)]; }
  // The units at level `to` under units [a, b] of level `from` (from <= to): [first, last).
  std::pair<int, int> descendants(int from, int a, int b, int to) const noexcept;
  // Total capacity of units [a, b] of `level` (saturating).
  std::size_t capacity(int level, int a, int b) const noexcept;
  // Fig. 15, lines 63-67: the level to schedule a group of `size` bytes at, for a distribution
  // range whose integer parts are i and j at `level`.
  int flatten_level(int level, int i, int j, std::size_t size) const noexcept;
  // e.g. "memory > 2 x 2288KB > 16 x 64KB".
  std::string describe() const;

 private:
  static std::size_t idx(int i) noexcept { return static_cast<std::size_t>(i); }
  std::vector<std::vector<cache_unit>> units_;
  std::vector<std::vector<int>> unit_of_;
  std::vector<int> top_level_;
};

// Which units are tied to a group. The memory is always tied (every root group is scheduled
// among its children) and private units never are.
class tie_table {
 public:
  explicit tie_table(const cache_tree& tree);
  // Ties units [a, b] of `level` and their descendants down to level `to` - 1, or none of them.
  bool try_tie(int level, int a, int b, int to) noexcept;
  void untie(int level, int a, int b, int to) noexcept;
  bool tied(int level, int i) const noexcept;
  // The level `worker` works at: the first unit it serves, from the top, that is not tied.
  int active_level(int worker) const noexcept;

 private:
  const cache_tree& tree_;
  std::vector<std::unique_ptr<std::atomic<bool>[]>> tied_;
};

// The multi-level part of a group's plan: which units it tied, so that its end unties them and
// its continuation can be sent to their server.
struct tie_record {
  int level = -1;  // -1: not tied
  int first = 0, last = 0;
  int to = 0;  // the level its children are scheduled at
  bool active() const noexcept { return level >= 0; }
};

// The per-task state of the multi-level policies (their policy_slot): the level of the tree of
// caches the task is scheduled at, and for ADWS its distribution range in units of that level,
// its depth among cross-worker groups and the plan of the group it is a child of. All zero (not
// `set`) for a root.
struct task_state {
  dist_range range;
  std::int32_t depth;
  std::int16_t level;
  bool set;
  void* group;
};

inline task_state& state_of(task_frame& f) noexcept {
  return f.slot.as<task_state>();
}

// The items a thief may take (ADWS's steal range, §3.2): tasks whose distribution range lies in
// [x, y) and whose depth is at least `depth`.
struct steal_bounds {
  dist_range range;
  int depth = 0;
  bool admits(const task_state& t) const noexcept {
    return !t.set || (range.contains(t.range) && t.depth >= depth);
  }
};

// A worker's queues of one level.
struct level_queues {
  std::vector<std::deque<work_item*>> by_depth;  // migration queues (ADWS), by depth
  // Primary items set aside: the queue's contents when this worker moved a level down, and
  // items a thief took from the queue but that belong to this level. Newest at the back.
  std::deque<work_item*> held;
};

// Per-worker queues of every level, under one lock; `count(level)` is the number of items of a
// level, read without the lock by a worker about to sleep. The lock and the counts of the first
// levels share one cache line: a worker routing a child to another takes the lock and adds to
// the count, and the receiving worker reads the count and takes the lock, so one line moves
// between them per item instead of two.
struct alignas(64) worker_levels {
  static constexpr int counts_on_line = 15;
  explicit worker_levels(int levels);

  spin_flag lock;

 private:
  std::atomic<int> near_[counts_on_line] = {};

 public:
  // Read-only once built: it may share a line with whatever follows.
  std::vector<level_queues> at;

  void add(int level, int n = 1) noexcept { count(level).fetch_add(n, std::memory_order_seq_cst); }
  work_item* take_front(int level, std::deque<work_item*>& q);
  work_item* take_back(int level, std::deque<work_item*>& q);
  // The first item of `q` that `bounds` admits (any, without bounds), from the front or the
  // back; null if none.
  work_item* take_admitted(int level, std::deque<work_item*>& q, const steal_bounds* bounds,
                           bool from_back);
  // Items of `level` waiting here (read without the lock, by a worker about to sleep).
  bool has(int level) const noexcept { return count(level).load(std::memory_order_seq_cst) > 0; }
  // With `lock` held: the newest held item of `level`.
  work_item* take_own(int level);

 private:
  std::atomic<int>& count(int level) noexcept {
    return level < counts_on_line ? near_[level]
                                  : far_[static_cast<std::size_t>(level - counts_on_line)];
  }
  const std::atomic<int>& count(int level) const noexcept {
    return level < counts_on_line ? near_[level]
                                  : far_[static_cast<std::size_t>(level - counts_on_line)];
  }
  std::unique_ptr<std::atomic<int>[]> far_;  // levels past the line's, in deep topologies
};

// Group plans per worker: a group ends on whichever worker resumes its creator and gives its
// plan back to that worker's list, so that a plan costs no lock and no allocation per group.
// Each list is touched by its own worker's thread only.
template <class Plan>
class plan_pool {
 public:
  void reset(int workers) { lists_ = std::vector<list>(static_cast<std::size_t>(workers)); }
  // A plan, and how many this worker has taken so far (this one included).
  std::pair<Plan*, std::uint64_t> take(int worker) {
    list& l = lists_[static_cast<std::size_t>(worker)];
    ++l.taken;
    if (l.free.empty()) return {l.owned.emplace_back(std::make_unique<Plan>()).get(), l.taken};
    Plan* plan = l.free.back();
    l.free.pop_back();
    return {plan, l.taken};
  }
  void give_back(int worker, Plan* plan) {
    lists_[static_cast<std::size_t>(worker)].free.push_back(plan);
  }

 private:
  struct alignas(64) list {  // one cache line or more each: workers push and pop concurrently
    std::vector<std::unique_ptr<Plan>> owned;
    std::vector<Plan*> free;
    std::uint64_t taken = 0;
  };
  std::vector<list> lists_;
};

// Moves every item of the calling worker's queue to the back of its `held` items (oldest first):
// it goes a level down, and what it left at its old level stays stealable there.
void set_aside_queue(context& ctx, worker_levels& q, int level);

// Steals from worker `victim`'s primary items at `level` (its queues `q`): its oldest held item
// that `bounds` admits (any, without bounds), else its queue's oldest if it works at that level
// now. An item of another level taken from the queue (the victim moved between the check and
// the steal) goes to the victim's held items of its own level, one outside the bounds to the
// newest end of its held items of this level, where the victim takes it as soon as its queue is
// empty: its place in the victim's order of work. Uncounted: called inside context::steal_with.
work_item* steal_primary(context& ctx, int victim, worker_levels& q, int level,
                         const tie_table& ties, const steal_bounds* bounds = nullptr);

// Wakes the workers [first, last) that sleep (their units got work to steal).
void wake_workers(context& ctx, int first, int last);

}  // namespace locus::detail::multilevel
