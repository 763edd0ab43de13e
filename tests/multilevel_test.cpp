// Multi-level scheduling (seed 000 §4-5): the tree of caches, Fig. 15's flattening level on
// hand-computed cases, ties, and, at run time, that ml-adws and ml-ws keep every descendant of
// a tied group under its cache and never give one cache two groups at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "locus/locus.hpp"
#include "sched/multilevel.hpp"
#include "topology/topology.hpp"

namespace {

using locus::detail::multilevel::cache_tree;
using locus::detail::multilevel::tie_table;
using locus::detail::multilevel::unbounded;

constexpr std::size_t MB = std::size_t{1} << 20;
constexpr std::size_t KB = std::size_t{1} << 10;

// Fig. 12: four shared caches of four workers each.
constexpr const char* fig12 = "pack:4 l3:1(size=16MB) l2:4(size=1MB) core:1 pu:1";
// Three cache levels: two L3s, each over two L2s shared by two workers with private L1s.
constexpr const char* three_levels =
    "pack:2 l3:1(size=32MB) l2:2(size=4MB) l1d:2(size=32KB) core:1 pu:1";
constexpr const char* synthetic16 = "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1";

cache_tree tree_of(const char* description, int workers, bool flat = false) {
  return cache_tree::build(locus::topo::topology::synthetic(description), workers, flat);
}

TEST(CacheTree, LevelsUnitsAndServersFromTheTopology) {
  const cache_tree t = tree_of(fig12, 16);
  ASSERT_EQ(t.levels(), 3);
  EXPECT_EQ(t.units(0), 1);
  EXPECT_EQ(t.unit(0, 0).capacity, unbounded);
  ASSERT_EQ(t.units(1), 4);
  ASSERT_EQ(t.units(2), 16);
  for (int u = 0; u < 4; ++u) {
    EXPECT_EQ(t.unit(1, u).capacity, 16 * MB);
    EXPECT_EQ(t.unit(1, u).first_worker, 4 * u);
    EXPECT_EQ(t.unit(1, u).last_worker, 4 * u + 4);
    EXPECT_EQ(t.unit(1, u).first_child, 4 * u);
    EXPECT_EQ(t.unit(1, u).last_child, 4 * u + 4);
  }
  EXPECT_EQ(t.unit(2, 5).capacity, 1 * MB);
  EXPECT_EQ(t.unit_of(1, 9), 2);
  // Leaders elected bottom-up (Fig. 13): worker 0 the memory's, 4, 8 and 12 their L3's.
  EXPECT_EQ(t.top_level(0), 0);
  EXPECT_EQ(t.top_level(4), 1);
  EXPECT_EQ(t.top_level(12), 1);
  EXPECT_EQ(t.top_level(13), 2);
  EXPECT_EQ(t.describe(), "memory > 4 x 16MB > 16 x 1MB");

  const cache_tree deep = tree_of(three_levels, 8);
  EXPECT_EQ(deep.describe(), "memory > 2 x 32MB > 4 x 4MB > 8 x 32KB");
  const cache_tree flat = tree_of(fig12, 16, true);
  EXPECT_EQ(flat.describe(), "memory > 16 x 1MB");
  // Fewer workers than leaves: the caches are cut to the workers there are.
  EXPECT_EQ(tree_of(fig12, 6).describe(), "memory > 2 x 16MB > 6 x 1MB");
}

TEST(CacheTree, FlatteningLevelOfFig15OnHandComputedCases) {
  const cache_tree t = tree_of(fig12, 16);  // levels: memory, 4 x 16MB, 16 x 1MB
  // The root group: bigger than all L3s together stays among the L3s (level 1); one that fits
  // them goes down to the workers (the leaf level is the last).
  EXPECT_EQ(t.flatten_level(0, 0, 1, 100 * MB), 1);
  EXPECT_EQ(t.flatten_level(0, 0, 1, 64 * MB), 2);
  EXPECT_EQ(t.flatten_level(0, 0, 1, 0), 2);
  // The paper's example: a cross-worker task [2.x, 4.0) at level 1 covers C_2 and C_3 (32MB).
  EXPECT_EQ(t.flatten_level(1, 2, 4, 20 * MB), 2);
  EXPECT_EQ(t.flatten_level(1, 2, 4, 40 * MB), 1);
  // [2.x, 3.y): C_3 is only partly covered and left out (footnote 5): C_2 alone, 16MB.
  EXPECT_EQ(t.flatten_level(1, 2, 3, 20 * MB), 1);
  EXPECT_EQ(t.flatten_level(1, 2, 3, 10 * MB), 2);
  // [2.0, 2.5): j - 1 < i, so C_2.
  EXPECT_EQ(t.flatten_level(1, 2, 2, 16 * MB), 2);
  EXPECT_EQ(t.flatten_level(1, 2, 2, 16 * MB + 1), 1);
  // At the workers there is nothing to flatten.
  EXPECT_EQ(t.flatten_level(2, 3, 4, 0), 2);

  const cache_tree d = tree_of(three_levels, 8);     // memory, 2 x 32MB, 4 x 4MB, 8 x 32KB
  EXPECT_EQ(d.flatten_level(0, 0, 1, 100 * MB), 1);  // > 64MB
  EXPECT_EQ(d.flatten_level(0, 0, 1, 50 * MB), 2);   // <= 64MB, > 16MB of the L2s
  EXPECT_EQ(d.flatten_level(0, 0, 1, 10 * MB), 3);   // fits the L2s: down to the workers
  EXPECT_EQ(d.flatten_level(1, 0, 1, 20 * MB), 2);   // one L3: > its 2 x 4MB
  EXPECT_EQ(d.flatten_level(1, 0, 1, 6 * MB), 3);    // <= 8MB, > 4 x 32KB
  EXPECT_EQ(d.flatten_level(1, 1, 2, 40 * MB), 1);   // does not fit its L3
  EXPECT_EQ(d.flatten_level(2, 1, 2, 100 * KB), 3);  // > 4MB? no: fits, down to its workers
  EXPECT_EQ(d.flatten_level(2, 1, 2, 5 * MB), 2);    // > 4MB: stays among the L2s
}

TEST(TieTable, OneGroupPerUnitAndTheWorkingLevelFollowsTheTies) {
  const cache_tree t = tree_of(three_levels, 8);
  tie_table ties(t);
  // Nothing tied: worker 0 leads the memory but works among the L3s; worker 4 leads L3 #1,
  // worker 2 L2 #1, worker 3 only its own unit.
  EXPECT_EQ(ties.active_level(0), 1);
  EXPECT_EQ(ties.active_level(4), 1);
  EXPECT_EQ(ties.active_level(2), 2);
  EXPECT_EQ(ties.active_level(3), 3);
  ASSERT_TRUE(ties.try_tie(1, 0, 0, 2));  // L3 #0 to a group scheduled among its L2s
  EXPECT_FALSE(ties.try_tie(1, 0, 0, 2));
  EXPECT_FALSE(ties.try_tie(1, 0, 1, 3));  // overlaps: takes nothing
  EXPECT_FALSE(ties.tied(1, 1));
  EXPECT_EQ(ties.active_level(0), 2);
  EXPECT_EQ(ties.active_level(2), 2);
  EXPECT_EQ(ties.active_level(4), 1);
  ASSERT_TRUE(ties.try_tie(2, 0, 0, 3));
  EXPECT_EQ(ties.active_level(0), 3);
  ties.untie(2, 0, 0, 3);
  ties.untie(1, 0, 0, 2);
  EXPECT_EQ(ties.active_level(0), 1);
  // Flattening the root to the workers ties every cache on the way.
  ASSERT_TRUE(ties.try_tie(0, 0, 0, 3));
  for (int w = 0; w < 8; ++w) EXPECT_EQ(ties.active_level(w), 3) << "worker " << w;
  ties.untie(0, 0, 0, 3);
  EXPECT_EQ(ties.active_level(4), 1);
}

// A program with two kinds of groups: one too big for any cache at the top, and below it
// groups that fit one L3 (size_hint 4MB of 8MB), each with a balanced tree of leaves.
struct recorder {
  explicit recorder(int leaves_total) : ran_on(static_cast<std::size_t>(leaves_total)) {
    for (auto& r : ran_on) r = -1;
  }
  std::vector<std::atomic<int>> ran_on;
  std::vector<int> group_worker;  // the worker that created each fitting group
  std::atomic<int> in_cache[2] = {0, 0};
  std::atomic<int> most_in_cache{0};
  std::atomic<int> wrong_cache{0};
};

void leaf_tree(int first, int count, recorder& r, int package, bool sleepy) {
  if (count == 1) {
    const int w = locus::this_worker();
    r.ran_on[static_cast<std::size_t>(first)] = w;
    if (w / 8 != package) r.wrong_cache.fetch_add(1);
    if (sleepy) std::this_thread::sleep_for(std::chrono::microseconds(300));
    return;
  }
  const int left = count / 2;
  locus::task_group tg{locus::work_hint{static_cast<double>(count)}};
  tg.run([&, first, left] { leaf_tree(first, left, r, package, sleepy); },
         locus::work_hint{static_cast<double>(left)});
  tg.run([&, first, left, count] { leaf_tree(first + left, count - left, r, package, sleepy); },
         locus::work_hint{static_cast<double>(count - left)});
  tg.wait();
}

constexpr int groups_per_child = 2;
constexpr int leaves_per_group = 32;

// One fitting group: counts how many fitting groups are in progress in the creator's L3.
void fitting_group(int index, recorder& r, bool sleepy) {
  const int package = locus::this_worker() / 8;
  r.group_worker[static_cast<std::size_t>(index)] = locus::this_worker();
  const int now = r.in_cache[package].fetch_add(1) + 1;
  int seen = r.most_in_cache.load();
  while (now > seen && !r.most_in_cache.compare_exchange_weak(seen, now)) {
  }
  locus::task_group tg{locus::work_hint{2.0}, locus::size_hint{4 * MB}};
  const int first = index * leaves_per_group;
  const int half = leaves_per_group / 2;
  tg.run([&, first] { leaf_tree(first, half, r, package, sleepy); }, locus::work_hint{1.0});
  tg.run([&, first] { leaf_tree(first + half, half, r, package, sleepy); }, locus::work_hint{1.0});
  tg.wait();
  r.in_cache[package].fetch_sub(1);
}

void program(int children, recorder& r, bool sleepy) {
  locus::task_group top{locus::work_hint{static_cast<double>(children)}, locus::size_hint{64 * MB}};
  for (int c = 0; c < children; ++c) {
    top.run(
        [&, c] {
          for (int g = 0; g < groups_per_child; ++g)
            fitting_group(c * groups_per_child + g, r, sleepy);
        },
        locus::work_hint{1.0});
  }
  top.wait();
}

class TiedGroups : public ::testing::TestWithParam<const char*> {};

TEST_P(TiedGroups, DescendantsStayUnderTheTiedCacheAndOneGroupPerCache) {
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  constexpr int children = 8;
  constexpr int groups = children * groups_per_child;
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 16, .topology = synthetic16}};
  std::set<int> packages_used;
  std::set<int> workers_used;
  for (int iteration = 0; iteration < 2; ++iteration) {
    recorder r(groups * leaves_per_group);
    r.group_worker.assign(groups, -1);
    rt.exec([&] { program(children, r, true); });
    EXPECT_EQ(r.wrong_cache.load(), 0) << "leaves ran outside their group's L3";
    EXPECT_EQ(r.most_in_cache.load(), 1) << "two fitting groups ran in one L3 at once";
    for (auto& w : r.ran_on) {
      ASSERT_GE(w.load(), 0);
      workers_used.insert(w.load());
    }
    // Fitting groups are created by the L3s' leaders only (workers 0 and 8).
    for (int w : r.group_worker) {
      EXPECT_TRUE(w == 0 || w == 8) << "a fitting group was created on worker " << w;
      packages_used.insert(w / 8);
    }
  }
  EXPECT_EQ(packages_used.size(), 2u);
  // A tied group's leaves spread over its L3's workers.
  EXPECT_GE(workers_used.size(), 8u);
}

