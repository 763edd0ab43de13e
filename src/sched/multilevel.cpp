#include "sched/multilevel.hpp"

#include <algorithm>
#include <iterator>
#include <map>

#include "sched/context.hpp"
#include "topology/topology.hpp"

namespace locus::detail::multilevel {
namespace {

std::size_t saturating_add(std::size_t a, std::size_t b) noexcept {
  return a > unbounded - b ? unbounded : a + b;
}

std::string bytes_text(std::size_t b) {
  if (b == unbounded) return "memory";
  if (b >= (std::size_t{1} << 20) && b % (std::size_t{1} << 20) == 0) {
    return std::to_string(b >> 20) + "MB";
  }
  return std::to_string(b >> 10) + "KB";
}

// Caches of one topology depth, clipped to the workers: {first worker, last worker, bytes}.
struct span {
  int first, last;
  std::size_t bytes;
};

}  // namespace

cache_tree cache_tree::build(const topo::topology& t, int workers, bool flat) {
  std::map<int, std::vector<span>> by_depth;
  std::vector<std::size_t> private_bytes(static_cast<std::size_t>(workers), 0);
  for (const topo::node& n : t.nodes()) {
    if (n.kind != topo::node_kind::cache) continue;
    const int first = std::max(0, n.first_leaf);
    const int last = std::min(workers, n.last_leaf);
    if (first >= last) continue;
    if (last - first == 1) {
      auto& p = private_bytes[static_cast<std::size_t>(first)];
      p = std::max(p, n.cache_bytes);
    }
    by_depth[n.depth].push_back({first, last, n.cache_bytes});
  }
  std::vector<std::vector<span>> shared;
  if (!flat) {
    for (auto& [depth, caches] : by_depth) {
      std::sort(caches.begin(), caches.end(),
                [](const span& a, const span& b) { return a.first < b.first; });
      // A level of the tree of caches covers every worker and is shared by some of them.
      bool covers = caches.front().first == 0 && caches.back().last == workers;
      bool is_shared = false;
      for (std::size_t i = 0; i < caches.size(); ++i) {
        is_shared = is_shared || caches[i].last - caches[i].first > 1;
        if (i > 0 && caches[i].first != caches[i - 1].last) covers = false;
      }
      if (!covers || !is_shared) continue;
      const bool same_split =
          !shared.empty() && shared.back().size() == caches.size() &&
          std::equal(caches.begin(), caches.end(), shared.back().begin(),
                     [](const span& a, const span& b) { return a.first == b.first; });
      if (same_split) {
        // Two caches over the same workers are one unit, as big as the larger.
        for (std::size_t i = 0; i < caches.size(); ++i) {
          shared.back()[i].bytes = std::max(shared.back()[i].bytes, caches[i].bytes);
        }
        continue;
      }
      shared.push_back(caches);
    }
  }
  std::vector<std::vector<span>> levels;
  levels.push_back({{0, workers, unbounded}});
  for (auto& l : shared) levels.push_back(std::move(l));
  std::vector<span> leaves;
  for (int w = 0; w < workers; ++w) {
    leaves.push_back({w, w + 1, private_bytes[static_cast<std::size_t>(w)]});
  }
  levels.push_back(std::move(leaves));

  cache_tree tree;
  const std::size_t nlevels = levels.size();
  tree.units_.resize(nlevels);
  tree.unit_of_.assign(nlevels, std::vector<int>(static_cast<std::size_t>(workers), 0));
  for (std::size_t l = 0; l < nlevels; ++l) {
    for (std::size_t u = 0; u < levels[l].size(); ++u) {
      const span& s = levels[l][u];
      tree.units_[l].push_back({s.bytes, s.first, s.last, 0, 0});
      for (int w = s.first; w < s.last; ++w) {
        tree.unit_of_[l][static_cast<std::size_t>(w)] = static_cast<int>(u);
      }
    }
  }
  for (std::size_t l = 0; l + 1 < nlevels; ++l) {
    for (cache_unit& c : tree.units_[l]) {
      c.first_child = tree.unit_of_[l + 1][static_cast<std::size_t>(c.first_worker)];
      c.last_child = tree.unit_of_[l + 1][static_cast<std::size_t>(c.last_worker - 1)] + 1;
    }
  }
  tree.top_level_.assign(static_cast<std::size_t>(workers), static_cast<int>(nlevels) - 1);
  for (int w = 0; w < workers; ++w) {
    for (int l = 0; l < static_cast<int>(nlevels); ++l) {
      if (tree.server(l, tree.unit_of(l, w)) == w) {
        tree.top_level_[static_cast<std::size_t>(w)] = l;
        break;
      }
    }
  }
  return tree;
}

std::pair<int, int> cache_tree::descendants(int from, int a, int b, int to) const noexcept {
  return {unit_of(to, unit(from, a).first_worker), unit_of(to, unit(from, b).last_worker - 1) + 1};
}

std::size_t cache_tree::capacity(int level, int a, int b) const noexcept {
  std::size_t total = 0;
  for (int u = a; u <= b; ++u) total = saturating_add(total, unit(level, u).capacity);
  return total;
}

int cache_tree::flatten_level(int level, int i, int j, std::size_t size) const noexcept {
  const int last = units(level) - 1;
  i = std::clamp(i, 0, last);
  const int k = std::clamp(std::max(i, j - 1), i, last);
  int next = level;
  std::size_t cap = capacity(level, i, k);
  while (next < leaf_level() && size <= cap) {
    ++next;
    const auto [a, b] = descendants(level, i, k, next);
    cap = capacity(next, a, b - 1);
  }
  return next;
}

std::string cache_tree::describe() const {
  std::string s;
  for (int l = 0; l < levels(); ++l) {
    if (l > 0) s += " > ";
    if (l > 0) s += std::to_string(units(l)) + " x ";
    s += bytes_text(unit(l, 0).capacity);
  }
  return s;
}

tie_table::tie_table(const cache_tree& tree) : tree_(tree) {
  for (int l = 0; l < tree.levels(); ++l) {
    const auto n = static_cast<std::size_t>(tree.units(l));
    tied_.push_back(std::make_unique<std::atomic<bool>[]>(n));
    for (std::size_t u = 0; u < n; ++u) tied_.back()[u].store(false, std::memory_order_relaxed);
  }
}

bool tie_table::try_tie(int level, int a, int b, int to) noexcept {
  for (int l = std::max(level, 1); l < to; ++l) {
    const auto [first, last] = tree_.descendants(level, a, b, l);
    for (int u = first; u < last; ++u) {
      bool expected = false;
      if (!tied_[static_cast<std::size_t>(l)][static_cast<std::size_t>(u)].compare_exchange_strong(
              expected, true, std::memory_order_acq_rel)) {
        // Busy: give back what this call took, in reverse.
        for (int v = first; v < u; ++v) {
          tied_[static_cast<std::size_t>(l)][static_cast<std::size_t>(v)].store(
              false, std::memory_order_release);
        }
        if (l > std::max(level, 1)) untie(level, a, b, l);
        return false;
      }
    }
  }
  return true;
}

void tie_table::untie(int level, int a, int b, int to) noexcept {
  for (int l = std::max(level, 1); l < to; ++l) {
    const auto [first, last] = tree_.descendants(level, a, b, l);
    for (int u = first; u < last; ++u) {
      tied_[static_cast<std::size_t>(l)][static_cast<std::size_t>(u)].store(
          false, std::memory_order_release);
    }
  }
}

bool tie_table::tied(int level, int i) const noexcept {
  if (level == 0) return true;
  return tied_[static_cast<std::size_t>(level)][static_cast<std::size_t>(i)].load(
      std::memory_order_acquire);
}

int tie_table::active_level(int worker) const noexcept {
  const int leaf = tree_.leaf_level();
  for (int l = std::max(1, tree_.top_level(worker)); l < leaf; ++l) {
    if (!tied(l, tree_.unit_of(l, worker))) return l;
  }
  return leaf;
}

static_assert(sizeof(std::atomic<int>) * (1 + worker_levels::counts_on_line) <= 64 &&
                  sizeof(spin_flag) <= sizeof(std::atomic<int>),
              "the lock and the first counts fill one line");

worker_levels::worker_levels(int levels) : at(static_cast<std::size_t>(levels)) {
  if (levels > counts_on_line) {
    far_ = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(levels - counts_on_line));
  }
}

