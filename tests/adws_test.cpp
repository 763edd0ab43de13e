// ADWS deterministic task mapping (seed 000, §3.1, Fig. 5-7): with stealing off, every leaf of
// a hinted task tree runs on the worker an independent computation of the plan predicts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "adws_tree.hpp"
#include "locus/locus.hpp"

namespace {

using locus_test::build;
using locus_test::node;

// The plan, computed the way Fig. 7 states it: a child of work w, spawned while the group has
// W work left, gets the top w / W of what is left of the range; a task runs on floor(lo).
void predict(const node& n, double lo, double hi, int workers, std::vector<int>& where) {
  if (n.leaf_id >= 0) {
    where[static_cast<std::size_t>(n.leaf_id)] =
        std::clamp(static_cast<int>(std::floor(lo)), 0, workers - 1);
    return;
  }
  const double total = n.leaves;
  const double mid = hi - (hi - lo) * (n.left->leaves / total);
  predict(*n.left, mid, hi, workers, where);
  predict(*n.right, lo, mid, workers, where);  // w / W = 1: the rest of the range
}

void run(const node& n, std::vector<std::atomic<int>>& ran_on) {
  if (n.leaf_id >= 0) {
    ran_on[static_cast<std::size_t>(n.leaf_id)] = locus::this_worker();
    return;
  }
  locus::task_group tg{locus::work_hint{static_cast<double>(n.leaves)}};
  tg.run([&] { run(*n.left, ran_on); }, locus::work_hint{static_cast<double>(n.left->leaves)});
  tg.run([&] { run(*n.right, ran_on); }, locus::work_hint{static_cast<double>(n.right->leaves)});
  tg.wait();
}

struct plan_case {
  int workers;
  const char* topology;
  int leaves;
  std::uint64_t seed;  // 0: balanced
};

class AdwsPlan : public ::testing::TestWithParam<plan_case> {};

TEST_P(AdwsPlan, EveryLeafRunsOnItsPlannedWorkerWithStealingOff) {
  const plan_case c = GetParam();
  ::setenv("LOCUS_ADWS_STEAL", "0", 1);
  int ids = 0;
  const auto tree = build(c.leaves, c.seed, ids);
  std::vector<int> expected(static_cast<std::size_t>(ids));
  predict(*tree, 0.0, c.workers, c.workers, expected);
  locus::runtime rt{locus::options{.sched = "adws", .workers = c.workers, .topology = c.topology}};
  for (int iteration = 0; iteration < 3; ++iteration) {
    std::vector<std::atomic<int>> ran_on(static_cast<std::size_t>(ids));
    for (auto& r : ran_on) r = -1;
    rt.exec([&] { run(*tree, ran_on); });
    int wrong = 0;
    for (int i = 0; i < ids; ++i) {
      if (ran_on[static_cast<std::size_t>(i)] != expected[static_cast<std::size_t>(i)]) {
        if (wrong++ < 5) {
          ADD_FAILURE() << "leaf " << i << " ran on worker " << ran_on[static_cast<std::size_t>(i)]
                        << ", planned for " << expected[static_cast<std::size_t>(i)];
        }
      }
    }
    EXPECT_EQ(wrong, 0) << "iteration " << iteration;
  }
  // Every worker got leaves (the trees have more leaves than workers).
  std::vector<int> per_worker(static_cast<std::size_t>(c.workers));
  for (int w : expected) ++per_worker[static_cast<std::size_t>(w)];
  EXPECT_EQ(std::count(per_worker.begin(), per_worker.end(), 0), 0);
  for (auto s : rt.stats().total().steals_by_level) EXPECT_EQ(s, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Synthetic, AdwsPlan,
    ::testing::Values(plan_case{4, "pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1", 64, 0},
                      plan_case{4, "pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1", 61, 7},
                      plan_case{16, "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1", 256, 0},
                      plan_case{16, "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1", 200, 11},
                      plan_case{56, "pack:2 l3:1(size=32MB) l2:28(size=1MB) core:1 pu:1", 448, 0},
                      plan_case{56, "pack:2 l3:1(size=32MB) l2:28(size=1MB) core:1 pu:1", 500, 5}),
    [](const auto& info) {
      return std::to_string(info.param.workers) + "workers_" +
             (info.param.seed == 0 ? "balanced" : "unbalanced");
    });

}  // namespace

namespace {

constexpr const char* synthetic16 = "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1";

// Leaves that take time without taking a CPU, so that 16 workers oversubscribed on a small
// machine all make progress as they would on 16 cores. Long enough (8 ms), and enough of them
// (32 per worker), that the delays of an oversubscribed, sanitizer-slowed host stay small beside
// a worker's share: a worker that starts late loses a leaf or two to the thieves of its
// dominant group when the others finish (pairs of workers form one once either's half is done,
// §3.2). With 16 leaves of 5 ms per worker, TSan gave a stability of 0.84-0.87.
// Long enough that the scheduler's own work is small beside a leaf: sixteen workers share two
// CPUs, and under a sanitizer their scheduling runs several times slower (on some hosts 8 ms
// leaves then put a tenth of them off plan).
#if defined(LOCUS_TSAN) || defined(LOCUS_ASAN)
constexpr auto sleepy_leaf_time = std::chrono::milliseconds(24);
#else
constexpr auto sleepy_leaf_time = std::chrono::milliseconds(8);
#endif

void sleepy_leaf(const node& n, std::vector<std::atomic<int>>& ran_on) {
  ran_on[static_cast<std::size_t>(n.leaf_id)] = locus::this_worker();
  std::this_thread::sleep_for(sleepy_leaf_time);
}

void run_sleepy(const node& n, std::vector<std::atomic<int>>& ran_on) {
  if (n.leaf_id >= 0) {
    sleepy_leaf(n, ran_on);
    return;
  }
  locus::task_group tg{locus::work_hint{static_cast<double>(n.leaves)}};
  tg.run([&] { run_sleepy(*n.left, ran_on); },
         locus::work_hint{static_cast<double>(n.left->leaves)});
  tg.run([&] { run_sleepy(*n.right, ran_on); },
         locus::work_hint{static_cast<double>(n.right->leaves)});
  tg.wait();
}

struct placement {
  double on_plan = 0;    // share of leaves on their planned worker, all iterations
  double stability = 0;  // share of leaves on the same worker as in the previous iteration
};

placement measure(const char* sched, int iterations) {
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  int ids = 0;
  const auto tree = build(512, 0, ids);
  std::vector<int> plan(static_cast<std::size_t>(ids));
  predict(*tree, 0.0, 16, 16, plan);
  locus::runtime rt{locus::options{.sched = sched, .workers = 16, .topology = synthetic16}};
  std::vector<int> previous;
  int on_plan = 0, same = 0, compared = 0;
  for (int it = 0; it < iterations; ++it) {
    std::vector<std::atomic<int>> ran_on(static_cast<std::size_t>(ids));
    rt.exec([&] { run_sleepy(*tree, ran_on); });
    for (int i = 0; i < ids; ++i) {
      const int w = ran_on[static_cast<std::size_t>(i)];
      on_plan += w == plan[static_cast<std::size_t>(i)];
      if (!previous.empty()) {
        same += w == previous[static_cast<std::size_t>(i)];
        ++compared;
      }
    }
    previous.assign(ran_on.begin(), ran_on.end());
  }
  return {static_cast<double>(on_plan) / (ids * iterations), static_cast<double>(same) / compared};
}

TEST(AdwsStealing, BalancedHintedTreeStaysOnPlanAndStableAcrossIterations) {
  const placement adws = measure("adws", 4);
  const placement ws = measure("ws", 4);
  RecordProperty("adws_on_plan", std::to_string(adws.on_plan));
  RecordProperty("adws_stability", std::to_string(adws.stability));
  RecordProperty("ws_stability", std::to_string(ws.stability));
  std::printf("on plan: adws %.3f ws %.3f; stability: adws %.3f ws %.3f\n", adws.on_plan,
              ws.on_plan, adws.stability, ws.stability);
  // A leaf a late worker loses in a middle iteration breaks two comparisons (with the iteration
  // before and the one after), so the bound on stability is twice as far from 1 as on_plan's.
  // Under a sanitizer on a loaded CI host, workers start late more often: 0.926 on plan came
  // with 0.898 stability there (release builds give 1.000; ws about 0.07 in both).
#if defined(LOCUS_TSAN) || defined(LOCUS_ASAN)
  constexpr double min_on_plan = 0.85;
#else
  constexpr double min_on_plan = 0.9;
#endif
  EXPECT_GE(adws.on_plan, min_on_plan);
  EXPECT_GE(adws.stability, 1.0 - 2 * (1.0 - min_on_plan));
  EXPECT_LT(ws.stability, adws.stability);
}

// Wrong, zero, huge and missing hints: every leaf runs exactly once, nothing hangs, and with
// stealing on the work spreads over all workers even when the hints put it all on one.
enum class hint_kind { wrong, zero, huge, none };

void run_hinted(const node& n, hint_kind k, std::vector<std::atomic<int>>& ran_on,
                std::atomic<int>& runs) {
  if (n.leaf_id >= 0) {
    runs.fetch_add(1);
    sleepy_leaf(n, ran_on);
    return;
  }
  auto left = [&] { run_hinted(*n.left, k, ran_on, runs); };
  auto right = [&] { run_hinted(*n.right, k, ran_on, runs); };
  switch (k) {
    case hint_kind::wrong: {  // always 1 : 1, whatever the real split
      locus::task_group tg{locus::work_hint{2.0}};
      tg.run(left, locus::work_hint{1.0});
      tg.run(right, locus::work_hint{1.0});
      tg.wait();
      break;
    }
    case hint_kind::zero: {
      locus::task_group tg{locus::work_hint{0.0}};
      tg.run(left, locus::work_hint{0.0});
      tg.run(right, locus::work_hint{0.0});
      tg.wait();
      break;
    }
    case hint_kind::huge: {  // the children overdraw the group's total
      locus::task_group tg{locus::work_hint{1.0}};
      tg.run(left, locus::work_hint{1e300});
      tg.run(right, locus::work_hint{1e300});
      tg.wait();
      break;
    }
    case hint_kind::none: {
      locus::task_group tg;
      tg.run(left);
      right();
      tg.wait();
      break;
    }
  }
}

class AdwsHints : public ::testing::TestWithParam<hint_kind> {};

TEST_P(AdwsHints, CorrectAndSpreadOverAllWorkers) {
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  int ids = 0;
  const auto tree = build(200, 3, ids);  // unbalanced: the hints above are wrong for it
  locus::runtime rt{locus::options{.sched = "adws",
                                   .workers = 4,
                                   .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1"}};
  std::vector<std::atomic<int>> ran_on(static_cast<std::size_t>(ids));
  std::atomic<int> runs{0};
  rt.exec([&] { run_hinted(*tree, GetParam(), ran_on, runs); });
  EXPECT_EQ(runs.load(), ids);
  std::vector<int> per_worker(4);
  for (auto& w : ran_on) {
    ASSERT_GE(w.load(), 0);
    ++per_worker[static_cast<std::size_t>(w.load())];
  }
  for (int w = 0; w < 4; ++w) EXPECT_GT(per_worker[static_cast<std::size_t>(w)], 0) << w;
}

INSTANTIATE_TEST_SUITE_P(Hints, AdwsHints,
                         ::testing::Values(hint_kind::wrong, hint_kind::zero, hint_kind::huge,
                                           hint_kind::none),
                         [](const auto& info) {
                           switch (info.param) {
                             case hint_kind::wrong:
                               return std::string("wrong");
                             case hint_kind::zero:
                               return std::string("zero");
                             case hint_kind::huge:
                               return std::string("huge");
                             case hint_kind::none:
                               break;
                           }
                           return std::string("none");
                         });

// A flat loop of n children hinted alike, in a group hinted n, spawned by a root of a 2-worker
// adws runtime that does not steal (the plan alone places the children): child i runs
// `child(i, creator, loop_done)`, loop_done set once the loop has spawned the last child.
// Returns the worker that ran the loop.
template <class Child>
int run_flat_loop(int n, Child child) {
  ::setenv("LOCUS_ADWS_STEAL", "0", 1);
  int creator = -1;
  {
    locus::runtime rt{locus::options{.sched = "adws", .workers = 2}};
    std::atomic<bool> loop_done{false};
    rt.exec([&] {
      creator = locus::this_worker();
      locus::task_group tg{locus::work_hint{static_cast<double>(n)}};
      for (int i = 0; i < n; ++i) {
        tg.run([&, i] { child(i, creator, loop_done); }, locus::work_hint{1.0});
      }
      loop_done = true;
      tg.wait();
    });
  }
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  return creator;
}

// A flat loop's children that the plan keeps on the creator's worker are queued, not run
// child-first: they all start after the loop has spawned the last of them, on the creator's
// worker at its wait, newest first (the group's first child alone would run at once).
TEST(AdwsFlatLoop, ChildrenKeptOnTheCreatorRunAtItsWaitNewestFirst) {
  constexpr int n = 8;
  std::vector<std::atomic<int>> ran_on(n);
  std::vector<std::atomic<int>> started_as(n);  // order of start among the creator's children
  std::vector<std::atomic<bool>> after_loop(n);
  std::atomic<int> next_on_creator{0};
  const int creator = run_flat_loop(n, [&](int i, int from, const std::atomic<bool>& loop_done) {
    const auto k = static_cast<std::size_t>(i);
    ran_on[k] = locus::this_worker();
    after_loop[k] = loop_done.load();
    if (ran_on[k] == from) started_as[k] = next_on_creator.fetch_add(1);
  });
  for (int i = 0; i < n / 2; ++i) EXPECT_EQ(ran_on[static_cast<std::size_t>(i)], 1 - creator) << i;
  for (int i = n / 2; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    EXPECT_EQ(ran_on[k], creator) << i;
    EXPECT_TRUE(after_loop[k]) << "child " << i << " ran before the loop had spawned the last";
    EXPECT_EQ(started_as[k], n - 1 - i) << "child " << i;
  }
}

// A long flat loop does not become as many heap tasks at once: past 256 children queued on the
// creator, its later ones run child-first again, during the loop.
TEST(AdwsFlatLoop, QueuesAtMost256ChildrenOnTheCreator) {
  constexpr int n = 1000;
  std::atomic<int> on_creator_during_loop{0}, on_creator_after_loop{0};
  run_flat_loop(n, [&](int, int from, const std::atomic<bool>& loop_done) {
    if (locus::this_worker() != from) return;
    (loop_done ? on_creator_after_loop : on_creator_during_loop).fetch_add(1);
  });
  // The bound counts whatever else the creator's queue holds; the plan's halves may differ by a
  // child where a range straddles the two workers' boundary.
  EXPECT_LE(on_creator_after_loop.load(), 256);
  EXPECT_GE(on_creator_after_loop.load(), 250);
  EXPECT_NEAR(on_creator_after_loop.load() + on_creator_during_loop.load(), n / 2, 2);
}

// Children routed to a worker that is busy wait in the ring from their creator to it, and past
// the ring's capacity in its migration queue: all of them reach it, and it runs them in the order
// they were spawned.
TEST(AdwsFlatLoop, ChildrenRoutedToABusyWorkerAllArriveInSpawnOrder) {
  constexpr int n = 1200;           // the first half is planned on the other worker
  std::vector<int> order_on_other;  // touched by the other worker only, read after the join
  std::vector<std::atomic<int>> ran_on(n);
  const int creator = run_flat_loop(n, [&](int i, int from, const std::atomic<bool>& loop_done) {
    ran_on[static_cast<std::size_t>(i)] = locus::this_worker();
    if (locus::this_worker() != from) order_on_other.push_back(i);
    // The other worker's first child holds it until every child has been routed.
    if (i == 0) {
      while (!loop_done) std::this_thread::yield();
    }
  });
  ASSERT_NE(creator, -1);
  // The plan's halves may differ by a child where a range straddles the workers' boundary.
  const auto routed = static_cast<int>(order_on_other.size());
  EXPECT_NEAR(routed, n / 2, 1);
  for (int i = 0; i < routed; ++i) EXPECT_EQ(order_on_other[static_cast<std::size_t>(i)], i);
  for (int i = routed; i < n; ++i) EXPECT_EQ(ran_on[static_cast<std::size_t>(i)], creator) << i;
}

}  // namespace
