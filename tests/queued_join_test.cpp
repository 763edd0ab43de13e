// Joins of queued (parent-first) children, whose count the creator keeps without an atomic while
// it runs them itself (group_state::unsettled), and the memory those tasks come from.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "locus/locus.hpp"
#include "wait_until.hpp"

namespace {

using locus_test::wait_until;

// The creator queues children and keeps busy until the other worker has taken some; the
// children the thief ran end before (`thief_late` false) or after (true) the creator's wait
// counts them.
void queued_children_taken_by_a_thief(const char* sched, bool thief_late) {
  locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
  constexpr int children = 64;
  std::array<std::atomic<int>, children> ran_on{};
  for (auto& r : ran_on) r = -1;
  std::atomic<int> stolen{0};
  std::atomic<bool> creator_waits{false};
  int creator = -1;
  rt.exec([&] {
    creator = locus::this_worker();
    locus::task_group tg;
    for (int i = 0; i < children; ++i) {
      tg.run(
          [&, i] {
            const int me = locus::this_worker();
            ran_on[static_cast<std::size_t>(i)] = me;
            if (me == creator) return;
            stolen.fetch_add(1);
            if (thief_late) {
              ASSERT_TRUE(wait_until([&] { return creator_waits.load(); }));
              std::this_thread::sleep_for(std::chrono::milliseconds(5));
            }
          },
          locus::parent_first);
    }
    ASSERT_TRUE(wait_until([&] { return stolen.load() > 0; }));
    creator_waits = true;
    tg.wait();
    // Every child has ended once wait returns.
    for (const auto& r : ran_on) EXPECT_NE(r.load(), -1);
  });
  int by_thief = 0;
  for (const auto& r : ran_on) by_thief += r.load() != creator ? 1 : 0;
  EXPECT_EQ(by_thief, stolen.load());
  EXPECT_GE(by_thief, 1);
}

TEST(QueuedJoin, ChildrenAThiefRanBeforeTheWaitAreJoined) {
  queued_children_taken_by_a_thief("ws", false);
  queued_children_taken_by_a_thief("hws", false);
}

TEST(QueuedJoin, ChildrenAThiefRunsAfterTheWaitCountedThemAreJoined) {
  queued_children_taken_by_a_thief("ws", true);
  queued_children_taken_by_a_thief("hws", true);
}

// A group that is not on its creator's stack is counted with the atomic.
TEST(QueuedJoin, GroupOnTheHeap) {
  for (const int workers : {1, 2}) {
    locus::runtime rt{locus::options{.sched = "hws", .workers = workers}};
    std::atomic<int> ran{0};
    rt.exec([&] {
      auto tg = std::make_unique<locus::task_group>();
      for (int i = 0; i < 1000; ++i) tg->run([&] { ran.fetch_add(1); }, locus::parent_first);
      tg->wait();
      EXPECT_EQ(ran.load(), 1000);
    });
  }
}

// Children that spawn into their parent's group: from the parent's stack (queued children the
// join runs there) and from their own (child-first children, which may run on the other worker
// while the parent waits).
TEST(QueuedJoin, ChildrenSpawnIntoTheirParentsGroup) {
  for (const char* sched : {"ws", "hws"}) {
    for (const int workers : {1, 2}) {
      locus::runtime rt{locus::options{.sched = sched, .workers = workers}};
      std::atomic<int> ran{0};
      rt.exec([&] {
        locus::task_group tg;
        for (int i = 0; i < 50; ++i) {
          tg.run(
              [&] {
                tg.run([&] { ran.fetch_add(1); }, locus::parent_first);
                ran.fetch_add(1);
              },
              locus::parent_first);
          tg.run([&] {
            tg.run([&] { ran.fetch_add(1); }, locus::parent_first);
            ran.fetch_add(1);
          });
        }
        tg.wait();
        EXPECT_EQ(ran.load(), 200) << sched << " on " << workers << " workers";
      });
    }
  }
}

TEST(QueuedJoin, GroupReusedAfterStolenChildren) {
  locus::runtime rt{locus::options{.sched = "hws", .workers = 2}};
  rt.exec([&] {
    locus::task_group tg;
    for (int round = 0; round < 200; ++round) {
      std::atomic<int> ran{0};
      for (int i = 0; i < 16; ++i) {
        tg.run(
            [&] {
              std::this_thread::yield();
              ran.fetch_add(1);
            },
            locus::parent_first);
      }
      tg.wait();
      ASSERT_EQ(ran.load(), 16) << "round " << round;
    }
  });
}

TEST(TaskMemory, TaskFreedOnAThreadIsReusedThere) {
#if defined(LOCUS_ASAN) || defined(LOCUS_TSAN)
  GTEST_SKIP() << "sanitizer builds take every task from the C library";
#endif
  locus::runtime rt{locus::options{.sched = "hws", .workers = 1}};
  std::vector<std::uintptr_t> seen;
  rt.exec([&] {
    for (int round = 0; round < 4; ++round) {
      locus::task_group tg;
      // Captured by value: its address is inside the queued task.
      const int tag = round;
      tg.run([&seen, tag] { seen.push_back(reinterpret_cast<std::uintptr_t>(&tag)); },
             locus::parent_first);
      tg.wait();
    }
  });
  ASSERT_EQ(seen.size(), 4u);
  for (const auto at : seen) EXPECT_EQ(at, seen.front());
}

TEST(TaskMemory, OverAlignedAndLargeClosures) {
  struct alignas(128) aligned_value {
    int v;
  };
  locus::runtime rt{locus::options{.sched = "hws", .workers = 2}};
  std::atomic<int> misaligned{0}, sum{0};
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < 100; ++i) {
      const aligned_value a{i};
      tg.run(
          [&, a] {
            if (reinterpret_cast<std::uintptr_t>(&a) % alignof(aligned_value) != 0) {
              misaligned.fetch_add(1);
            }
            sum.fetch_add(a.v);
          },
          locus::parent_first);
      std::array<int, 300> big{};
      big.fill(1);
      tg.run([&, big] { sum.fetch_add(big[299]); }, locus::parent_first);
    }
    tg.wait();
  });
  EXPECT_EQ(misaligned.load(), 0);
  EXPECT_EQ(sum.load(), 4950 + 100);
}

}  // namespace
