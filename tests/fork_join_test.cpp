// Behaviour of task_group, the parallel patterns and the runtime's worker loop.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fib.hpp"
#include "locus/locus.hpp"

namespace {

constexpr const char* synthetic16 = "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1";

using locus_test::fib;

long serial_fib(int n) {
  return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

std::uint64_t total_steals(const locus::stats& s) {
  std::uint64_t n = 0;
  for (auto x : s.total().steals_by_level) n += x;
  return n;
}

class Workers : public ::testing::TestWithParam<int> {};

TEST_P(Workers, FibMatchesSerial) {
  const int p = GetParam();
  locus::options o{.workers = p};
  if (p > 2) o.topology = synthetic16;
  locus::runtime rt{o};
  ASSERT_EQ(rt.num_workers(), p);
  EXPECT_EQ(rt.exec([] { return fib(25); }), serial_fib(25));
  const auto s = rt.stats();
  ASSERT_EQ(static_cast<int>(s.workers.size()), p);
  // Every run() of fib(25) is one spawn: fib(n) spawns once per call with n >= 2.
  EXPECT_EQ(s.total().spawns, static_cast<std::uint64_t>(serial_fib(26) - 1));
  if (p == 1) {
    EXPECT_EQ(total_steals(s), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Core, Workers, ::testing::Values(1, 2, 16));

TEST(ForkJoin, OneWorkerRunsChildrenInSerialOrder) {
  locus::runtime rt{locus::options{.workers = 1}};
  std::vector<int> order;
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < 5; ++i) {
      tg.run([&order, i] { order.push_back(i); });
      order.push_back(100 + i);
    }
    tg.wait();
  });
  // Child-first: each child runs before the rest of its parent.
  EXPECT_EQ(order, (std::vector<int>{0, 100, 1, 101, 2, 102, 3, 103, 4, 104}));
}

TEST(ForkJoin, ParentFirstChildrenRunAtTheJoinNewestFirst) {
  locus::runtime rt{locus::options{.workers = 1}};
  std::vector<int> order;
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < 4; ++i) tg.run([&order, i] { order.push_back(i); }, locus::parent_first);
    order.push_back(-1);
    tg.wait();
  });
  EXPECT_EQ(order, (std::vector<int>{-1, 3, 2, 1, 0}));
}

int nest(int depth) {
  if (depth == 0) return 0;
  int below = 0;
  locus::task_group tg;
  tg.run([&] { below = nest(depth - 1); });
  tg.wait();
  return below + 1;
}

TEST(ForkJoin, NestedGroupsTenThousandDeep) {
#if defined(LOCUS_TSAN)
  // ThreadSanitizer counts every stack's fiber as a thread (it stops at 8128 of them), and each
  // costs it milliseconds: the depth is the release and asan builds' to test.
  constexpr int depth = 1'000;
#else
  constexpr int depth = 10'000;
#endif
  locus::runtime rt{locus::options{.workers = 2, .stack_size = 64 * 1024}};
  EXPECT_EQ(rt.exec([] { return nest(depth); }), depth);
}

