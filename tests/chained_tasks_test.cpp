// Queued tasks a worker finds one after another run on one context: the search at the end of each
// finds the next (worker::next_after_task) and runs it there, without going back to the scheduler
// loop (stats: chained_tasks). A trace or a work/span meter, which watch every task boundary in
// the scheduler loop, turn that off.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>

#include "locus/locus.hpp"
#include "wait_until.hpp"

namespace {

using locus_test::wait_until;

constexpr int children = 32;

struct chain_run {
  int creator = -1;
  std::array<int, children> ran_on{};
  std::array<std::uintptr_t, children> frame{};
  locus::stats stats;
};

// The creator queues its children parent-first and keeps its worker busy until the other worker
// has run them all: that worker steals each one, and every steal but the first is made by the
// search at the end of the child before.
chain_run queued_children_stolen_one_by_one(locus::options opts) {
  opts.workers = 2;
  locus::runtime rt{opts};
  chain_run run;
  std::atomic<int> done{0};
  rt.exec([&] {
    run.creator = locus::this_worker();
    locus::task_group tg;
    for (int i = 0; i < children; ++i) {
      tg.run(
          [&, i] {
            int here = 0;
            run.ran_on[static_cast<std::size_t>(i)] = locus::this_worker();
            run.frame[static_cast<std::size_t>(i)] = reinterpret_cast<std::uintptr_t>(&here);
            done.fetch_add(1, std::memory_order_release);
          },
          locus::parent_first);
    }
    EXPECT_TRUE(wait_until([&] { return done.load(std::memory_order_acquire) == children; }))
        << "the other worker did not run the queued children";
    tg.wait();
  });
  run.stats = rt.stats();
  return run;
}

TEST(ChainedTasks, AThiefRunsQueuedTasksOneAfterAnotherOnOneContext) {
  const chain_run run = queued_children_stolen_one_by_one({.sched = "ws"});
  const int thief = 1 - run.creator;
  for (int i = 0; i < children; ++i) {
    EXPECT_EQ(run.ran_on[static_cast<std::size_t>(i)], thief) << "child " << i;
    // The same context at the same depth: each child's frame where the first one's was.
    EXPECT_EQ(run.frame[static_cast<std::size_t>(i)], run.frame[0]) << "child " << i;
  }
  const auto& by_worker = run.stats.workers;
  ASSERT_EQ(by_worker.size(), 2u);
  EXPECT_EQ(by_worker[static_cast<std::size_t>(thief)].chained_tasks,
            static_cast<std::uint64_t>(children - 1));
  EXPECT_EQ(by_worker[static_cast<std::size_t>(run.creator)].chained_tasks, 0u);
  EXPECT_EQ(by_worker[static_cast<std::size_t>(thief)].stolen_items,
            static_cast<std::uint64_t>(children));
}

TEST(ChainedTasks, UnderATraceEveryTaskGoesThroughTheSchedulerLoop) {
  const std::string path = ::testing::TempDir() + "locus_chained_tasks_trace.json";
  const chain_run run = queued_children_stolen_one_by_one({.sched = "ws", .trace = path});
  const int thief = 1 - run.creator;
  for (int i = 0; i < children; ++i) {
    EXPECT_EQ(run.ran_on[static_cast<std::size_t>(i)], thief) << "child " << i;
  }
  EXPECT_EQ(run.stats.total().chained_tasks, 0u);
  std::remove(path.c_str());
}

TEST(ChainedTasks, AdwsRunsTheChildrenMigratedToAWorkerOneAfterAnother) {
  locus::runtime rt{locus::options{.sched = "adws", .workers = 2}};
  std::atomic<bool> all_spawned{false};
  std::atomic<int> migrated_ran_elsewhere{0};
  int creator = -1;
  rt.exec([&] {
    creator = locus::this_worker();
    // Equal hints: the first half of the children is planned on the other worker and goes to its
    // migration queue, where they wait until every one of them is queued. The creator spawns its
    // own half only once they have run, so that neither its join nor its queued children (which
    // the other worker may steal at the end) come between them.
    locus::task_group tg{locus::work_hint{static_cast<double>(children)}};
    const auto spawn = [&](int i) {
      tg.run(
          [&, i] {
            if (i >= children / 2 || locus::this_worker() == creator) return;
            EXPECT_TRUE(wait_until([&] { return all_spawned.load(std::memory_order_acquire); }));
            migrated_ran_elsewhere.fetch_add(1, std::memory_order_release);
          },
          locus::work_hint{1.0});
    };
    for (int i = 0; i < children / 2; ++i) spawn(i);
    all_spawned.store(true, std::memory_order_release);
    EXPECT_TRUE(wait_until(
        [&] { return migrated_ran_elsewhere.load(std::memory_order_acquire) == children / 2; }));
    const locus::stats before_own_half = rt.stats();
    EXPECT_EQ(before_own_half.workers[static_cast<std::size_t>(1 - creator)].chained_tasks,
              static_cast<std::uint64_t>(children / 2 - 1));
    for (int i = children / 2; i < children; ++i) spawn(i);
    tg.wait();
  });
  EXPECT_EQ(migrated_ran_elsewhere.load(), children / 2);
}

}  // namespace
