// LOCUS_WORKSPAN: work, span and parallelism of hand-built task trees whose leaves run a counted
// loop. Only ratios are checked, never absolute times: the machine may be shared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

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

constexpr std::uint64_t leaf_iterations = 400'000;

void tree(int depth) {
  if (depth == 0) {
    spin(leaf_iterations);
    return;
  }
  locus::task_group tg;
  tg.run([depth] { tree(depth - 1); });
  tree(depth - 1);
  tg.wait();
}

// Median parallelism of a few measurements of `body`, to shrug off one preempted leaf.
template <class F>
double parallelism_of(F body, locus::workspan_result* last = nullptr) {
  locus::runtime rt(locus::options{.workers = 1, .workspan = true});
  std::vector<double> p;
  for (int i = 0; i < 5; ++i) {
    rt.reset_stats();
    rt.exec(body);
    const auto ws = rt.workspan();
    EXPECT_TRUE(ws.has_value());
    if (!ws) return 0;
    EXPECT_EQ(ws->roots, 1u);
    EXPECT_GT(ws->work_s, 0);
    EXPECT_GE(ws->work_s, ws->span_s);
    if (last != nullptr) *last = *ws;
    p.push_back(ws->parallelism());
  }
  std::sort(p.begin(), p.end());
  return p[p.size() / 2];
}

TEST(WorkSpan, BalancedTreeParallelismIsItsLeafCount) {
  for (int depth : {1, 3, 5}) {
    const double leaves = static_cast<double>(1 << depth);
    const double p = parallelism_of([depth] { tree(depth); });
    EXPECT_GT(p, 0.6 * leaves) << "depth " << depth;
    EXPECT_LT(p, 1.1 * leaves) << "depth " << depth;
  }
}

TEST(WorkSpan, SerialChainHasParallelismOne) {
  const double p = parallelism_of([] {
    for (int i = 0; i < 8; ++i) {
      locus::task_group tg;
      tg.run([] { spin(leaf_iterations); });
      tg.wait();
    }
  });
  EXPECT_GT(p, 0.95);
  EXPECT_LT(p, 1.05);
}

TEST(WorkSpan, ContinuationRunsBesideTheChild) {
  // Child 3 units beside a continuation of 1: work 4, span 3.
  const double p = parallelism_of([] {
    locus::task_group tg;
    tg.run([] { spin(3 * leaf_iterations); });
    spin(leaf_iterations);
    tg.wait();
  });
  EXPECT_GT(p, 4.0 / 3.0 * 0.85);
  EXPECT_LT(p, 4.0 / 3.0 * 1.1);
}

TEST(WorkSpan, WorkAfterTheJoinIsOnTheSpan) {
  // Two children of 1 unit each, then 2 units after the join: work 4, span 3.
  const double p = parallelism_of([] {
    locus::task_group tg;
    tg.run([] { spin(leaf_iterations); });
    tg.run([] { spin(leaf_iterations); });
    tg.wait();
    spin(2 * leaf_iterations);
  });
  EXPECT_GT(p, 4.0 / 3.0 * 0.85);
  EXPECT_LT(p, 4.0 / 3.0 * 1.1);
}

TEST(WorkSpan, ParentFirstChildrenCount) {
  // Four queued children of one unit, joined: work 4, span about 1.
  const double p = parallelism_of([] {
    locus::task_group tg;
    for (int i = 0; i < 4; ++i) tg.run([] { spin(leaf_iterations); }, locus::parent_first);
    tg.wait();
  });
  EXPECT_GT(p, 4 * 0.6);
  EXPECT_LT(p, 4 * 1.1);
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
  rt.exec([] { tree(2); });
  ASSERT_TRUE(rt.workspan().has_value());
  EXPECT_GT(rt.workspan()->parallelism(), 1.5);
}

}  // namespace
