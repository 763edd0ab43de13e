// LOCUS_WORKSPAN: work, span and parallelism of hand-built task trees whose leaves run a counted
// loop. Only ratios are checked, never absolute times: the machine may be shared.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <sstream>

#include "harness/cli.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "locus/locus.hpp"

namespace {

// The unit of work: a counted loop the compiler cannot remove.
// One dependent multiply-add per iteration, in one out-of-line copy: every call site runs the
// same instructions at the same speed (an inlined volatile loop varies with its surroundings).
[[gnu::noinline]] void spin(std::uint64_t iterations) {
  std::uint64_t x = iterations;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    asm volatile("" : "+r"(x));
  }
}

constexpr std::uint64_t leaf_iterations = 100'000;

// What each leaf took on the wall clock, in the order the leaves ran (one worker). The host may
// slow down or preempt the worker inside one leaf, which changes the true work and span of that
// run: the expected parallelism is computed from these durations, not from the leaves' nominal
// sizes, so a test checks the instrument's arithmetic against an independent clock.
std::vector<double> leaf_seconds;
// The instrument's figures for the run whose leaves `leaf_seconds` holds.
double run_work_s = 0, run_span_s = 0;

void timed_spin(std::uint64_t iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  spin(iterations);
  leaf_seconds.push_back(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

double sum(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}
double max(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end());
}

void tree(int depth) {
  if (depth == 0) {
    timed_spin(leaf_iterations);
    return;
  }
  locus::task_group tg;
  tg.run([depth] { tree(depth - 1); });
  tree(depth - 1);
  tg.wait();
}

long involuntary_switches() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return u.ru_nivcsw;
}

// Measured parallelism over the parallelism `expected` computes from that run's leaf durations,
// for a few runs of `body`, sorted. A run in which the worker thread was preempted is measured
// again (a preemption between leaves lands on the span but in no leaf); after many tries the
// preempted runs count too.
template <class F, class E>
std::vector<double> parallelism_ratios(F body, E expected) {
  locus::runtime rt(locus::options{.workers = 1, .workspan = true});
  std::vector<double> clean, all;
  for (int i = 0; i < 40 && clean.size() < 5; ++i) {
    rt.reset_stats();
    leaf_seconds.clear();
    const bool preempted = rt.exec([&] {
      const long before = involuntary_switches();
      body();
      return involuntary_switches() != before;
    });
    const auto ws = rt.workspan();
    EXPECT_TRUE(ws.has_value());
    if (!ws) break;
    EXPECT_EQ(ws->roots, 1u);
    EXPECT_GT(ws->work_s, 0);
    EXPECT_GE(ws->work_s, ws->span_s);
    EXPECT_FALSE(leaf_seconds.empty());
    if (leaf_seconds.empty()) break;
    // Every leaf is inside the work: the instrument may add the strands between leaves, never
    // lose a leaf.
    EXPECT_GE(ws->work_s, sum(leaf_seconds) * 0.999);
    run_work_s = ws->work_s;
    run_span_s = ws->span_s;
    const double ratio = ws->parallelism() / expected(leaf_seconds);
    all.push_back(ratio);
    if (!preempted) clean.push_back(ratio);
  }
  std::vector<double>& p = clean.empty() ? all : clean;
  std::sort(p.begin(), p.end());
  return p;
}

template <class F, class E>
double median_ratio(F body, E expected) {
  const std::vector<double> p = parallelism_ratios(body, expected);
  return p.empty() ? 0 : p[p.size() / 2];
}

// A tree's span is one root-to-leaf path: its longest leaf plus the spawns above it.
double sum_over_max(const std::vector<double>& leaves) {
  return sum(leaves) / max(leaves);
}

// The run's span holds the leaves of its longest path (`on_path` seconds of them) and some of the
// strands between leaves, which are the work less all the leaves: it lies between the two
// whatever those strands cost (under a sanitizer, with another test beside it, they were a third
// of a depth-5 tree's span), so the instrument's arithmetic is checked exactly.
void expect_span_holds(double on_path, const std::vector<double>& leaves) {
  EXPECT_GE(run_span_s, on_path * 0.99);
  EXPECT_LE(run_span_s, (on_path + run_work_s - sum(leaves)) * 1.01);
}

TEST(WorkSpan, BalancedTreeParallelismIsItsLeafCount) {
  for (int depth : {1, 3, 5}) {
    const double r = median_ratio([depth] { tree(depth); },
                                  [depth](const std::vector<double>& l) {
                                    EXPECT_EQ(l.size(), 1u << depth);
                                    expect_span_holds(max(l), l);
                                    return sum_over_max(l);
                                  });
    EXPECT_GT(r, 0.3) << "depth " << depth;
    EXPECT_LT(r, 1.1) << "depth " << depth;
  }
}

TEST(WorkSpan, SerialChainHasParallelismOne) {
  const double r = median_ratio(
      [] {
        for (int i = 0; i < 8; ++i) {
          locus::task_group tg;
          tg.run([] { timed_spin(leaf_iterations); });
          tg.wait();
        }
      },
      [](const std::vector<double>& l) {
        expect_span_holds(sum(l), l);
        return 1.0;
      });
  EXPECT_GT(r, 0.95);
  EXPECT_LT(r, 1.3);
}

