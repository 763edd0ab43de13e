// locus::stats: time accounting over a runtime's life, and the names of the steal levels.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "fib.hpp"
#include "locus/locus.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds(clock_type::duration d) {
  return std::chrono::duration<double>(d).count();
}

using locus_test::fib;

TEST(Stats, PhasesPartitionTheLifetimeOfTheRuntime) {
  const auto construct_before = clock_type::now();
  locus::runtime rt{locus::options{.workers = 2}};
  const auto construct_after = clock_type::now();
  // Busy (fib, and a task that sleeps), then idle with nothing to run.
  rt.exec([] {
    locus::task_group tg;
    tg.run([] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); });
    fib(20);
    tg.wait();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  const auto read_before = clock_type::now();
  const auto s = rt.stats();
  const auto read_after = clock_type::now();
  const double shortest = seconds(read_before - construct_after);
  const double longest = seconds(read_after - construct_before);
  ASSERT_EQ(s.workers.size(), 2u);
  for (const auto& w : s.workers) {
    // Without a reset, the accounting starts when the runtime does: a worker's first phase must
    // not reach back to an earlier epoch.
    const double sum = w.busy_s + w.idle_s + w.overhead_s;
    EXPECT_LE(sum, longest * 1.01 + 0.002) << "worker " << w.worker;
    EXPECT_GE(sum, shortest * 0.99 - 0.002) << "worker " << w.worker;
  }
}

// Names each level of steals_by_level after the machine-tree object where thief and victim
// meet; the indices alone (L0 .. L5) read like cache levels, which they are not.
TEST(Stats, TextAndJsonNameTheStealLevels) {
  locus::runtime rt{
      locus::options{.workers = 4, .topology = "pack:2 l3:1(size=8MB) l2:2(size=1MB) core:1 pu:1"}};
  EXPECT_EQ(rt.exec([] { return fib(18); }), 2584);
  const auto s = rt.stats();
  ASSERT_EQ(s.total().steals_by_level.size(), 6u);
  // pu <- core <- l2 <- l3 <- package <- machine: workers 0 and 1 meet at their L3, workers 1
  // and 2 only at the machine; no two workers meet at a core, an L2 or a package, and those
  // levels are named after the leaves' ancestors that many levels up.
  EXPECT_EQ(s.level_names,
            (std::vector<std::string>{"pu", "core", "L2", "L3", "package", "machine"}));
  const std::string json = s.to_json();
  EXPECT_NE(json.find(R"("steal_levels":["pu","core","L2","L3","package","machine"])"),
            std::string::npos)
      << json;
  // The per-level counts stay plain arrays, as tools/report reads them.
  EXPECT_NE(json.find(R"("steals_by_level":[)"), std::string::npos) << json;
  const std::string text = s.to_text();
  for (const char* level : {" pu=", " core=", " L2=", " L3=", " package=", " machine="}) {
    EXPECT_NE(text.find(level), std::string::npos) << level << " in\n" << text;
  }
  EXPECT_EQ(text.find("L0="), std::string::npos) << text;
}

// A scheduler's own figures: whole numbers exactly, fractions with six digits, nothing JSON
// cannot hold; in the text, one line after the table.
TEST(Stats, PolicyFiguresInTextAndJson) {
  locus::stats s;
  s.scheduler = "cats";
  s.policy = {{"profiled_tasks", 262144},
              {"bytes_per_ns", 2.5},
              {"root_bytes", 8388608},
              {"nothing", std::nan("")}};
  const std::string json = s.to_json();
  EXPECT_NE(
      json.find(
          R"("policy":{"profiled_tasks":262144,"bytes_per_ns":2.5,"root_bytes":8388608,"nothing":null})"),
      std::string::npos)
      << json;
  EXPECT_NE(s.to_text().find("cats: profiled_tasks=262144 bytes_per_ns=2.5 root_bytes=8388608"),
            std::string::npos)
      << s.to_text();
  EXPECT_NE(locus::stats{}.to_json().find(R"("policy":{})"), std::string::npos);
}

TEST(Stats, RealTopologyNamesEveryStealLevel) {
  locus::runtime rt{locus::options{.workers = 2}};
  rt.exec([] { return fib(18); });
  const auto s = rt.stats();
  ASSERT_FALSE(s.level_names.empty());
  EXPECT_EQ(s.level_names.size(), s.total().steals_by_level.size());
  for (const auto& w : s.workers) EXPECT_EQ(s.level_names.size(), w.steals_by_level.size());
  EXPECT_EQ(s.level_names.front(), "pu");
  for (const auto& name : s.level_names) {
    EXPECT_FALSE(name.empty());
    EXPECT_NE(s.to_text().find(" " + name + "="), std::string::npos) << name;
  }
}

}  // namespace

TEST(Stats, StealTotalsSumTheLevels) {
  locus::worker_stats w;
  w.steals_by_level = {0, 3, 4, 1};
  w.failed_steals_by_level = {0, 10, 0, 2};
  EXPECT_EQ(w.steals(), 8u);
  EXPECT_EQ(w.failed_steals(), 12u);
  EXPECT_EQ(locus::worker_stats{}.steals(), 0u);
}

TEST(Stats, CancelledTasksReachTheJson) {
  locus::stats s;
  s.canceled_tasks = 7;
  EXPECT_NE(s.to_json().find(R"("canceled_tasks":7)"), std::string::npos) << s.to_json();
  EXPECT_NE(s.to_text().find("cancelled tasks"), std::string::npos);
}