TEST(ForkJoin, MillionTinyTasks) {
  locus::runtime rt{locus::options{.workers = 2}};
  std::vector<std::atomic<unsigned char>> hit(1'000'000);
  rt.exec([&] {
    locus::parallel_for(0, 1'000'000, [&](int i) { hit[static_cast<std::size_t>(i)]++; });
  });
  for (const auto& h : hit) ASSERT_EQ(h.load(), 1);
  std::atomic<long> sum{0};
  rt.exec([&] {
    locus::task_group tg;
    for (long i = 0; i < 1'000'000; ++i) tg.run([&sum, i] { sum += i; }, locus::parent_first);
    tg.wait();
  });
  EXPECT_EQ(sum.load(), 999'999L * 1'000'000L / 2);
}

TEST(ForkJoin, ParallelReduceEqualsSerialFold) {
  locus::runtime rt{locus::options{.workers = 2}};
  const long got = rt.exec([] {
    return locus::parallel_reduce(
        0L, 100'000L, 0L,
        [](long lo, long hi, const long& init) {
          long s = init;
          for (long i = lo; i < hi; ++i) s += i * i % 7;
          return s;
        },
        [](long a, long b) { return a + b; }, locus::grain{64});
  });
  long expect = 0;
  for (long i = 0; i < 100'000; ++i) expect += i * i % 7;
  EXPECT_EQ(got, expect);
}

// 2x2 integer matrices under the product: associative, not commutative, so a reduction that
// combined or folded out of order would give a different matrix.
struct mat2 {
  long a = 1, b = 0, c = 0, d = 1;
  friend bool operator==(const mat2&, const mat2&) = default;
};

mat2 operator*(const mat2& x, const mat2& y) {
  constexpr long m = 1'000'003;  // keeps the entries small; the product stays associative
  return {(x.a * y.a + x.b * y.c) % m, (x.a * y.b + x.b * y.d) % m, (x.c * y.a + x.d * y.c) % m,
          (x.c * y.b + x.d * y.d) % m};
}

mat2 element(long i) {
  return {i % 5 + 1, i % 3, (i * 7) % 4, i % 2 + 1};
}

TEST(ForkJoin, ParallelReduceElementFormEqualsSerialFold) {
  locus::runtime rt{locus::options{.workers = 2}};
  const long squares = rt.exec([] {
    return locus::parallel_reduce(
        0L, 100'000L, 0L, [](long i, const long& acc) { return acc + i * i % 7; },
        [](long a, long b) { return a + b; }, locus::grain{64});
  });
  long expect = 0;
  for (long i = 0; i < 100'000; ++i) expect += i * i % 7;
  EXPECT_EQ(squares, expect);

  for (std::size_t g : {1, 7, 64, 5000}) {
    SCOPED_TRACE(g);
    const mat2 product = rt.exec([g] {
      return locus::parallel_reduce(
          0L, 3'000L, mat2{}, [](long i, const mat2& acc) { return acc * element(i); },
          [](const mat2& x, const mat2& y) { return x * y; }, locus::grain{g});
    });
    mat2 serial;
    for (long i = 0; i < 3'000; ++i) serial = serial * element(i);
    EXPECT_EQ(product, serial);
  }

  // Unsigned indices and an empty range.
  const std::string digits = rt.exec([] {
    return locus::parallel_reduce(
        0u, 20u, std::string{},
        [](unsigned i, const std::string& acc) { return acc + static_cast<char>('a' + i); },
        [](const std::string& x, const std::string& y) { return x + y; }, locus::grain{3});
  });
  EXPECT_EQ(digits, "abcdefghijklmnopqrst");
  EXPECT_EQ(locus::parallel_reduce(
                5, 5, 42, [](int, const int&) { return 0; }, [](int, int) { return 0; }),
            42);
}

TEST(ForkJoin, ParallelReducePrefersTheRangeFormWhenBothFit) {
  locus::runtime rt{locus::options{.workers = 2}};
  // Callable as (lo, hi, init) and as (i, acc): the range form is the one called.
  const long got = rt.exec([] {
    return locus::parallel_reduce(
        0L, 1'000L, 0L,
        [](long lo, long hi, long init = -1'000'000) {
          return init == -1'000'000 ? init : init + (hi - lo);
        },
        [](long a, long b) { return a + b; }, locus::grain{10});
  });
  EXPECT_EQ(got, 1'000L);
}

TEST(ForkJoin, ParallelInvokeRunsEveryCallable) {
  locus::runtime rt{locus::options{.workers = 2}};
  int a = 0, b = 0, c = 0;
  rt.exec([&] { locus::parallel_invoke([&] { a = 1; }, [&] { b = 2; }, [&] { c = 3; }); });
  EXPECT_EQ(a + b + c, 6);
}

TEST(ForkJoin, GroupIsReusableAfterWait) {
  locus::runtime rt{locus::options{.workers = 2}};
  rt.exec([] {
    locus::task_group tg;
    for (int round = 0; round < 50; ++round) {
      std::atomic<int> n{0};
      for (int i = 0; i < 20; ++i) tg.run([&] { n++; });
      tg.wait();
      ASSERT_EQ(n.load(), 20);
    }
  });
}

TEST(ForkJoin, WaitOnStolenChildrenSeesTheirResults) {
  locus::runtime rt{locus::options{.workers = 2}};
  int child_worker = -1, parent_worker = -1;
  long child_result = 0;
  rt.exec([&] {
    std::atomic<bool> continuation_ran{false};
    locus::task_group tg;
    tg.run([&] {
      child_worker = locus::this_worker();
      // The continuation can only run if the other worker steals it.
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!continuation_ran.load() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      child_result = fib(20);
    });
    parent_worker = locus::this_worker();
    continuation_ran = true;
    tg.wait();
    EXPECT_EQ(child_result, serial_fib(20));
  });
  EXPECT_NE(child_worker, parent_worker);
  EXPECT_GE(total_steals(rt.stats()), 1u);
}

TEST(Exceptions, FirstLeafExceptionIsRethrownAtWait) {
  locus::runtime rt{locus::options{.workers = 2}};
  EXPECT_THROW(rt.exec([] {
    locus::task_group tg;
    tg.run([] { throw std::runtime_error("leaf"); });
    tg.wait();
  }),
               std::runtime_error);
}

TEST(Exceptions, OthersAreCountedNotLost) {
  locus::runtime rt{locus::options{.workers = 1}};
  unsigned suppressed = 0;
  std::string caught;
  rt.exec([&] {
    locus::task_group tg;
    // Each child starts the next one in the group before it throws, so that all five have
    // started when the first exception cancels the group.
    auto child = [&tg](auto& self, int i) -> void {
      if (i < 4) tg.run([&self, i] { self(self, i + 1); });
      throw std::runtime_error(std::to_string(i));
    };
    tg.run([&] { child(child, 0); });
    try {
      tg.wait();
    } catch (const std::runtime_error& e) {
      caught = e.what();
    }
    suppressed = tg.suppressed_exceptions();
  });
  EXPECT_EQ(caught, "4");  // one worker, child-first: the innermost ends first, and wins
  EXPECT_EQ(suppressed, 4u);
  EXPECT_EQ(rt.stats().suppressed_exceptions, 4u);
}

// A group whose child threw, destroyed without wait() once nothing of it runs any more: the
// destructor disposes of the exception and counts it (the ASan stage sees it freed).
TEST(Exceptions, AFailedGroupNeverWaitedForCountsItsExceptionSuppressed) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 1}};
  bool failed_before_destruction = false;
  rt.exec([&] {
    locus::task_group tg;
    tg.run([] { throw std::runtime_error("never waited for"); });
    // One worker, child-first: the child has run and thrown; its group is cancelling.
    failed_before_destruction = tg.is_canceling();
  });
  EXPECT_TRUE(failed_before_destruction);
  EXPECT_EQ(rt.stats().suppressed_exceptions, 1u);
  EXPECT_EQ(locus::detail::canceling_groups.load(), 0u);
}

TEST(Exceptions, PropagateThroughInnerGroups) {
  locus::runtime rt{locus::options{.workers = 2}};
  auto deep = [](auto& self, int d) -> void {
    locus::task_group tg;
    tg.run([&] {
      if (d == 0) throw std::logic_error("bottom");
      self(self, d - 1);
    });
    fib(10);
    tg.wait();
  };
  EXPECT_THROW(rt.exec([&] { deep(deep, 30); }), std::logic_error);
  // The runtime is still usable afterwards.
  EXPECT_EQ(rt.exec([] { return fib(15); }), serial_fib(15));
}

TEST(Exceptions, FromParentFirstChildren) {
  locus::runtime rt{locus::options{.workers = 2}};
  EXPECT_THROW(rt.exec([] {
    locus::task_group tg;
    for (int i = 0; i < 100; ++i) {
      tg.run(
          [i] {
            if (i == 37) throw std::out_of_range("37");
          },
          locus::parent_first);
    }
    tg.wait();
  }),
               std::out_of_range);
}

TEST(Runtime, CallsFromSeveralExternalThreadsAtOnce) {
  locus::runtime rt{locus::options{.workers = 2}};
  std::vector<long> results(6);
  std::vector<std::thread> callers;
  for (int t = 0; t < 6; ++t) {
    callers.emplace_back([&, t] {
      results[static_cast<std::size_t>(t)] = rt.exec([t] { return fib(18 + t % 3); });
    });
  }
  for (auto& c : callers) c.join();
  for (int t = 0; t < 6; ++t)
    EXPECT_EQ(results[static_cast<std::size_t>(t)], serial_fib(18 + t % 3));
}

TEST(Runtime, TaskGroupFromANonWorkerThreadUsesTheDefaultRuntime) {
  std::atomic<int> on_worker{0};
  locus::task_group tg;
  for (int i = 0; i < 8; ++i) {
    tg.run([&] {
      if (locus::this_worker() >= 0) on_worker++;
    });
  }
  tg.wait();
  EXPECT_EQ(on_worker.load(), 8);
  EXPECT_EQ(locus::root_exec([] { return fib(20); }), serial_fib(20));
}

TEST(Runtime, NestedExecRunsInline) {
  locus::runtime rt{locus::options{.workers = 2}};
  EXPECT_EQ(rt.exec([&] { return rt.exec([] { return locus::this_worker() >= 0; }); }), true);
}

TEST(Runtime, IdleWorkersGoToSleep) {
  locus::runtime rt{locus::options{.workers = 2}};
  rt.exec([] { return fib(22); });
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool all_slept = false;
  while (!all_slept && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    all_slept = true;
    for (const auto& w : rt.stats().workers) all_slept = all_slept && w.sleeps > 0;
  }
  EXPECT_TRUE(all_slept);
}

TEST(Stats, StealsAreCountedByTopologyLevel) {
  locus::runtime rt{locus::options{.workers = 16, .topology = synthetic16}};
  rt.exec([] {
    // Oversubscribed workers may all be descheduled during a short run: force one steal.
    std::atomic<bool> continuation_ran{false};
    locus::task_group tg;
    tg.run([&] {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!continuation_ran.load() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
      }
    });
    continuation_ran = true;
    tg.wait();
  });
  EXPECT_EQ(rt.exec([] { return fib(24); }), serial_fib(24));
  const auto s = rt.stats();
  const auto total = s.total();
  // Leaves of one package meet at their L3, 3 levels up (core, l2, l3); leaves of different
  // packages only at the root, 5 levels up. No other level can be a thief-victim distance.
  ASSERT_EQ(total.steals_by_level.size(), 6u);
  for (int level : {0, 1, 2, 4}) {
    EXPECT_EQ(total.steals_by_level[static_cast<std::size_t>(level)], 0u) << level;
    EXPECT_EQ(total.failed_steals_by_level[static_cast<std::size_t>(level)], 0u) << level;
  }
  EXPECT_GE(total_steals(s), 1u);
  EXPECT_GE(total.failed_steals_by_level[3] + total.failed_steals_by_level[5], 1u);
  EXPECT_NE(s.to_json().find("\"steals_by_level\""), std::string::npos);
}

TEST(Stats, PrintedAtExitWithLocusStats) {
  // Re-executes the binary: forking a process whose earlier tests left worker threads is unsafe.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("LOCUS_STATS", "1", 1);
        {
          locus::runtime rt{locus::options{.workers = 2}};
          rt.exec([] { return fib(15); });
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "locus statistics \\(scheduler ws\\)");
}

}  // namespace

