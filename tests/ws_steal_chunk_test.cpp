// How much a ws thief takes (src/sched/ws.cpp): queued children half of the victim's queue at a
// time, a continuation alone; and in which order it runs a chunk (context::steal). Two workers;
// where the creator keeps its worker busy, the other one is the only thief and what it takes is
// exact.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <vector>

#include "locus/locus.hpp"
#include "wait_until.hpp"

namespace {

using locus_test::wait_until;

std::uint64_t steals_of(const locus::worker_stats& w) {
  return std::accumulate(w.steals_by_level.begin(), w.steals_by_level.end(), std::uint64_t{0});
}

constexpr int loop_children = 32;

// A loop of 32 queued children that the other worker runs alone: the first runs there before the
// creator queues the other 31, and holds it until they are queued; the creator, busy, waits until
// all have run. `each(i, creator)` runs in child i. Returns the creator's worker.
template <class Each>
int run_loop_on_the_other_worker(locus::runtime& rt, Each each) {
  int creator = -1;
  std::atomic<bool> first_started{false}, all_queued{false};
  std::atomic<int> done{0};
  rt.exec([&] {
    creator = locus::this_worker();
    locus::task_group tg;
    for (int i = 0; i < loop_children; ++i) {
      tg.run(
          [&, i] {
            if (i == 0) {
              first_started.store(true);
              EXPECT_TRUE(wait_until([&] { return all_queued.load(); }));
            }
            each(i, creator);
            done.fetch_add(1);
          },
          locus::parent_first);
      if (i == 0) {
        EXPECT_TRUE(wait_until([&] { return first_started.load(); }));
      }
    }
    all_queued.store(true);
    EXPECT_TRUE(wait_until([&] { return done.load() == loop_children; }))
        << "the other worker did not run the queued children";
    tg.wait();
  });
  return creator;
}

// The thief finds 31 and takes 16 (the one it runs and 15 for its own queue), runs them, and
// finds 15, 7, 3 and 1, taking 8, 4, 2 and 1.
TEST(WsStealChunk, AThiefTakesHalfOfTheQueuedChildren) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  std::atomic<int> on_thief{0};
  const int creator = run_loop_on_the_other_worker(rt, [&](int, int creator_worker) {
    if (locus::this_worker() != creator_worker) on_thief.fetch_add(1);
  });
  EXPECT_EQ(on_thief.load(), loop_children);
  const locus::stats s = rt.stats();
  const locus::worker_stats& thief = s.workers.at(static_cast<std::size_t>(1 - creator));
  EXPECT_EQ(thief.stolen_items, static_cast<std::uint64_t>(loop_children));
  EXPECT_EQ(steals_of(thief), 6u) << "1, 16, 8, 4, 2 and 1 children a steal";
}

// The same loop in the order the thief ran it: the child it stole alone, then each chunk from its
// oldest child on (1, 2, ..., 16, not 1, 16, 15, ..., 2): the whole loop in order.
TEST(WsStealChunk, AThiefRunsAChunkOldestFirst) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  std::vector<int> order;  // appended by the thief only
  run_loop_on_the_other_worker(rt, [&](int i, int) { order.push_back(i); });
  std::vector<int> loop(loop_children);
  std::iota(loop.begin(), loop.end(), 0);
  EXPECT_EQ(order, loop);
}

// The creator takes back from a thief that holds a chunk: it gets the chunk's newest children,
// next to those it ran itself, so that each worker ran one contiguous run of the loop. The thief
// takes 1-16 while the creator is held (runs 1, which holds the thief, and queues 2-16); the
// creator runs 31 down to 17 at its wait, then steals 16 down to 9 from the thief, not 2 up to 9.
TEST(WsStealChunk, EachWorkerRunsOneContiguousRunOfALoop) {
  constexpr int children = loop_children;
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  int creator = -1;
  std::atomic<bool> first_started{false}, all_queued{false}, second_started{false},
      took_back{false};
  std::mutex m;
  std::vector<int> ran_on(children, -1);
  rt.exec([&] {
    creator = locus::this_worker();
    locus::task_group tg;
    for (int i = 0; i < children; ++i) {
      tg.run(
          [&, i] {
            const int me = locus::this_worker();
            if (i == 0) {
              first_started.store(true);
              EXPECT_TRUE(wait_until([&] { return all_queued.load(); }));
            }
            if (i == 1) {
              second_started.store(true);
              EXPECT_TRUE(wait_until([&] { return took_back.load(); }))
                  << "the creator did not steal from the thief's chunk";
            }
            if (me == creator && i <= 16) took_back.store(true);
            const std::lock_guard lock{m};
            ran_on[static_cast<std::size_t>(i)] = me;
          },
          locus::parent_first);
      if (i == 0) {
        EXPECT_TRUE(wait_until([&] { return first_started.load(); }));
      }
    }
    all_queued.store(true);
    EXPECT_TRUE(wait_until([&] { return second_started.load(); }));
    tg.wait();
  });
  const int thief = 1 - creator;
  ASSERT_EQ(ran_on[0], thief);
  ASSERT_EQ(ran_on[1], thief);
  EXPECT_EQ(ran_on[16], creator) << "the creator's steal began at the chunk's oldest child";
  EXPECT_EQ(ran_on[children - 1], creator);
  int switches = 0;
  for (int i = 1; i < children; ++i) {
    switches += ran_on[static_cast<std::size_t>(i)] != ran_on[static_cast<std::size_t>(i - 1)];
  }
  EXPECT_EQ(switches, 1) << "a worker ran more than one run of the loop";
}

// A chain of three child-first spawns leaves three continuations in the creator's queue while a
// queued task holds the other worker. That worker then takes the oldest alone: the two behind it
// belong to the stack the creator runs on, which pops them back itself.
TEST(WsStealChunk, AContinuationIsStolenAlone) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  int creator = -1, root_went_on = -1;
  std::atomic<bool> holding{false}, chain_queued{false}, stolen{false};
  rt.exec([&] {
    creator = locus::this_worker();
    locus::task_group hold;
    hold.run(
        [&] {
          holding.store(true);
          EXPECT_TRUE(wait_until([&] { return chain_queued.load(); }));
        },
        locus::parent_first);
    EXPECT_TRUE(wait_until([&] { return holding.load(); }));
    locus::task_group outer;
    outer.run([&] {
      locus::task_group middle;
      middle.run([&] {
        locus::task_group inner;
        inner.run([&] {
          chain_queued.store(true);
          EXPECT_TRUE(wait_until([&] { return stolen.load(); }));
        });
        inner.wait();
      });
      middle.wait();
    });
    // The root's continuation: the oldest of the three.
    root_went_on = locus::this_worker();
    stolen.store(true);
    outer.wait();
    hold.wait();
  });
  EXPECT_NE(root_went_on, creator);
  const locus::stats s = rt.stats();
  const locus::worker_stats& thief = s.workers.at(static_cast<std::size_t>(1 - creator));
  EXPECT_GE(steals_of(thief), 2u);
  EXPECT_EQ(thief.stolen_items, steals_of(thief)) << "a steal took more than one continuation";
}

}  // namespace
