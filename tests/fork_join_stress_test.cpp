// Randomized fork-join stress: random trees mixing child-first and parent-first spawns, joins
// in the middle of a task, nested groups, yields and exceptions, on real and oversubscribed
// synthetic workers. The tree is a pure function of the seed, so a serial walk gives the exact
// answer (the sum of the node ids) to compare with. With exceptions, a throw cancels its group's
// children that have not started (and their groups'), which depends on the interleaving: then
// every child either starts or is counted cancelled, and every exception thrown is rethrown or
// counted as suppressed exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "locus/locus.hpp"
#include "test_policies.hpp"

namespace {

constexpr const char* synthetic16 = "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1";

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

struct shape {
  int children;    // 0 = leaf
  int join_after;  // wait once after this many children (then spawn the rest)
  bool throws;     // a leaf that throws
  bool yields;     // a leaf that yields the OS thread (varies the interleaving)
  std::uint32_t parent_first_mask;
};

shape shape_of(std::uint64_t id, int depth, std::uint64_t seed, bool with_exceptions) {
  const std::uint64_t h = mix(id * 0x9E3779B97F4A7C15ULL + seed);
  shape s{};
  // 0..4 children; the root always has some, so that exec() itself never throws.
  s.children = depth >= 10 ? 0 : depth == 0 ? 4 : static_cast<int>(h % 5);
  s.join_after =
      s.children == 0 ? 0 : static_cast<int>((h >> 8) % static_cast<unsigned>(s.children + 1));
  s.throws = with_exceptions && s.children == 0 && (h >> 16) % 23 == 0;
  s.yields = (h >> 24) % 7 == 0;
  s.parent_first_mask = static_cast<std::uint32_t>(h >> 32);
  return s;
}

struct totals {
  std::uint64_t sum = 0;
  std::uint64_t throwing_leaves = 0;
  std::uint64_t spawns = 0;
};

// The serial answer: every node adds its id unless an exception is thrown in its subtree
// before it reaches the point where it adds (a leaf throws instead of adding).
void walk_serial(std::uint64_t id, int depth, std::uint64_t seed, bool ex, totals& t) {
  const shape s = shape_of(id, depth, seed, ex);
  if (s.children == 0) {
    if (s.throws) {
      ++t.throwing_leaves;
    } else {
      t.sum += id;
    }
    return;
  }
  t.sum += id;
  t.spawns += static_cast<std::uint64_t>(s.children);
  for (int c = 0; c < s.children; ++c)
    walk_serial(id * 5 + 1 + static_cast<unsigned>(c), depth + 1, seed, ex, t);
}

struct result {
  std::atomic<std::uint64_t> sum{0};
  std::atomic<std::uint64_t> caught{0};  // exceptions rethrown by wait() and caught
  std::atomic<std::uint64_t> suppressed{0};
  std::atomic<std::uint64_t> thrown{0};
  std::atomic<std::uint64_t> attempts{0};  // run() calls
  std::atomic<std::uint64_t> started{0};   // children whose body began
};

// Groups give size hints (a quarter of their parent's bytes, from 64 MB at the root) in the
// cases that test a scheduler that acts on them (cats; adws and ml-adws, whose thieves wait
// before their first steal in a hinted group): hints never change what a program computes.
bool size_hints = false;

locus::task_group make_group(int depth) {
  if (!size_hints) return locus::task_group{};
  return locus::task_group{locus::size_hint{(std::size_t{64} << 20) >> std::min(2 * depth, 60)}};
}

void walk_parallel(std::uint64_t id, int depth, std::uint64_t seed, bool ex, result& r) {
  const shape s = shape_of(id, depth, seed, ex);
  if (s.children == 0) {
    if (s.yields) std::this_thread::yield();
    if (s.throws) {
      r.thrown.fetch_add(1, std::memory_order_relaxed);
      throw std::runtime_error("leaf");
    }
    r.sum.fetch_add(id, std::memory_order_relaxed);
    return;
  }
  r.sum.fetch_add(id, std::memory_order_relaxed);
  locus::task_group tg = make_group(depth);
  auto join = [&] {
    try {
      tg.wait();
    } catch (const std::runtime_error&) {
      r.caught.fetch_add(1, std::memory_order_relaxed);
    }
  };
  for (int c = 0; c < s.children; ++c) {
    if (c == s.join_after && c != 0) join();
    const std::uint64_t child = id * 5 + 1 + static_cast<unsigned>(c);
    auto body = [child, depth, seed, ex, &r] {
      r.started.fetch_add(1, std::memory_order_relaxed);
      walk_parallel(child, depth + 1, seed, ex, r);
    };
    r.attempts.fetch_add(1, std::memory_order_relaxed);
    if ((s.parent_first_mask >> c) & 1) {
      tg.run(body, locus::parent_first);
    } else {
      tg.run(body);
    }
  }
  join();
  r.suppressed.fetch_add(tg.suppressed_exceptions(), std::memory_order_relaxed);
}

struct stress_case {
  int workers;
  bool synthetic;
  bool exceptions;
  const char* sched = "ws";
  bool size_hints = false;
};

class ForkJoinStress : public ::testing::TestWithParam<stress_case> {};

TEST_P(ForkJoinStress, RandomTreesGiveTheSerialAnswer) {
  const stress_case c = GetParam();
  locus::options o{.sched = c.sched, .workers = c.workers};
  if (c.synthetic) o.topology = synthetic16;
  locus::runtime rt{o};
  size_hints = c.size_hints;
  locus_test::mixed_policy::begun = 0;
  locus_test::mixed_policy::ended = 0;
  std::uint64_t expected_spawns = 0;
  std::uint64_t roots = 0;
  const auto run_tree = [&](std::uint64_t seed) {
    totals expected;
    walk_serial(0, 0, seed, c.exceptions, expected);
    expected_spawns += expected.spawns;
    result got;
    const auto canceled_before = rt.stats().canceled_tasks;
    rt.exec([&] { walk_parallel(0, 0, seed, c.exceptions, got); });
    const auto canceled = rt.stats().canceled_tasks - canceled_before;
    ++roots;
    if (c.exceptions) {
      // Cancelled subtrees do not spawn their own children.
      EXPECT_LE(got.attempts.load(), expected.spawns) << "seed " << seed;
    } else {
      EXPECT_EQ(got.attempts.load(), expected.spawns) << "seed " << seed;
      EXPECT_EQ(got.sum.load(), expected.sum) << "seed " << seed;
      EXPECT_EQ(canceled, 0u) << "seed " << seed;
    }
    EXPECT_EQ(got.started.load() + canceled, got.attempts.load()) << "seed " << seed;
    EXPECT_LE(got.thrown.load(), expected.throwing_leaves) << "seed " << seed;
    // Every exception thrown is either rethrown by exactly one wait() or counted as suppressed
    // by its group: none is lost, none is counted twice.
    EXPECT_EQ(got.caught.load() + got.suppressed.load(), got.thrown.load()) << "seed " << seed;
  };
  for (std::uint64_t seed = 1; seed <= 24; ++seed) run_tree(seed);
  const auto moved = [&rt] {
    const auto total = rt.stats().total();
    std::uint64_t steals = 0;
    for (auto n : total.steals_by_level) steals += n;
    // ADWS sends most work to its planned worker instead: that counts as moved work too.
    return steals + total.pushes;
  };
  if (c.workers > 1) {
    // The trees above need not move any work when the host gives one worker all the CPU time
    // (it happened once beside a sanitizer build), or when a help-first scheduler's owner runs
    // its queue before a thief asks: then this one does, with a child-first scheduler at once
    // (the child waits until its parent's continuation runs, which takes another worker), and
    // with the others the trees run again until something moved (at most 30 s).
    rt.exec([&] {
      std::atomic<bool> parent_ran{false};
      locus::task_group tg;
      tg.run([&] {
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (!parent_ran.load() && std::chrono::steady_clock::now() < give_up) {
          std::this_thread::yield();
        }
      });
      parent_ran = true;
      tg.wait();
    });
    ++expected_spawns;
    ++roots;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (std::uint64_t seed = 1; moved() == 0 && std::chrono::steady_clock::now() < give_up;
         seed = seed % 24 + 1) {
      run_tree(seed);
    }
  }
  const auto total = rt.stats().total();
  // Cancelled children are dropped at run() (never spawned) or skipped when taken (spawned).
  if (c.exceptions) {
    EXPECT_LE(total.spawns, expected_spawns);
  } else {
    EXPECT_EQ(total.spawns, expected_spawns);
  }
  if (std::string(c.sched) == "test-mixed") {
    // Every spawned task, roots included, begins and ends once through the policy's hooks,
    // whether it ran child-first, queued, routed to another worker or inline in a join.
    EXPECT_EQ(locus_test::mixed_policy::begun.load(), total.spawns + roots);
    EXPECT_EQ(locus_test::mixed_policy::ended.load(), total.spawns + roots);
  }
  if (c.workers > 1) {
    EXPECT_GT(moved(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Core, ForkJoinStress,
    ::testing::Values(
        stress_case{1, false, false}, stress_case{2, false, false}, stress_case{2, false, true},
        stress_case{16, true, false}, stress_case{16, true, true},
        stress_case{2, false, true, "adws"}, stress_case{16, true, true, "adws"},
        stress_case{2, false, true, "adws", true}, stress_case{16, true, true, "adws", true},
        stress_case{2, false, true, "ml-adws"}, stress_case{16, true, true, "ml-adws"},
        stress_case{2, false, true, "ml-adws", true}, stress_case{16, true, true, "ml-adws", true},
        stress_case{2, false, true, "ml-ws"}, stress_case{16, true, true, "ml-ws"},
        stress_case{2, false, true, "numa-ws"}, stress_case{16, true, true, "numa-ws"},
        stress_case{2, false, true, "hws"}, stress_case{16, true, true, "hws"},
        stress_case{2, false, true, "test-mixed"}, stress_case{16, true, true, "test-mixed"},
        stress_case{2, false, true, "cats"}, stress_case{16, true, true, "cats"},
        stress_case{2, false, true, "cats", true}, stress_case{16, true, true, "cats", true},
        stress_case{2, false, true, "tao"}, stress_case{16, true, true, "tao"}),
    [](const auto& info) {
      std::string name = std::to_string(info.param.workers) + "workers" +
                         (info.param.exceptions ? "_exceptions" : "");
      if (std::string(info.param.sched) != "ws") {
        name += "_" + std::string(info.param.sched);
        std::replace(name.begin(), name.end(), '-', '_');
      }
      if (info.param.size_hints) name += "_hinted";
      return name;
    });

}  // namespace