namespace {

TEST(Stats, PhasesPartitionTheTimeSinceReset) {
  locus::runtime rt{locus::options{.workers = 2}};
  rt.exec([] { return fib(18); });  // warm up: stacks mapped, workers started
  const auto reset_before = std::chrono::steady_clock::now();
  rt.reset_stats();
  const auto reset_after = std::chrono::steady_clock::now();
  EXPECT_EQ(rt.exec([] { return fib(22); }), serial_fib(22));
  const auto read_before = std::chrono::steady_clock::now();
  const auto s = rt.stats();
  const auto read_after = std::chrono::steady_clock::now();
  const double shortest = std::chrono::duration<double>(read_before - reset_after).count();
  const double longest = std::chrono::duration<double>(read_after - reset_before).count();
  for (const auto& w : s.workers) {
    // Every instant since the reset is busy, idle or overhead, exactly once (a phase change
    // racing with the read may misplace a few microseconds).
    const double sum = w.busy_s + w.idle_s + w.overhead_s;
    EXPECT_GE(sum, shortest - 1e-4) << "worker " << w.worker;
    EXPECT_LE(sum, longest + 1e-4) << "worker " << w.worker;
  }
  // The root ran fib(22) inside a task: its worker's busy time is already counted when exec
  // returns.
  EXPECT_GT(s.total().busy_s, 0.0);
  EXPECT_GT(s.total().spawns, 0u);
}

}  // namespace
