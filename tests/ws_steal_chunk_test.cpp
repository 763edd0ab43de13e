// How much a ws thief takes (src/sched/ws.cpp): queued children half of the victim's queue at a
// time, a continuation alone. Two workers; the creator keeps its worker busy, so the other one is
// the only thief and what it takes is exact.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <numeric>

#include "locus/locus.hpp"
#include "wait_until.hpp"

namespace {

using locus_test::wait_until;

std::uint64_t steals_of(const locus::worker_stats& w) {
  return std::accumulate(w.steals_by_level.begin(), w.steals_by_level.end(), std::uint64_t{0});
}

// The first queued child runs on the thief before the creator queues the other 31, and holds the
// thief until they are queued: the thief then finds 31 and takes 16 (the one it runs and 15 for
// its own queue), runs them, and finds 15, 7, 3 and 1, taking 8, 4, 2 and 1.
TEST(WsStealChunk, AThiefTakesHalfOfTheQueuedChildren) {
  constexpr int children = 32;
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  int creator = -1;
  std::atomic<bool> first_started{false}, all_queued{false};
  std::atomic<int> done{0}, on_thief{0};
  rt.exec([&] {
    creator = locus::this_worker();
    locus::task_group tg;
    for (int i = 0; i < children; ++i) {
      tg.run(
          [&, i] {
            if (i == 0) {
              first_started.store(true);
              EXPECT_TRUE(wait_until([&] { return all_queued.load(); }));
            }
            if (locus::this_worker() != creator) on_thief.fetch_add(1);
            done.fetch_add(1);
          },
          locus::parent_first);
      if (i == 0) {
        EXPECT_TRUE(wait_until([&] { return first_started.load(); }));
      }
    }
    all_queued.store(true);
    EXPECT_TRUE(wait_until([&] { return done.load() == children; }))
        << "the other worker did not run the queued children";
    tg.wait();
  });
  EXPECT_EQ(on_thief.load(), children);
  const locus::stats s = rt.stats();
  const locus::worker_stats& thief = s.workers.at(static_cast<std::size_t>(1 - creator));
  EXPECT_EQ(thief.stolen_items, static_cast<std::uint64_t>(children));
  EXPECT_EQ(steals_of(thief), 6u) << "1, 16, 8, 4, 2 and 1 children a steal";
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