TEST(WorkSpan, ContinuationRunsBesideTheChild) {
  // Child 3 units beside a continuation of 1: work 4, span 3.
  const double r = median_ratio(
      [] {
        locus::task_group tg;
        tg.run([] { timed_spin(3 * leaf_iterations); });
        timed_spin(leaf_iterations);
        tg.wait();
      },
      [](const std::vector<double>& l) {
        EXPECT_EQ(l.size(), 2u);
        expect_span_holds(max(l), l);
        return sum_over_max(l);
      });
  EXPECT_GT(r, 0.6);
  EXPECT_LT(r, 1.1);
}

TEST(WorkSpan, WorkAfterTheJoinIsOnTheSpan) {
  // Two children of 1 unit each, then 2 units after the join: work 4, span 3.
  const double r = median_ratio(
      [] {
        locus::task_group tg;
        tg.run([] { timed_spin(leaf_iterations); });
        tg.run([] { timed_spin(leaf_iterations); });
        tg.wait();
        timed_spin(2 * leaf_iterations);
      },
      [](const std::vector<double>& l) {
        EXPECT_EQ(l.size(), 3u);
        expect_span_holds(std::max(l[0], l[1]) + l[2], l);
        return sum(l) / (std::max(l[0], l[1]) + l[2]);
      });
  EXPECT_GT(r, 0.6);
  EXPECT_LT(r, 1.1);
}

TEST(WorkSpan, ParentFirstChildrenCount) {
  // Four queued children of one unit, joined: work 4, span about 1.
  const double r = median_ratio(
      [] {
        locus::task_group tg;
        for (int i = 0; i < 4; ++i)
          tg.run([] { timed_spin(leaf_iterations); }, locus::parent_first);
        tg.wait();
      },
      [](const std::vector<double>& l) {
        EXPECT_EQ(l.size(), 4u);
        expect_span_holds(max(l), l);
        return sum_over_max(l);
      });
  EXPECT_GT(r, 0.3);
  EXPECT_LT(r, 1.1);
}

TEST(WorkSpan, OffByDefault) {
  locus::runtime rt(locus::options{.workers = 1});
  EXPECT_FALSE(rt.workspan().has_value());
}

TEST(WorkSpan, NeedsOneWorker) {
  try {
    locus::runtime rt(locus::options{.workers = 2, .workspan = true});
    FAIL() << "expected config_error";
  } catch (const locus::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("LOCUS_WORKSPAN"), std::string::npos) << e.what();
  }
}

TEST(WorkSpan, EnvironmentTurnsItOn) {
  ::setenv("LOCUS_WORKSPAN", "1", 1);
  locus::runtime rt(locus::options{.workers = 1});
  ::unsetenv("LOCUS_WORKSPAN");
  // Four leaves: parallelism 4 unless the worker was preempted while it measured (a shared
  // machine; once under ctest -j2), so the best of a few runs.
  double best = 0;
  for (int i = 0; i < 10 && best <= 1.5; ++i) {
    rt.reset_stats();
    rt.exec([] { tree(2); });
    ASSERT_TRUE(rt.workspan().has_value());
    best = std::max(best, rt.workspan()->parallelism());
  }
  EXPECT_GT(best, 1.5);
}

TEST(WorkSpan, BenchReportsWorkSpanAndParallelismForLocusRuns) {
  using namespace locus_bench;
  const run_plan p = make_plan(
      parse_command_line({"run", "fib", "--size", "small", "--workers", "2", "--reps", "1",
                          "--impl", "serial,locus", "--json", "--workspan", "--set", "n=20"}),
      registry::get(), 2);
  // fib(20) has far more parallelism than two (about 150: a span of about 4 us in 0.6 ms of
  // work), but a preemption on the measured path inflates the span by milliseconds (fib(16), about
  // 100, failed once in a ctest -j2 run on this shared machine; fib(20) once under ASan, with
  // 1.59): the best of three invocations must show it.
  double best = 0;
  std::string last;
  for (int attempt = 0; attempt < 3 && best <= 2.0; ++attempt) {
    std::ostringstream out, log;
    ASSERT_EQ(execute(p, out, log), 0) << log.str();
    std::istringstream in(out.str());
    std::string serial, locus_line;
    std::getline(in, serial);
    std::getline(in, locus_line);
    EXPECT_EQ(serial.find("\"work_s\""), std::string::npos) << serial;
    for (const char* key : {"\"work_s\":", "\"span_s\":", "\"parallelism\":"}) {
      ASSERT_NE(locus_line.find(key), std::string::npos) << key << " missing in " << locus_line;
    }
    const auto at = locus_line.find("\"parallelism\":") + 14;
    best = std::max(best, std::stod(locus_line.substr(at)));
    last = locus_line;
  }
  EXPECT_GT(best, 2.0) << last;
}

}  // namespace
