// Joins of queued (parent-first) children, whose count the creator keeps without an atomic while
// it runs them itself (group_state::unsettled), and the memory those tasks come from.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "locus/locus.hpp"
#include "mem/task_memory.hpp"
#include "wait_until.hpp"

namespace {

using locus_test::wait_until;

// The creator gives the other worker children and keeps busy until it has taken some: children
// queued parent-first, which that worker steals (`routed` false), or a hinted group's children
// that adws sends to its queue (route_or_queue, `routed` true). The children run there end before
// the creator's join looks at them (`late` false) or after it (true), which then parks; the join
// is a wait() or the group's destructor, and the group lives on the creator's stack or the heap.
struct join_case {
  bool late = false;
  bool by_destructor = false;
  bool on_heap = false;
};

void children_run_by_the_other_worker(const char* sched, bool routed, join_case how) {
  locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
  constexpr int children = 64;
  std::array<std::atomic<int>, children> ran_on{};
  for (auto& r : ran_on) r = -1;
  std::atomic<int> elsewhere{0};
  std::atomic<bool> creator_joins{false};
  int creator = -1;
  rt.exec([&] {
    creator = locus::this_worker();
    {
      const locus::work_hint total{routed ? double{children} : 0.0};  // 0: no hint
      auto on_heap = std::make_unique<locus::task_group>(total);
      locus::task_group on_stack{total};
      locus::task_group& tg = how.on_heap ? *on_heap : on_stack;
      for (int i = 0; i < children; ++i) {
        auto child = [&, i] {
          const int me = locus::this_worker();
          ran_on[static_cast<std::size_t>(i)] = me;
          if (me == creator) return;
          elsewhere.fetch_add(1);
          if (how.late) {
            ASSERT_TRUE(wait_until([&] { return creator_joins.load(); }));
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        };
        if (routed) {
          tg.run(child, locus::work_hint{1.0});
        } else {
          tg.run(child, locus::parent_first);
        }
      }
      ASSERT_TRUE(wait_until([&] { return elsewhere.load() > 0; }));
      creator_joins = true;
      if (!how.by_destructor) tg.wait();
    }
    // Every child has ended once the join returns.
    for (const auto& r : ran_on) EXPECT_NE(r.load(), -1);
  });
  int by_other = 0;
  for (const auto& r : ran_on) by_other += r.load() != creator ? 1 : 0;
  EXPECT_EQ(by_other, elsewhere.load());
  EXPECT_GE(by_other, 1);
}

// ws and numa-ws have a group-end hook, hws none: all three count without the atomic.
TEST(QueuedJoin, ChildrenAThiefRanBeforeTheWaitAreJoined) {
  for (const char* sched : {"ws", "numa-ws", "hws"}) {
    children_run_by_the_other_worker(sched, false, {.late = false});
  }
}

TEST(QueuedJoin, ChildrenAThiefRunsAfterTheWaitCountedThemAreJoined) {
  for (const char* sched : {"ws", "numa-ws", "hws"}) {
    children_run_by_the_other_worker(sched, false, {.late = true});
  }
}

// Children counted only in `unsettled` keep wait() and the group's destructor off their fast
// paths, which look at nothing else of the kind.
TEST(QueuedJoin, OnlyUnsettledChildrenAreStillJoined) {
  for (const char* sched : {"ws", "numa-ws", "hws"}) {
    locus::runtime rt{locus::options{.sched = sched, .workers = 1}};
    int by_wait = 0, by_destructor = 0;
    rt.exec([&] {
      {
        locus::task_group tg;
        for (int i = 0; i < 10; ++i) tg.run([&] { ++by_wait; }, locus::parent_first);
        EXPECT_EQ(by_wait, 0) << sched;
        tg.wait();
        EXPECT_EQ(by_wait, 10) << sched;
      }
      {
        locus::task_group tg;
        for (int i = 0; i < 10; ++i) tg.run([&] { ++by_destructor; }, locus::parent_first);
        EXPECT_EQ(by_destructor, 0) << sched;
      }
      EXPECT_EQ(by_destructor, 10) << sched;
    });
  }
}

// The destructor's fast path looks only at whether anything was spawned into the group since its
// last join: a group joined once, then given queued children (by its creator, and by one of those
// children once it runs) and destroyed without a second wait, still runs and joins all of them.
TEST(QueuedJoin, AGroupSpawnedIntoAfterItsWaitIsJoinedByItsDestructor) {
  for (const char* sched : {"ws", "adws", "hws"}) {
    locus::runtime rt{locus::options{.sched = sched, .workers = 1}};
    int before = 0, after = 0;
    rt.exec([&] {
      {
        locus::task_group tg;
        tg.run([&] { ++before; });
        EXPECT_EQ(tg.wait(), locus::task_group_status::complete) << sched;
        tg.run(
            [&] {
              ++after;
              tg.run([&] { ++after; }, locus::parent_first);
            },
            locus::parent_first);
        for (int i = 0; i < 2; ++i) tg.run([&] { ++after; }, locus::parent_first);
        EXPECT_EQ(after, 0) << sched;
      }
      EXPECT_EQ(after, 4) << sched;
    });
    EXPECT_EQ(before, 1) << sched;
  }
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

TEST(QueuedJoin, ChildrenRoutedToAnotherWorkerAreJoined) {
  for (const bool late : {false, true}) {
    for (const bool by_destructor : {false, true}) {
      for (const bool on_heap : {false, true}) {
        SCOPED_TRACE(testing::Message() << "late " << late << ", by destructor " << by_destructor
                                        << ", on the heap " << on_heap);
        children_run_by_the_other_worker("adws", true, {late, by_destructor, on_heap});
      }
    }
  }
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

// Blocks freed on a thread beyond what it keeps go to the shared depot a chain at a time, and a
// thread whose lists are empty takes a whole chain from there: the one that queues a stolen
// loop's tasks gets back the blocks the thief freed, without the C library.
TEST(TaskMemory, BlocksFreedBeyondAThreadsBoundReachAnotherThread) {
#if defined(LOCUS_ASAN) || defined(LOCUS_TSAN)
  GTEST_SKIP() << "sanitizer builds take every task from the C library";
#endif
  using locus::detail::task_blocks_kept_per_thread, locus::detail::task_depot_chain_length,
      locus::detail::task_depot_max_chains;
  struct block_task final : locus::detail::task_base {
    void execute() override {}
  };
  constexpr std::size_t chains = 12;
  constexpr std::size_t made = task_blocks_kept_per_thread + chains * task_depot_chain_length;
  const std::size_t before = locus::detail::task_depot_chains(sizeof(block_task));
  const std::size_t accepted = std::min(chains, task_depot_max_chains - before);
  if (accepted == 0) GTEST_SKIP() << "the depot is full already";

  std::vector<std::unique_ptr<block_task>> tasks;
  std::thread maker([&] {
    for (std::size_t i = 0; i < made; ++i) tasks.push_back(std::make_unique<block_task>());
  });
  maker.join();
  std::vector<std::uintptr_t> freed;
  std::thread freer([&] {
    for (auto& t : tasks) {
      freed.push_back(reinterpret_cast<std::uintptr_t>(t.get()));
      t.reset();
    }
  });
  freer.join();
  EXPECT_EQ(locus::detail::task_depot_chains(sizeof(block_task)), before + accepted);

  std::vector<std::uintptr_t> reused;
  std::thread taker([&] {
    std::vector<std::unique_ptr<block_task>> again;
    for (std::size_t i = 0; i < task_depot_chain_length; ++i) {
      again.push_back(std::make_unique<block_task>());
      reused.push_back(reinterpret_cast<std::uintptr_t>(again.back().get()));
    }
  });
  taker.join();
  EXPECT_EQ(locus::detail::task_depot_chains(sizeof(block_task)), before + accepted - 1);
  // The taker got the last chain the depot accepted, block for block.
  const auto first =
      freed.begin() + static_cast<std::ptrdiff_t>(task_blocks_kept_per_thread +
                                                  (accepted - 1) * task_depot_chain_length);
  std::vector<std::uintptr_t> last_chain(
      first, first + static_cast<std::ptrdiff_t>(task_depot_chain_length));
  std::sort(last_chain.begin(), last_chain.end());
  std::sort(reused.begin(), reused.end());
  EXPECT_EQ(reused, last_chain);
}

// A block that reaches another thread through the depot arrives as it was freed: the thread that
// freed it put its address in a chain and wrote nothing into it, and the one that takes it reads
// nothing from it, so its lines stay valid in the cache of whoever used it last.
TEST(TaskMemory, BlocksPassedThroughTheDepotAreNotWrittenOnTheWay) {
#if defined(LOCUS_ASAN) || defined(LOCUS_TSAN)
  GTEST_SKIP() << "sanitizer builds take every task from the C library";
#endif
  using locus::detail::task_base, locus::detail::task_blocks_kept_per_thread,
      locus::detail::task_depot_chain_length, locus::detail::task_depot_max_chains;
  constexpr std::size_t bytes = 448;  // a size class the other tests leave alone
  if (locus::detail::task_depot_chains(bytes) == task_depot_max_chains)
    GTEST_SKIP() << "the depot is full already";
  const auto pattern = [](std::uintptr_t at, std::size_t i) {
    return static_cast<unsigned char>((at >> 6) * 31 + i * 7 + 1);
  };
  constexpr std::size_t made = task_blocks_kept_per_thread + task_depot_chain_length;
  std::vector<void*> blocks;
  std::thread maker([&] {
    for (std::size_t i = 0; i < made; ++i) {
      void* p = task_base::operator new(bytes);
      auto* b = static_cast<unsigned char*>(p);
      for (std::size_t k = 0; k < bytes; ++k)
        b[k] = pattern(reinterpret_cast<std::uintptr_t>(p), k);
      blocks.push_back(p);
    }
  });
  maker.join();
  // The freer keeps the first blocks itself; the last chain's worth goes to the depot.
  std::thread freer([&] {
    for (void* p : blocks) task_base::operator delete(p, bytes);
  });
  freer.join();
  std::vector<void*> passed(blocks.end() - static_cast<std::ptrdiff_t>(task_depot_chain_length),
                            blocks.end());
  std::vector<void*> taken;
  std::thread taker([&] {
    for (std::size_t i = 0; i < task_depot_chain_length; ++i) {
      taken.push_back(task_base::operator new(bytes));
    }
  });
  taker.join();
  std::sort(passed.begin(), passed.end());
  std::vector<void*> sorted_taken = taken;
  std::sort(sorted_taken.begin(), sorted_taken.end());
  ASSERT_EQ(sorted_taken, passed) << "the taker did not get the freer's chain";
  for (void* p : taken) {
    const auto* b = static_cast<const unsigned char*>(p);
    std::size_t changed = 0;
    for (std::size_t k = 0; k < bytes; ++k)
      changed += b[k] != pattern(reinterpret_cast<std::uintptr_t>(p), k);
    EXPECT_EQ(changed, 0u) << "bytes of a passed block written on the way";
  }
  for (void* p : taken) task_base::operator delete(p, bytes);
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
