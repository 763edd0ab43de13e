// A task at a join whose children run on another worker watches the join from its own context,
// searching as the scheduler loop would, before it parks (worker::watch_join).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "locus/locus.hpp"
#include "wait_until.hpp"

namespace {

using locus_test::wait_until;

std::uint64_t all_suspensions(const locus::runtime& rt) {
  std::uint64_t n = 0;
  for (const auto& w : rt.stats().workers) n += w.suspensions;
  return n;
}

// Spins for a few microseconds: longer than the creator takes from setting a flag to its join's
// first look at the group, far shorter than its watch.
void spin_briefly() {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(3);
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Queues one child, waits until the other worker has taken it, and joins it; the child runs
// `rest` there once the creator has reached its join.
template <class Rest>
void join_a_child_taken_elsewhere(const Rest& rest) {
  std::atomic<bool> taken{false};
  std::atomic<bool> at_join{false};
  locus::task_group tg;
  tg.run(
      [&] {
        taken = true;
        ASSERT_TRUE(wait_until([&] { return at_join.load(); }));
        rest();
      },
      locus::parent_first);
  ASSERT_TRUE(wait_until([&] { return taken.load(); }));
  at_join = true;
  tg.wait();
}

// The child ends a few microseconds after the creator has reached its join. Returns how many of
// `joins` such joins parked the creator (which may have moved between workers at a join).
std::uint64_t joins_that_parked(const char* sched, int joins) {
  locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
  std::uint64_t parked = 0;
  std::atomic<int> ran_elsewhere{0};
  rt.exec([&] {
    const std::uint64_t before = all_suspensions(rt);
    for (int i = 0; i < joins; ++i) {
      const int creator = locus::this_worker();
      join_a_child_taken_elsewhere([&] {
        if (locus::this_worker() != creator) ran_elsewhere.fetch_add(1);
        spin_briefly();
      });
    }
    parked = all_suspensions(rt) - before;
  });
  EXPECT_EQ(ran_elsewhere.load(), joins) << sched;
  return parked;
}

// Without the watch every one of these joins parks: the child is still running when the creator
// reaches its join. With it, the child's end (microseconds later, unless the OS puts its worker
// aside) lets the join go on where it is.
TEST(JoinWatch, AJoinWhoseChildEndsWhileItsCreatorWatchesGoesOnWithoutParking) {
  constexpr int joins = 100;
  for (const char* sched : {"ws", "numa-ws"}) {
    const std::uint64_t parked = joins_that_parked(sched, joins);
    EXPECT_LT(parked, std::uint64_t{joins}) << sched << ": every join parked";
  }
}

// The creator spawns its child child-first, the other worker takes the creator's continuation,
// which joins the child a few microseconds before it ends: that join does not watch, but parks,
// for the child's worker to switch straight into (group_state::continuation_taken).
TEST(JoinWatch, AJoinWhoseContinuationWasTakenParks) {
  constexpr int joins = 100;
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  std::uint64_t parked = 0;
  int continued_elsewhere = 0;
  rt.exec([&] {
    const std::uint64_t before = all_suspensions(rt);
    for (int i = 0; i < joins; ++i) {
      const int creator = locus::this_worker();
      std::atomic<bool> at_join{false};
      locus::task_group tg;
      tg.run([&] {
        ASSERT_TRUE(wait_until([&] { return at_join.load(); }));
        spin_briefly();
      });
      // The child holds this worker until the join: the continuation runs on the other one.
      if (locus::this_worker() != creator) ++continued_elsewhere;
      at_join = true;
      tg.wait();
    }
    parked = all_suspensions(rt) - before;
  });
  EXPECT_EQ(continued_elsewhere, joins);
  // Only a creator that the OS stops for longer than the child's spin finds the child ended.
  EXPECT_GE(parked, std::uint64_t{joins / 2});
}

// While the creator watches its join, the child held on the other worker queues a task there,
// which only the creator's worker can run: the watch finds it, the creator parks, its worker runs
// the task, and the join completes once the child has seen the task end.
TEST(JoinWatch, WorkFoundWhileWatchingRunsAndTheJoinStillCompletes) {
  for (const char* sched : {"ws", "numa-ws"}) {
    locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
    int creator = -1;
    std::atomic<int> task_ran_on{-1};
    std::atomic<int> child_ran_on{-1};
    std::uint64_t parked = 0;
    rt.exec([&] {
      creator = locus::this_worker();
      const std::uint64_t before = all_suspensions(rt);
      join_a_child_taken_elsewhere([&] {
        child_ran_on = locus::this_worker();
        locus::task_group inner;
        inner.run([&] { task_ran_on = locus::this_worker(); }, locus::parent_first);
        // This worker stays here until the task has run: the creator's worker runs it.
        ASSERT_TRUE(wait_until([&] { return task_ran_on.load() != -1; }));
        inner.wait();
      });
      parked = all_suspensions(rt) - before;
    });
    EXPECT_NE(child_ran_on.load(), creator) << sched;
    EXPECT_EQ(task_ran_on.load(), creator) << sched;
    // The creator had to leave its context to run the task.
    EXPECT_GE(parked, 1u) << sched;
  }
}

}  // namespace