work_item* worker_levels::take_front(int level, std::deque<work_item*>& q) {
  work_item* item = q.front();
  q.pop_front();
  count(level).fetch_sub(1, std::memory_order_relaxed);
  return item;
}

work_item* worker_levels::take_back(int level, std::deque<work_item*>& q) {
  work_item* item = q.back();
  q.pop_back();
  count(level).fetch_sub(1, std::memory_order_relaxed);
  return item;
}

work_item* worker_levels::take_admitted(int level, std::deque<work_item*>& q,
                                        const steal_bounds* bounds, bool from_back) {
  const auto admitted = [bounds](work_item* item) {
    return bounds == nullptr || bounds->admits(state_of(context::record_of(*item)));
  };
  auto it = q.end();
  if (from_back) {
    const auto r = std::find_if(q.rbegin(), q.rend(), admitted);
    if (r != q.rend()) it = std::prev(r.base());
  } else {
    it = std::find_if(q.begin(), q.end(), admitted);
  }
  if (it == q.end()) return nullptr;
  work_item* item = *it;
  q.erase(it);
  count(level).fetch_sub(1, std::memory_order_relaxed);
  return item;
}

work_item* worker_levels::take_own(int level) {
  auto& held = at[static_cast<std::size_t>(level)].held;
  if (!held.empty()) return take_back(level, held);
  return nullptr;
}