TEST_P(TiedGroups, GroupsThatFitNoCacheRunOnTheLeadersOnly) {
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 16, .topology = synthetic16}};
  std::vector<std::atomic<int>> ran_on(64);
  std::function<void(int, int)> big = [&](int first, int count) {
    if (count == 1) {
      ran_on[static_cast<std::size_t>(first)] = locus::this_worker();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      return;
    }
    locus::task_group tg{locus::work_hint{static_cast<double>(count)}, locus::size_hint{1024 * MB}};
    tg.run([&, first, count] { big(first, count / 2); },
           locus::work_hint{static_cast<double>(count / 2)});
    tg.run([&, first, count] { big(first + count / 2, count - count / 2); },
           locus::work_hint{static_cast<double>(count - count / 2)});
    tg.wait();
  };
  rt.exec([&] { big(0, 64); });
  std::set<int> used;
  for (auto& w : ran_on) used.insert(w.load());
  // Only the leaders of the two L3s schedule groups that fit neither L3 (Fig. 13, line 60).
  for (int w : used) EXPECT_TRUE(w == 0 || w == 8) << "worker " << w;
  EXPECT_EQ(used.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Policies, TiedGroups, ::testing::Values("ml-adws", "ml-ws"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// ml-adws with stealing off is deterministic: the top group among the two L3s by ADWS, each
// fitting group flattened to its L3's eight workers, its leaves planned there as in adws.
int planned_worker(int leaf_in_group, int unit) {
  // Two halves of 16 leaves, each a balanced binary tree, planned over [8u, 8u + 8).
  double lo = 8.0 * unit, hi = lo + 8.0;
  int first = 0, count = leaves_per_group;
  while (count > 1) {
    const int left = count / 2;
    const double mid = hi - (hi - lo) * (static_cast<double>(left) / count);
    if (leaf_in_group < first + left) {
      lo = mid;
      count = left;
    } else {
      hi = mid;
      first += left;
      count -= left;
    }
  }
  return static_cast<int>(std::floor(lo));
}

TEST(MlAdws, PlanWithStealingOffFlattensFittingGroupsOntoTheirCache) {
  ::setenv("LOCUS_ADWS_STEAL", "0", 1);
  locus::runtime rt{locus::options{.sched = "ml-adws", .workers = 16, .topology = synthetic16}};
  constexpr int children = 2;
  constexpr int groups = children * groups_per_child;
  recorder r(groups * leaves_per_group);
  r.group_worker.assign(groups, -1);
  rt.exec([&] { program(children, r, false); });
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  // Child 0 takes the top of [0, 2) (unit 1, led by worker 8), child 1 the rest (unit 0).
  for (int g = 0; g < groups; ++g) {
    const int unit = g / groups_per_child == 0 ? 1 : 0;
    EXPECT_EQ(r.group_worker[static_cast<std::size_t>(g)], 8 * unit) << "group " << g;
    for (int l = 0; l < leaves_per_group; ++l) {
      const int leaf = g * leaves_per_group + l;
      EXPECT_EQ(r.ran_on[static_cast<std::size_t>(leaf)].load(), planned_worker(l, unit))
          << "group " << g << " leaf " << l;
    }
  }
  for (auto s : rt.stats().total().steals_by_level) EXPECT_EQ(s, 0u);
}

// A root group that fits all the L3s together is flattened to the workers: single-level ADWS.
TEST(MlAdws, RootGroupThatFitsAllCachesIsScheduledOverAllWorkers) {
  ::setenv("LOCUS_ADWS_STEAL", "0", 1);
  locus::runtime rt{locus::options{.sched = "ml-adws", .workers = 16, .topology = synthetic16}};
  std::vector<std::atomic<int>> ran_on(16);
  rt.exec([&] {
    locus::task_group tg{locus::work_hint{16.0}, locus::size_hint{12 * MB}};
    for (int i = 0; i < 16; ++i) {
      tg.run([&, i] { ran_on[static_cast<std::size_t>(i)] = locus::this_worker(); },
             locus::work_hint{1.0});
    }
    tg.wait();
  });
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  // Child i of 16 equal ones takes the top of what is left: worker 15 - i.
  for (int i = 0; i < 16; ++i) EXPECT_EQ(ran_on[static_cast<std::size_t>(i)].load(), 15 - i);
}

// One L3 over all four workers: the memory above it has a single child. A group that fits the
// L3 is tied through the memory to it and scheduled among the workers, rather than among the
// memory's children, where only the L3's leader (worker 0) would work.
TEST(MlWs, GroupFittingTheOnlyL3IsScheduledAmongItsWorkers) {
  locus::runtime rt{locus::options{.sched = "ml-ws",
                                   .workers = 4,
                                   .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1"}};
  std::vector<std::atomic<int>> ran_on(32);
  rt.exec([&] {
    locus::task_group tg{locus::size_hint{4 * MB}};
    for (int i = 0; i < 32; ++i) {
      tg.run([&, i] {
        ran_on[static_cast<std::size_t>(i)] = locus::this_worker();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      });
    }
    tg.wait();
  });
  std::set<int> workers;
  for (auto& w : ran_on) workers.insert(w.load());
  EXPECT_GT(workers.size(), 1u) << "every leaf ran on worker " << *workers.begin();
}

}  // namespace
