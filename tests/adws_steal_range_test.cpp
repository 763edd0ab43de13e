// ADWS stealing (seed 000, §3.2, Fig. 10-11): every steal adws and ml-adws make takes a task
// from inside the thief's current steal range (the topmost dominant group that dominates it):
// the task's distribution range lies in the group's, its depth is at least the group's, the
// victim is one of the group's workers and the thief is dominated by the group.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "adws_tree.hpp"
#include "locus/locus.hpp"
#include "sched/adws_audit.hpp"

namespace {

using locus::detail::adws_steal_event;
using locus_test::build;
using locus_test::node;

std::mutex events_lock;
std::vector<adws_steal_event> events;

void record(const adws_steal_event& e) {
  const std::lock_guard hold(events_lock);
  events.push_back(e);
}

constexpr std::size_t KB = std::size_t{1} << 10;

// Every group says 1 : 1 whatever its real split (the tree is cut at random), so the plan is
// unbalanced and workers steal. Each leaf stands for 256KB of data, so that in ml-adws the
// groups of at most 32 leaves fit one 8MB L3 and are flattened onto it.
void run_wrong(const node& n, std::vector<std::atomic<int>>& ran_on) {
  if (n.leaf_id >= 0) {
    ran_on[static_cast<std::size_t>(n.leaf_id)].fetch_add(1);
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    return;
  }
  locus::task_group tg{locus::work_hint{2.0},
                       locus::size_hint{static_cast<std::size_t>(n.leaves) * 256 * KB}};
  tg.run([&] { run_wrong(*n.left, ran_on); }, locus::work_hint{1.0});
  tg.run([&] { run_wrong(*n.right, ran_on); }, locus::work_hint{1.0});
  tg.wait();
}

struct steal_case {
  const char* sched;
  int workers;
  const char* topology;
  int per_l3;  // workers per L3 unit (ml-adws steals among L3s at level 1)
};

class AdwsStealRange : public ::testing::TestWithParam<steal_case> {};

TEST_P(AdwsStealRange, EveryStealTakesATaskInsideTheThiefsStealRange) {
  const steal_case c = GetParam();
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  events.clear();
  locus::detail::set_adws_steal_observer(record);
  int ids = 0;
  const auto tree = build(240, 29, ids);
  std::uint64_t counted = 0;
  {
    locus::runtime rt{
        locus::options{.sched = c.sched, .workers = c.workers, .topology = c.topology}};
    for (int iteration = 0; iteration < 3; ++iteration) {
      std::vector<std::atomic<int>> ran_on(static_cast<std::size_t>(ids));
      rt.exec([&] { run_wrong(*tree, ran_on); });
      for (int i = 0; i < ids; ++i) ASSERT_EQ(ran_on[static_cast<std::size_t>(i)].load(), 1) << i;
    }
    for (auto s : rt.stats().total().steals_by_level) counted += s;
  }
  locus::detail::set_adws_steal_observer(nullptr);
  const std::lock_guard hold(events_lock);
  ASSERT_GT(events.size(), 0u) << "the wrong hints made no worker steal";
  EXPECT_EQ(events.size(), counted) << "the observer saw other steals than the statistics count";
  // The leaf level is the workers; in ml-adws the level above it is the L3s.
  const int leaf_level = c.per_l3 > 1 ? 2 : 1;
  int outside = 0;
  for (const auto& e : events) {
    const int per_unit = e.level == leaf_level ? 1 : c.per_l3;
    const int thief = e.thief / per_unit;
    const int victim = e.victim / per_unit;
    const int first = static_cast<int>(std::floor(e.x));
    const int last = static_cast<int>(std::ceil(e.y)) - 1;
    const bool inside = e.x <= e.lo && e.hi <= e.y && e.depth >= e.range_depth && first <= victim &&
                        victim <= last && victim != thief && first <= thief &&
                        thief < static_cast<int>(std::floor(e.y));
    if (!inside && outside++ < 5) {
      ADD_FAILURE() << "worker " << e.thief << " stole [" << e.lo << ", " << e.hi << ") depth "
                    << e.depth << " at level " << e.level << " from worker " << e.victim
                    << " within steal range [" << e.x << ", " << e.y << ") depth " << e.range_depth;
    }
  }
  EXPECT_EQ(outside, 0) << "of " << events.size() << " steals";
  std::printf("%s, %d workers: %zu steals, all inside the steal range\n", c.sched, c.workers,
              events.size());
}

INSTANTIATE_TEST_SUITE_P(
    Synthetic, AdwsStealRange,
    ::testing::Values(steal_case{"adws", 4, "pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1", 1},
                      steal_case{"adws", 16, "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1", 1},
                      steal_case{"ml-adws", 16, "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1",
                                 8}),
    [](const auto& info) {
      return std::string(info.param.sched[0] == 'm' ? "ml_adws_" : "adws_") +
             std::to_string(info.param.workers) + "workers";
    });

// §3.2: a child whose range ends on a unit boundary is a cross-worker task. On 2 workers the
// root group's first child is [1, 2); once it finishes the group is dominant, and worker 1
// steals from the work worker 0 does inline ([0, 1)). Were [1, 2) not counted, the group would
// never become dominant and worker 1 would sit idle (Fig. 19's imbalance).
TEST(AdwsDominance, ChildEndingOnAUnitBoundaryLetsItsWorkerHelp) {
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  locus::runtime rt{locus::options{.sched = "adws",
                                   .workers = 2,
                                   .topology = "pack:1 l3:1(size=8MB) l2:2(size=1MB) core:1 pu:1"}};
  std::atomic<int> quick_on{-1};
  std::vector<std::atomic<int>> ran_on(64);
  rt.exec([&] {
    locus::task_group tg;
    tg.run([&] { quick_on = locus::this_worker(); });
    locus::task_group inline_work;
    for (int i = 0; i < 64; ++i) {
      inline_work.run([&, i] {
        ran_on[static_cast<std::size_t>(i)] = locus::this_worker();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      });
    }
    inline_work.wait();
    tg.wait();
  });
  EXPECT_EQ(quick_on.load(), 1);
  int on_worker_1 = 0;
  for (auto& w : ran_on) on_worker_1 += w.load() == 1;
  EXPECT_GT(on_worker_1, 0) << "worker 1 never helped with worker 0's part";
}

// The mirror case: with 1 : 2 hints the root's child is [1.33, 2) on worker 1 and the root's
// own inline part [0, 1.33) ends first. Reaching wait() ends a cross-worker part of the group,
// so worker 0 must be able to help with worker 1's long child (or, if worker 1 was slow to
// start, take the whole child from its migration queue: the root group is dominant then too).
TEST(AdwsDominance, CreatorReachingWaitLetsItsWorkerHelp) {
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  locus::runtime rt{locus::options{.sched = "adws",
                                   .workers = 2,
                                   .topology = "pack:1 l3:1(size=8MB) l2:2(size=1MB) core:1 pu:1"}};
  std::atomic<int> child_on{-1};
  std::vector<std::atomic<int>> ran_on(64);
  rt.exec([&] {
    locus::task_group tg{locus::work_hint{3.0}};
    tg.run(
        [&] {
          child_on = locus::this_worker();
          locus::task_group leaves;
          for (int i = 0; i < 64; ++i) {
            leaves.run([&, i] {
              ran_on[static_cast<std::size_t>(i)] = locus::this_worker();
              std::this_thread::sleep_for(std::chrono::milliseconds(2));
            });
          }
          leaves.wait();
        },
        locus::work_hint{1.0});
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
    tg.wait();
  });
  int on_worker_0 = 0;
  for (auto& w : ran_on) on_worker_0 += w.load() == 0;
  EXPECT_GT(on_worker_0, 0) << "worker 0 never helped with worker 1's child (which began on "
                            << "worker " << child_on.load() << ")";
}

// A thief that takes a creator's continuation in mid-loop spawns the creator's later children
// where the plan puts them: back on the first worker of the range, into its migration queue. The
// paper does not steal from the migration queues of the first worker of the range (they would
// hold tasks from outside it); with every steal bounded by the group's range and depth, the
// thief takes them from there, or it would idle while that worker runs all of them.
// The root's group G gives child A the top quarter of [0, 2) (worker 1) and keeps [0, 1.5) for
// the root's inline part, which opens group H: H's first child C0 gets [0.75, 1.5), planned on
// worker 0, and runs there child-first with the rest of the loop in worker 0's deque. Once A has
// ended (G dominant), worker 1 steals that continuation and spawns C1-C4, planned on [0, 0.75):
// they go to worker 0's migration queue. C0 waits until one of them has started elsewhere, so
// that without these steals the test fails rather than passes by timing.
TEST(AdwsDominance, AThiefHelpsWithTheChildrenItSentBackToTheFirstWorker) {
  ::setenv("LOCUS_ADWS_STEAL", "1", 1);
  locus::runtime rt{locus::options{.sched = "adws",
                                   .workers = 2,
                                   .topology = "pack:1 l3:1(size=8MB) l2:2(size=1MB) core:1 pu:1"}};
  std::atomic<int> first_child_on{-1};
  std::atomic<int> loop_went_on_on{-1};
  std::vector<std::atomic<int>> ran_on(4);
  std::atomic<bool> later_child_elsewhere{false};
  rt.exec([&] {
    locus::task_group g{locus::work_hint{4.0}};
    g.run([] {}, locus::work_hint{1.0});
    locus::task_group h{locus::work_hint{8.0}};
    h.run(
        [&] {
          first_child_on = locus::this_worker();
          const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
          while (!later_child_elsewhere && std::chrono::steady_clock::now() < give_up) {
            std::this_thread::yield();
          }
        },
        locus::work_hint{4.0});
    loop_went_on_on = locus::this_worker();
    for (int i = 0; i < 4; ++i) {
      h.run(
          [&, i] {
            const int self = locus::this_worker();
            ran_on[static_cast<std::size_t>(i)] = self;
            if (self != first_child_on.load()) later_child_elsewhere = true;
          },
          locus::work_hint{1.0});
    }
    h.wait();
    g.wait();
  });
  EXPECT_EQ(first_child_on.load(), 0);
  EXPECT_EQ(loop_went_on_on.load(), 1) << "worker 1 did not take the loop's continuation";
  int later_on_worker_1 = 0;
  for (auto& w : ran_on) later_on_worker_1 += w.load() == 1;
  EXPECT_GT(later_on_worker_1, 0) << "worker 1 never helped with the children it sent back";
}

}  // namespace
