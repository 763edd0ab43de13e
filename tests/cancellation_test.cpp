// task_group cancellation: cancel(), a child's exception, nested groups, polling, and the
// invariant that every child either ran or was counted as cancelled, on every scheduler.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "locus/assembly.hpp"
#include "locus/locus.hpp"
#include "watchdog.hpp"

namespace {

constexpr const char* synthetic16 = "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1";
const char* const schedulers[] = {"ws",      "adws", "ml-adws", "ml-ws",
                                  "numa-ws", "hws",  "cats",    "tao"};

std::uint32_t groups_canceling() {
  return locus::detail::canceling_groups.load(std::memory_order_relaxed);
}

TEST(Cancellation, ChildrenRunAfterCancelNeverRunAndTheGroupIsReusable) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 1}};
  rt.exec([&] {
    locus::task_group tg;
    std::atomic<int> ran{0};
    EXPECT_FALSE(tg.is_canceling());
    tg.cancel();
    EXPECT_TRUE(tg.is_canceling());
    for (int i = 0; i < 10; ++i) tg.run([&] { ran.fetch_add(1); });
    tg.run([&] { ran.fetch_add(1); }, locus::parent_first);
    EXPECT_EQ(tg.wait(), locus::task_group_status::canceled);
    EXPECT_EQ(ran.load(), 0);
    // Joined: no longer cancelling, and its children run again.
    EXPECT_FALSE(tg.is_canceling());
    for (int i = 0; i < 10; ++i) tg.run([&] { ran.fetch_add(1); });
    EXPECT_EQ(tg.wait(), locus::task_group_status::complete);
    EXPECT_EQ(ran.load(), 10);
  });
  EXPECT_EQ(rt.stats().canceled_tasks, 11u);
  EXPECT_EQ(groups_canceling(), 0u);
}

TEST(Cancellation, QueuedChildrenAreSkippedWhenTaken) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 1}};
  int ran = 0;
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < 20; ++i) tg.run([&] { ++ran; }, locus::parent_first);
    tg.cancel();  // after they were queued: the join finds them and skips them
    EXPECT_EQ(tg.wait(), locus::task_group_status::canceled);
  });
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(rt.stats().canceled_tasks, 20u);
}

TEST(Cancellation, AChildCancelsItsLaterSiblingsChildFirst) {
  // Child-first on one worker, child 3 runs before its parent spawns child 4: 4..9 never run.
  locus::runtime rt{locus::options{.sched = "ws", .workers = 1}};
  std::vector<int> ran;
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < 10; ++i) {
      tg.run([&, i] {
        ran.push_back(i);
        if (i == 3) tg.cancel();
      });
    }
    EXPECT_EQ(tg.wait(), locus::task_group_status::canceled);
  });
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(rt.stats().canceled_tasks, 6u);
}

TEST(Cancellation, AnExceptionCancelsUnstartedSiblingsAndIsRethrown) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 1}};
  std::vector<int> ran;
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < 8; ++i) {
      tg.run([&, i] {
        ran.push_back(i);
        if (i == 2) throw std::runtime_error("child 2");
      });
    }
    try {
      tg.wait();
      ADD_FAILURE() << "wait() did not rethrow";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "child 2");
    }
    EXPECT_FALSE(tg.is_canceling());
    tg.run([&] { ran.push_back(100); });
    EXPECT_EQ(tg.wait(), locus::task_group_status::complete);
  });
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 100}));
  EXPECT_EQ(rt.stats().canceled_tasks, 5u);
  EXPECT_EQ(groups_canceling(), 0u);
}

TEST(Cancellation, NestedGroupsAreCancelledWithTheirEnclosingOne) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 1}};
  std::atomic<int> leaves{0};
  locus::task_group_status inner_status = locus::task_group_status::complete;
  bool polled_inside = false;
  rt.exec([&] {
    locus::task_group outer;
    outer.run([&] {
      locus::task_group inner;
      for (int i = 0; i < 50; ++i) {
        inner.run([&, i] {
          if (i == 10) {
            outer.cancel();
            // This leaf's group is `inner`, nested in `outer`.
            polled_inside = locus::is_current_task_group_canceling();
          }
          leaves.fetch_add(1);
        });
      }
      EXPECT_TRUE(inner.is_canceling());
      inner_status = inner.wait();
    });
    for (int i = 0; i < 5; ++i) outer.run([&] { leaves.fetch_add(1000); });
    EXPECT_EQ(outer.wait(), locus::task_group_status::canceled);
  });
  EXPECT_TRUE(polled_inside);
  EXPECT_EQ(inner_status, locus::task_group_status::canceled);
  EXPECT_EQ(leaves.load(), 11);
  EXPECT_EQ(rt.stats().canceled_tasks, 39u + 5u);
  EXPECT_EQ(groups_canceling(), 0u);
}

TEST(Cancellation, OnlyTheCancelledGroupAndItsNestedOnesStop) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 1}};
  int a_ran = 0, b_ran = 0;
  rt.exec([&] {
    locus::task_group a, b;
    a.cancel();
    for (int i = 0; i < 4; ++i) {
      a.run([&] { ++a_ran; });
      b.run([&] {
        EXPECT_FALSE(locus::is_current_task_group_canceling());
        ++b_ran;
      });
    }
    EXPECT_EQ(a.wait(), locus::task_group_status::canceled);
    EXPECT_EQ(b.wait(), locus::task_group_status::complete);
  });
  EXPECT_EQ(a_ran, 0);
  EXPECT_EQ(b_ran, 4);
}

