// ADWS deterministic task mapping (seed 000, §3.1, Fig. 5-7): with stealing off, every leaf of
// a hinted task tree runs on the worker an independent computation of the plan predicts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "locus/locus.hpp"

namespace {

// A binary task tree: a leaf, or two subtrees whose work hints are their leaf counts.
struct node {
  int leaf_id = -1;
  int leaves = 1;
  std::unique_ptr<node> left, right;
};

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ULL;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dULL;
  return x ^ (x >> 33);
}

// `leaves` leaves; balanced halves, or a random cut when `seed` is non-zero.
std::unique_ptr<node> build(int leaves, std::uint64_t seed, int& next_id) {
  auto n = std::make_unique<node>();
  n->leaves = leaves;
  if (leaves == 1) {
    n->leaf_id = next_id++;
    return n;
  }
  int left = leaves / 2;
  if (seed != 0) left = 1 + static_cast<int>(mix(seed) % static_cast<std::uint64_t>(leaves - 1));
  n->left = build(left, seed == 0 ? 0 : mix(seed + 1), next_id);
  n->right = build(leaves - left, seed == 0 ? 0 : mix(seed + 2), next_id);
  return n;
}

// The plan, computed the way Fig. 7 states it: a child of work w, spawned while the group has
// W work left, gets the first w / W of what is left of the range; a task runs on floor(lo).
void predict(const node& n, double lo, double hi, int workers, std::vector<int>& where) {
  if (n.leaf_id >= 0) {
    where[static_cast<std::size_t>(n.leaf_id)] =
        std::clamp(static_cast<int>(std::floor(lo)), 0, workers - 1);
    return;
  }
  const double total = n.leaves;
  const double mid = lo + (hi - lo) * (n.left->leaves / total);
  predict(*n.left, lo, mid, workers, where);
  predict(*n.right, mid, hi, workers, where);  // w / W = 1: the rest of the range
}

void run(const node& n, std::vector<std::atomic<int>>& ran_on) {
  if (n.leaf_id >= 0) {
    ran_on[static_cast<std::size_t>(n.leaf_id)] = locus::this_worker();
    return;
  }
  locus::task_group tg{locus::work_hint{static_cast<double>(n.leaves)}};
  tg.run([&] { run(*n.left, ran_on); }, locus::work_hint{static_cast<double>(n.left->leaves)});
  tg.run([&] { run(*n.right, ran_on); }, locus::work_hint{static_cast<double>(n.right->leaves)});
  tg.wait();
}

struct plan_case {
  int workers;
  const char* topology;
  int leaves;
  std::uint64_t seed;  // 0: balanced
};

class AdwsPlan : public ::testing::TestWithParam<plan_case> {};

TEST_P(AdwsPlan, EveryLeafRunsOnItsPlannedWorkerWithStealingOff) {
  const plan_case c = GetParam();
  ::setenv("LOCUS_ADWS_STEAL", "0", 1);
  int ids = 0;
  const auto tree = build(c.leaves, c.seed, ids);
  std::vector<int> expected(static_cast<std::size_t>(ids));
  predict(*tree, 0.0, c.workers, c.workers, expected);
  locus::runtime rt{locus::options{.sched = "adws", .workers = c.workers, .topology = c.topology}};
  for (int iteration = 0; iteration < 3; ++iteration) {
    std::vector<std::atomic<int>> ran_on(static_cast<std::size_t>(ids));
    for (auto& r : ran_on) r = -1;
    rt.exec([&] { run(*tree, ran_on); });
    int wrong = 0;
    for (int i = 0; i < ids; ++i) {
      if (ran_on[static_cast<std::size_t>(i)] != expected[static_cast<std::size_t>(i)]) {
        if (wrong++ < 5) {
          ADD_FAILURE() << "leaf " << i << " ran on worker " << ran_on[static_cast<std::size_t>(i)]
                        << ", planned for " << expected[static_cast<std::size_t>(i)];
        }
      }
    }
    EXPECT_EQ(wrong, 0) << "iteration " << iteration;
  }
  // Every worker got leaves (the trees have more leaves than workers).
  std::vector<int> per_worker(static_cast<std::size_t>(c.workers));
  for (int w : expected) ++per_worker[static_cast<std::size_t>(w)];
  EXPECT_EQ(std::count(per_worker.begin(), per_worker.end(), 0), 0);
  for (auto s : rt.stats().total().steals_by_level) EXPECT_EQ(s, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Synthetic, AdwsPlan,
    ::testing::Values(plan_case{4, "pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1", 64, 0},
                      plan_case{4, "pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1", 61, 7},
                      plan_case{16, "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1", 256, 0},
                      plan_case{16, "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1", 200, 11},
                      plan_case{56, "pack:2 l3:1(size=32MB) l2:28(size=1MB) core:1 pu:1", 448, 0},
                      plan_case{56, "pack:2 l3:1(size=32MB) l2:28(size=1MB) core:1 pu:1", 500, 5}),
    [](const auto& info) {
      return std::to_string(info.param.workers) + "workers_" +
             (info.param.seed == 0 ? "balanced" : "unbalanced");
    });

}  // namespace
