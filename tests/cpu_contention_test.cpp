// A pinned worker whose PU another thread keeps busy lets the OS run it on any PU of its place,
// and binds itself to its PU again once the contention is over (sched/cpu_contention.hpp).
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "locus/locus.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

int cpus_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  return CPU_COUNT(&set);
}

// Short tasks on every worker, so that each goes back to its scheduler loop often, where the
// binding is reconsidered; returns the largest number of CPUs a worker's own thread was bound to
// while it ran a task. Tasks on the calling thread (which exec seats in a sleeping worker's place,
// and which is the user's, never bound on a machine of one place) do not count.
int short_tasks(locus::runtime& rt) {
  std::atomic<int> widest{0};
  const std::thread::id caller = std::this_thread::get_id();
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < 64; ++i) {
      tg.run([&] {
        const auto until = clock_type::now() + std::chrono::microseconds(100);
        while (clock_type::now() < until) {
        }
        if (std::this_thread::get_id() == caller) return;
        const int n = cpus_of_this_thread();
        int seen = widest.load();
        while (n > seen && !widest.compare_exchange_weak(seen, n)) {
        }
      });
    }
    tg.wait();
  });
  return widest.load();
}

TEST(CpuContention, AContendedWorkerIsUnboundAndBoundAgainAfterwards) {
  const unsigned cpus = std::thread::hardware_concurrency();
  if (cpus_of_this_thread() < 2 || cpus < 2) GTEST_SKIP() << "needs 2 CPUs";
  if (!std::ifstream("/proc/thread-self/schedstat")) GTEST_SKIP() << "no schedstat";
  locus::runtime rt{locus::options{.workers = 2}};
  if (rt.describe().find("pinned             = yes") == std::string::npos) {
    GTEST_SKIP() << "workers are not pinned";
  }
  // Another process (a test beside this one) may contend for a moment, and the workers then give
  // way for the watch's memory: they are bound again once it is over.
  const auto settle = clock_type::now() + std::chrono::seconds(20);
  int bound = short_tasks(rt);
  while (bound > 1 && clock_type::now() < settle) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    bound = short_tasks(rt);
  }
  ASSERT_LE(bound, 1) << "a pinned worker runs on one CPU";

  // One spinning thread per CPU of the process: every worker now waits for its PU.
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    spinners.emplace_back([&stop, cpu] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const auto give_up = clock_type::now() + std::chrono::seconds(20);
  int widest = 1;
  while (widest < 2 && clock_type::now() < give_up) widest = short_tasks(rt);
  stop = true;
  for (auto& t : spinners) t.join();
  EXPECT_GE(widest, 2) << "no worker was let off its PU while it waited for it";
  EXPECT_GE(rt.stats().total().cpu_unbinds, 1u);

  // Without the spinners the run delay drops, and every worker binds itself to its PU again.
  const auto give_up_again = clock_type::now() + std::chrono::seconds(20);
  while (widest != 1 && clock_type::now() < give_up_again) widest = short_tasks(rt);
  EXPECT_EQ(widest, 1) << "a worker stayed unbound after the contention ended";
}

}  // namespace
