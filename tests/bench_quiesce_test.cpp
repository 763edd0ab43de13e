// The harness's wait, between two runs, for the other threads of the process to fall asleep
// (bench/harness/quiesce.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "harness/quiesce.hpp"

namespace {

using namespace std::chrono_literals;
using locus_bench::other_thread_states;
using locus_bench::wait_for_other_threads_to_sleep;

TEST(BenchQuiesce, WaitsUntilNoThreadRuns) {
  // An OpenMP thread spinning for three looks, then asleep; a locus worker asleep throughout.
  const std::vector<std::vector<char>> script{{'R', 'S'}, {'R', 'S'}, {'R', 'S'}, {'S', 'S'}};
  std::size_t look = 0;
  const auto r = wait_for_other_threads_to_sleep([&] { return script.at(look++); }, 1us, 1000ms);
  EXPECT_TRUE(r.asleep);
  EXPECT_EQ(r.looks, 4);
}

TEST(BenchQuiesce, OnlyRunningThreadsAreWaitedFor) {
  // Asleep (S), in uninterruptible sleep (D), stopped (T), a zombie (Z): none is waited for.
  std::size_t looks = 0;
  const auto r = wait_for_other_threads_to_sleep(
      [&] {
        ++looks;
        return std::vector<char>{'S', 'D', 'T', 'Z'};
      },
      1us, 1000ms);
  EXPECT_TRUE(r.asleep);
  EXPECT_EQ(looks, 1u);
  EXPECT_TRUE(wait_for_other_threads_to_sleep([] { return std::vector<char>{}; }, 1us, 1ms).asleep);
}

TEST(BenchQuiesce, GivesUpAtTheLimitWhenAThreadNeverSleeps) {
  const auto r = wait_for_other_threads_to_sleep(
      [] {
        return std::vector<char>{'S', 'R'};
      },
      1us, 5ms);
  EXPECT_FALSE(r.asleep);
  EXPECT_GT(r.looks, 1);
}

// On this process's own threads: a spinning thread is running (or runnable, when the OS has
// descheduled it: the same state); once it blocks, it no longer is.
TEST(BenchQuiesce, SeesAnotherThreadOfThisProcessSpinAndSleep) {
  std::atomic<int> phase{0};
  std::thread other([&] {
    while (phase.load() == 0) {
    }
    phase.store(2);
    while (phase.load() != 3) std::this_thread::sleep_for(1ms);
  });
  const auto spinning = wait_for_other_threads_to_sleep(other_thread_states, 100us, 20ms);
  EXPECT_FALSE(spinning.asleep);
  phase.store(1);
  while (phase.load() != 2) {
  }
  const auto sleeping = wait_for_other_threads_to_sleep(other_thread_states, 100us, 5000ms);
  EXPECT_TRUE(sleeping.asleep);
  phase.store(3);
  other.join();
}

}  // namespace
