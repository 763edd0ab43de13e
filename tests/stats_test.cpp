// locus::stats: time accounting over a runtime's life.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "locus/locus.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

double seconds(clock_type::duration d) {
  return std::chrono::duration<double>(d).count();
}

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  locus::task_group tg;
  tg.run([&] { a = fib(n - 1); });
  b = fib(n - 2);
  tg.wait();
  return a + b;
}

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

}  // namespace