void set_aside_queue(context& ctx, worker_levels& q, int level) {
  std::vector<work_item*> newest_first;
  while (work_item* item = ctx.pop_own()) newest_first.push_back(item);
  if (newest_first.empty()) return;
  const std::lock_guard hold(q.lock);
  auto& held = q.at[static_cast<std::size_t>(level)].held;
  held.insert(held.end(), newest_first.rbegin(), newest_first.rend());
  q.add(level, static_cast<int>(newest_first.size()));
}

work_item* steal_primary(context& ctx, int victim, worker_levels& q, int level,
                         const tie_table& ties, const steal_bounds* bounds) {
  // Checked without the lock first: idle thieves must not keep a busy victim's lock bouncing.
  if (!q.has(level) && ctx.queue_looks_empty(victim)) return nullptr;
  // Thieves take the victim's items one at a time under its lock: queue items set aside reach
  // its held items in the order they had in the queue (oldest first), so that the victim, which
  // takes the newest held item first, keeps its own order of work.
  const std::lock_guard hold(q.lock);
  auto& held = q.at[static_cast<std::size_t>(level)].held;
  if (work_item* item = q.take_admitted(level, held, bounds, false)) return item;
  if (ties.active_level(victim) != level) return nullptr;
  work_item* item = ctx.take_from(victim);
  if (item == nullptr) return nullptr;
  const task_state& t = state_of(context::record_of(*item));
  const int own = t.level;
  const bool this_level = own == level || own < 0 || own >= static_cast<int>(q.at.size());
  if (this_level && (bounds == nullptr || bounds->admits(t))) return item;
  if (this_level) {
    held.push_back(item);
    q.add(level);
  } else {
    q.at[static_cast<std::size_t>(own)].held.push_front(item);
    q.add(own);
  }
  return nullptr;
}

void wake_workers(context& ctx, int first, int last) {
  for (int w = first; w < last; ++w) {
    if (w != ctx.self()) ctx.wake(w);
  }
}

}  // namespace locus::detail::multilevel