TEST(Cancellation, ARunningChildOnAnotherWorkerPollsAndReturns) {
  const locus_test::watchdog dog("cancellation polling", std::chrono::seconds(120));
  // Schedulers that start a child at once, so that the spinning child leaves its continuation to
  // the other worker (one that queues children, hws, would leave both on this worker).
  for (const char* sched : {"ws", "numa-ws", "adws"}) {
    SCOPED_TRACE(sched);
    locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
    std::atomic<bool> started{false};
    std::atomic<bool> saw_cancel{false};
    rt.exec([&] {
      locus::task_group tg;
      tg.run([&] {
        started.store(true);
        while (!locus::is_current_task_group_canceling()) std::this_thread::yield();
        saw_cancel.store(tg.is_canceling());
      });
      // The continuation runs once the other worker has taken it (the child above spins).
      while (!started.load()) std::this_thread::yield();
      tg.cancel();
      EXPECT_EQ(tg.wait(), locus::task_group_status::canceled);
    });
    EXPECT_TRUE(saw_cancel.load());
  }
}

TEST(Cancellation, OutsideTheRuntimeNothingIsCancelling) {
  EXPECT_FALSE(locus::is_current_task_group_canceling());
  locus::task_group tg;
  tg.cancel();
  EXPECT_TRUE(tg.is_canceling());
  std::atomic<int> ran{0};
  tg.run([&] { ran.fetch_add(1); });
  EXPECT_EQ(tg.wait(), locus::task_group_status::canceled);
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(groups_canceling(), 0u);
}

TEST(Cancellation, ADestroyedCancelledGroupLeavesNothingCancelling) {
  {
    locus::task_group tg;
    tg.cancel();
    EXPECT_EQ(groups_canceling(), 1u);
  }
  EXPECT_EQ(groups_canceling(), 0u);
}

class CancelAssembly final : public locus::assembly {
 public:
  explicit CancelAssembly(std::atomic<int>& runs) : assembly(1), runs_(runs) {}
  void execute(int) override { runs_.fetch_add(1); }

 private:
  std::atomic<int>& runs_;
};

TEST(Cancellation, AnAssemblyOfACancelledGroupDoesNotStart) {
  locus::runtime rt{locus::options{.sched = "tao", .workers = 2}};
  std::atomic<int> runs{0};
  rt.exec([&] {
    locus::task_group tg;
    tg.cancel();
    locus::run_assembly(tg, std::make_unique<CancelAssembly>(runs));
    EXPECT_EQ(tg.wait(), locus::task_group_status::canceled);
    locus::run_assembly(tg, std::make_unique<CancelAssembly>(runs));
    EXPECT_EQ(tg.wait(), locus::task_group_status::complete);
  });
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(rt.stats().canceled_tasks, 1u);
}

// Random trees on every scheduler, 2 workers and 16 synthetic ones: random nodes cancel their
// own group, an enclosing one, or throw. Every spawn attempt either ran or was counted cancelled,
// every wait ends, and no group is left cancelling.
struct tree_counts {
  std::atomic<std::uint64_t> attempts{0}, ran{0}, throws_caught{0};
};

void random_tree(locus::task_group* enclosing, std::uint64_t seed, int depth, tree_counts& c) {
  std::mt19937_64 rng(seed);
  locus::task_group tg;
  const int children = 2 + static_cast<int>(rng() % 5);
  for (int i = 0; i < children; ++i) {
    const std::uint64_t child_seed = rng();
    const bool queued = rng() % 4 == 0;
    c.attempts.fetch_add(1, std::memory_order_relaxed);
    auto body = [&, child_seed, depth] {
      c.ran.fetch_add(1, std::memory_order_relaxed);
      std::mt19937_64 r(child_seed);
      const auto roll = r() % 64;
      if (roll == 0) tg.cancel();
      if (roll == 1 && enclosing != nullptr) enclosing->cancel();
      if (roll == 2) throw std::runtime_error("random failure");
      if (depth > 0) random_tree(&tg, r(), depth - 1, c);
    };
    if (queued) {
      tg.run(body, locus::parent_first);
    } else {
      tg.run(body);
    }
  }
  try {
    tg.wait();
  } catch (const std::runtime_error&) {
    c.throws_caught.fetch_add(1, std::memory_order_relaxed);
  }
}

TEST(Cancellation, RandomTreesOnEverySchedulerAccountForEveryChild) {
  const locus_test::watchdog dog("random cancellation trees", std::chrono::seconds(300));
  for (const char* sched : schedulers) {
    for (int workers : {2, 16}) {
      SCOPED_TRACE(std::string(sched) + " x" + std::to_string(workers));
      locus::options o{.sched = sched, .workers = workers};
      if (workers > 2) o.topology = synthetic16;
      locus::runtime rt{o};
      for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        rt.reset_stats();
        tree_counts c;
        rt.exec([&] { random_tree(nullptr, seed * 7919, 5, c); });
        const auto canceled = rt.stats().canceled_tasks;
        EXPECT_EQ(c.ran.load() + canceled, c.attempts.load()) << "seed " << seed;
        EXPECT_EQ(groups_canceling(), 0u) << "seed " << seed;
      }
    }
  }
}

}  // namespace
