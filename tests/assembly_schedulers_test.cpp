// The private schedulers of seed 003 (locus/assembly_schedulers.hpp): a table run in lockstep
// with a barrier between steps, and a DAG run from one shared ready queue.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "locus/locus.hpp"

namespace {

constexpr const char* kSixteen = "pack:2 l3:2(size=4MB) l2:2(size=512KB) core:2 pu:1";

locus::options tao(int workers = 16) {
  return locus::options{.sched = "tao", .workers = workers, .topology = kSixteen};
}

void run_one(locus::runtime& rt, std::unique_ptr<locus::assembly> a) {
  rt.exec([&] {
    locus::task_group tg;
    locus::run_assembly(tg, std::move(a));
    tg.wait();
  });
}

// Every cell of step s + 1 starts after every cell of step s has ended, each cell runs once,
// on the worker of its column, and each column on its own worker.
TEST(TableAssembly, StepsAreSeparatedByBarriers) {
  locus::runtime rt{tao()};
  for (const auto entry :
       {locus::assembly_entry::asynchronous, locus::assembly_entry::synchronous}) {
    constexpr int width = 4, steps = 6;
    std::vector<std::atomic<int>> ended(steps);
    std::vector<std::atomic<int>> column_worker(width);
    for (auto& c : column_worker) c = -1;
    std::atomic<int> too_early{0}, runs{0}, moved{0};
    auto table = std::make_unique<locus::table_assembly>(width, steps, entry);
    for (int s = 0; s < steps; ++s) {
      for (int i = 0; i < width; ++i) {
        if ((s + i) % 3 == 2) continue;  // some empty cells
        table->set(s, i, [&, s, i] {
          runs.fetch_add(1);
          int expected = -1;
          if (!column_worker[static_cast<std::size_t>(i)].compare_exchange_strong(
                  expected, locus::this_worker()) &&
              expected != locus::this_worker()) {
            moved.fetch_add(1);
          }
          // Everything of the step before has ended; a cell that had run with it would still be
          // counted there.
          for (int before = 0; before < s; ++before) {
            int cells = 0;
            for (int j = 0; j < width; ++j) cells += (before + j) % 3 == 2 ? 0 : 1;
            if (ended[static_cast<std::size_t>(before)].load() != cells) too_early.fetch_add(1);
          }
          ended[static_cast<std::size_t>(s)].fetch_add(1);
        });
      }
    }
    run_one(rt, std::move(table));
    int cells = 0;
    for (int s = 0; s < steps; ++s) {
      for (int i = 0; i < width; ++i) cells += (s + i) % 3 == 2 ? 0 : 1;
    }
    EXPECT_EQ(runs.load(), cells);
    EXPECT_EQ(too_early.load(), 0);
    EXPECT_EQ(moved.load(), 0);
    std::set<int> workers;
    for (const auto& c : column_worker) workers.insert(c.load());
    EXPECT_EQ(workers.size(), static_cast<std::size_t>(width));
  }
}

// A cell that throws: the other cells and the barriers go on, and the exception reaches wait.
TEST(TableAssembly, AThrowingCellKeepsTheBarriers) {
  locus::runtime rt{tao(4)};
  auto table = std::make_unique<locus::table_assembly>(2, 3);
  std::atomic<int> runs{0};
  for (int s = 0; s < 3; ++s) {
    for (int i = 0; i < 2; ++i) {
      table->set(s, i, [&runs, s, i] {
        runs.fetch_add(1);
        if (s == 0 && i == 1) throw std::runtime_error("cell 0,1");
      });
    }
  }
  std::string caught;
  rt.exec([&] {
    locus::task_group tg;
    locus::run_assembly(tg, std::move(table));
    try {
      tg.wait();
    } catch (const std::runtime_error& e) {
      caught = e.what();
    }
  });
  EXPECT_EQ(caught, "cell 0,1");
  EXPECT_EQ(runs.load(), 6);
  EXPECT_THROW(locus::table_assembly(2, 3).set(3, 0, [] {}), std::out_of_range);
  EXPECT_THROW(locus::table_assembly(2, 3).set(0, 2, [] {}), std::out_of_range);
  EXPECT_THROW(locus::table_assembly(2, -1), std::invalid_argument);
}

// A random DAG of 200 tasks: each runs once, after all its predecessors, and the assembly's
// workers share the work.
TEST(DependenceAssembly, TasksRunOnceAfterTheirPredecessors) {
  locus::runtime rt{tao()};
  constexpr int n = 200;
  std::vector<std::atomic<int>> done(n);
  std::vector<std::vector<int>> preds(n);
  std::atomic<int> violations{0};
  std::mutex lock;
  std::set<int> workers;
  auto dag = std::make_unique<locus::dependence_assembly>(4);
  std::mt19937 rng(3);
  for (int t = 0; t < n; ++t) {
    ASSERT_EQ(dag->add([&, t] {
      for (const int p : preds[static_cast<std::size_t>(t)]) {
        if (done[static_cast<std::size_t>(p)].load() != 1) violations.fetch_add(1);
      }
      if (done[static_cast<std::size_t>(t)].fetch_add(1) != 0) violations.fetch_add(1);
      volatile double x = 0;
      for (int k = 0; k < 20000; ++k) x = x + k;
      const std::lock_guard hold(lock);
      workers.insert(locus::this_worker());
    }),
              t);
  }
  for (int t = 1; t < n; ++t) {
    for (int e = 0; e < 2; ++e) {
      const int p = static_cast<int>(rng() % static_cast<unsigned>(t));
      dag->depend(p, t);
      preds[static_cast<std::size_t>(t)].push_back(p);
    }
  }
  dag->depend(0, n - 1);
  preds[n - 1].push_back(0);
  EXPECT_THROW(dag->depend(n - 1, 0), std::invalid_argument);
  run_one(rt, std::move(dag));
  EXPECT_EQ(violations.load(), 0);
  for (const auto& d : done) EXPECT_EQ(d.load(), 1);
  EXPECT_GE(workers.size(), 1u);
  EXPECT_LE(workers.size(), 4u);
}

// A task that throws: those that depend on it do not run, the others do, and the first
// exception reaches wait.
TEST(DependenceAssembly, TasksAfterAFailedOneDoNotRun) {
  locus::runtime rt{tao(4)};
  auto dag = std::make_unique<locus::dependence_assembly>(2);
  std::vector<std::atomic<int>> ran(5);
  const int a = dag->add([&] {
    ran[0] = 1;
    throw std::runtime_error("a");
  });
  const int b = dag->add([&] { ran[1] = 1; });
  const int c = dag->add([&] { ran[2] = 1; });
  const int d = dag->add([&] { ran[3] = 1; });
  const int e = dag->add([&] { ran[4] = 1; });
  dag->depend(a, b);  // b and then c after the failing a
  dag->depend(b, c);
  dag->depend(d, e);  // unrelated
  EXPECT_THROW(dag->depend(c, a), std::invalid_argument);
  EXPECT_THROW(dag->depend(a, 9), std::out_of_range);
  std::string caught;
  rt.exec([&] {
    locus::task_group tg;
    locus::run_assembly(tg, std::move(dag));
    try {
      tg.wait();
    } catch (const std::runtime_error& x) {
      caught = x.what();
    }
  });
  EXPECT_EQ(caught, "a");
  EXPECT_EQ(ran[0].load(), 1);
  EXPECT_EQ(ran[1].load(), 0);
  EXPECT_EQ(ran[2].load(), 0);
  EXPECT_EQ(ran[3].load(), 1);
  EXPECT_EQ(ran[4].load(), 1);
}

}  // namespace
