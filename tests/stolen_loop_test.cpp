// A group whose creator's continuation was taken (by a thief, or after a child suspended) queues
// its further children until its join (parent-first, up to 256 on the worker's queue) under a
// scheduler without spawn hooks: a loop of spawns stays with the worker that runs it, instead of
// moving to the next thief with every child.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "locus/locus.hpp"
#include "wait_until.hpp"

namespace {

using locus_test::wait_until;

// The first child holds its worker until the loop is over, so the creator's continuation runs
// the loop on the other worker, a thief. Records whether each further child had run when its
// spawn returned, and where it ran.
template <std::size_t Children>
void loop_after_a_steal(locus::options opts, std::array<bool, Children>& ran_before_return,
                        std::array<int, Children>& ran_on, int& first_on, int& loop_on) {
  opts.workers = 2;
  locus::runtime rt{opts};
  std::array<std::atomic<bool>, Children> ran{};
  std::atomic<bool> release{false};
  rt.exec([&] {
    locus::task_group tg;
    tg.run([&] {
      first_on = locus::this_worker();
      ASSERT_TRUE(wait_until([&] { return release.load(); }));
    });
    loop_on = locus::this_worker();
    for (std::size_t i = 0; i < Children; ++i) {
      tg.run([&, i] {
        ran_on[i] = locus::this_worker();
        ran[i] = true;
      });
      ran_before_return[i] = ran[i].load();
    }
    release = true;
    tg.wait();
  });
}

// Sixteen further children, every one queued and run before the join.
void expect_the_loop_queued(const locus::options& opts) {
  constexpr std::size_t children = 16;
  std::array<bool, children> ran_before_return{};
  std::array<int, children> ran_on{};
  ran_on.fill(-1);
  int first_on = -1, loop_on = -1;
  loop_after_a_steal<children>(opts, ran_before_return, ran_on, first_on, loop_on);
  ASSERT_NE(first_on, -1);
  EXPECT_NE(loop_on, first_on) << "the continuation was not taken by the other worker";
  for (std::size_t i = 0; i < children; ++i) {
    EXPECT_FALSE(ran_before_return[i]) << "child " << i << " ran child-first";
    EXPECT_NE(ran_on[i], -1) << "child " << i << " did not run before the join";
  }
}

TEST(StolenLoop, FurtherChildrenAreQueuedWhileTheStolenFromChildRuns) {
  expect_the_loop_queued({.sched = "ws"});
}

// A trace takes every spawn off the plain path; the schedule it records must be the one the
// program gets without it.
TEST(StolenLoop, ATracedLoopIsQueuedAsAnUntracedOne) {
  const std::string path = ::testing::TempDir() + "locus_stolen_loop_trace.json";
  expect_the_loop_queued({.sched = "ws", .trace = path});
  std::remove(path.c_str());
}

// The stolen-from child ends before the loop goes on (a short first child): the loop stays with
// the thief all the same, its further children queued. Spawned child-first, each would publish
// the rest of the loop for the next thief, and a loop of short children would move between the
// workers once per child.
TEST(StolenLoop, FurtherChildrenAreQueuedAfterTheStolenFromChildEnded) {
  constexpr std::size_t children = 16;
  locus::runtime rt{{.sched = "ws", .workers = 2}};
  std::array<std::atomic<bool>, children> ran{};
  std::array<std::atomic<int>, children> ran_on{};
  std::array<bool, children> child_first{};
  std::atomic<bool> continued{false}, first_done{false};
  int first_on = -1, loop_on = -1;
  rt.exec([&] {
    locus::task_group tg;
    tg.run([&] {
      first_on = locus::this_worker();
      ASSERT_TRUE(wait_until([&] { return continued.load(); }));
      first_done = true;
    });
    continued = true;  // only on the other worker: the first child holds its own until now
    ASSERT_TRUE(wait_until([&] { return first_done.load(); }));
    // Long enough for the child's worker to count it down; the loop queues either way.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    loop_on = locus::this_worker();
    for (std::size_t i = 0; i < children; ++i) {
      tg.run([&, i] {
        ran_on[i] = locus::this_worker();
        ran[i] = true;
      });
      // The other worker may take a queued child and run it at once; only a child that ran
      // here before its spawn returned ran child-first.
      child_first[i] = ran[i].load() && ran_on[i].load() == locus::this_worker();
    }
    tg.wait();
  });
  ASSERT_NE(first_on, -1);
  EXPECT_NE(loop_on, first_on) << "the continuation was not taken by the other worker";
  for (std::size_t i = 0; i < children; ++i) {
    EXPECT_FALSE(child_first[i]) << "child " << i << " ran child-first";
    EXPECT_TRUE(ran[i].load()) << "child " << i << " did not run before the join";
  }
}

// Past 256 queued children (a long loop must not become as many heap tasks), the spawns are
// child-first again, behind the queued ones.
TEST(StolenLoop, QueuedChildrenAreBounded) {
  constexpr std::size_t bound = 256, children = bound + 8;
  std::array<bool, children> ran_before_return{};
  std::array<int, children> ran_on{};
  ran_on.fill(-1);
  int first_on = -1, loop_on = -1;
  loop_after_a_steal<children>({.sched = "ws"}, ran_before_return, ran_on, first_on, loop_on);
  ASSERT_NE(loop_on, first_on);
  for (std::size_t i = 0; i < children; ++i) {
    EXPECT_EQ(ran_before_return[i], i >= bound) << "child " << i;
    EXPECT_NE(ran_on[i], -1) << "child " << i;
  }
}

}  // namespace
