// The order of an interleaved invocation's configurations (bench/harness/run_order.hpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <vector>

#include "harness/run_order.hpp"

namespace {

using locus_bench::configuration_at;

std::vector<std::size_t> round_of(std::size_t round, std::size_t configs) {
  std::vector<std::size_t> order;
  for (std::size_t slot = 0; slot < configs; ++slot) {
    order.push_back(configuration_at(round, slot, configs));
  }
  return order;
}

TEST(BenchRunOrder, EveryRoundRunsEveryConfigurationOnce) {
  for (std::size_t configs = 1; configs <= 9; ++configs) {
    for (std::size_t round = 0; round < 3 * configs; ++round) {
      const std::vector<std::size_t> order = round_of(round, configs);
      const std::set<std::size_t> distinct(order.begin(), order.end());
      EXPECT_EQ(distinct.size(), configs) << configs << " configurations, round " << round;
      EXPECT_LT(*distinct.rbegin(), configs);
    }
  }
}

TEST(BenchRunOrder, EveryConfigurationFollowsEveryOtherEquallyOften) {
  for (std::size_t configs = 2; configs <= 9; ++configs) {
    const std::size_t period = configs % 2 == 0 ? configs : 2 * configs;
    std::vector<std::vector<int>> follows(configs, std::vector<int>(configs, 0));
    for (std::size_t round = 0; round < period; ++round) {
      const std::vector<std::size_t> order = round_of(round, configs);
      for (std::size_t slot = 1; slot < configs; ++slot) ++follows[order[slot - 1]][order[slot]];
    }
    const int expected = configs % 2 == 0 ? 1 : 2;
    for (std::size_t before = 0; before < configs; ++before) {
      for (std::size_t after = 0; after < configs; ++after) {
        if (before == after) continue;
        EXPECT_EQ(follows[before][after], expected)
            << configs << " configurations: " << after << " right after " << before;
      }
    }
  }
}

TEST(BenchRunOrder, TheFourConfigurationsOfTheQuietSetEachFollowOpenMpOnce) {
  // locus ws, locus adws, oneTBB, OpenMP (3): in four rounds each of the others runs right after
  // OpenMP once; the rotation the harness used before gave ws three of the four.
  std::vector<int> after_openmp(4, 0);
  for (std::size_t round = 0; round < 4; ++round) {
    const std::vector<std::size_t> order = round_of(round, 4);
    for (std::size_t slot = 1; slot < 4; ++slot) {
      if (order[slot - 1] == 3) ++after_openmp[order[slot]];
    }
  }
  EXPECT_EQ(after_openmp, (std::vector<int>{1, 1, 1, 0}));
}

}  // namespace
