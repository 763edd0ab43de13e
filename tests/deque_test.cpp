// Tests of src/queue/chase_lev_deque.hpp: the owner pushes and pops at the bottom (LIFO), thieves
// steal from the top (FIFO), the buffer grows by doubling, and under concurrency every pushed
// element is taken exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "queue/chase_lev_deque.hpp"

using locus::queue::chase_lev_deque;

namespace {

using value = std::uintptr_t;

TEST(DequeTest, EmptyDequeReturnsNothing) {
  chase_lev_deque<value> d;
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.size(), 0);
  EXPECT_FALSE(d.pop().has_value());
  bool lost = false;
  EXPECT_FALSE(d.steal(&lost).has_value());
  EXPECT_FALSE(lost) << "an empty deque is not a lost race";
  EXPECT_FALSE(d.steal().has_value());
  // Popping an empty deque must not leave it in a state where a later push is lost.
  d.push(7);
  EXPECT_EQ(d.size(), 1);
  EXPECT_EQ(d.pop(), std::optional<value>(7));
  EXPECT_TRUE(d.empty());
}

TEST(DequeTest, CapacityIsRoundedUpToAPowerOfTwo) {
  EXPECT_EQ(chase_lev_deque<value>(0).capacity(), 2u);
  EXPECT_EQ(chase_lev_deque<value>(1).capacity(), 2u);
  EXPECT_EQ(chase_lev_deque<value>(2).capacity(), 2u);
  EXPECT_EQ(chase_lev_deque<value>(5).capacity(), 8u);
  EXPECT_EQ(chase_lev_deque<value>(256).capacity(), 256u);
  EXPECT_EQ(chase_lev_deque<value>().capacity(), 256u);
}

TEST(DequeTest, PopReturnsNewestFirst) {
  chase_lev_deque<value> d(16);
  for (value v = 1; v <= 10; ++v) d.push(v);
  EXPECT_EQ(d.size(), 10);
  for (value v = 10; v >= 1; --v) {
    const auto got = d.pop();
    ASSERT_TRUE(got.has_value()) << "expected " << v;
    EXPECT_EQ(*got, v);
  }
  EXPECT_FALSE(d.pop().has_value());
  EXPECT_TRUE(d.empty());
}

TEST(DequeTest, StealReturnsOldestFirst) {
  chase_lev_deque<value> d(16);
  for (value v = 1; v <= 10; ++v) d.push(v);
  for (value v = 1; v <= 10; ++v) {
    bool lost = false;
    const auto got = d.steal(&lost);
    ASSERT_TRUE(got.has_value()) << "expected " << v;
    EXPECT_EQ(*got, v);
    EXPECT_FALSE(lost);
  }
  EXPECT_FALSE(d.steal().has_value());
  EXPECT_FALSE(d.pop().has_value());
}

TEST(DequeTest, PopAndStealMeetInTheMiddle) {
  chase_lev_deque<value> d(8);
  for (value v = 1; v <= 6; ++v) d.push(v);
  EXPECT_EQ(d.steal(), std::optional<value>(1));
  EXPECT_EQ(d.pop(), std::optional<value>(6));
  EXPECT_EQ(d.steal(), std::optional<value>(2));
  EXPECT_EQ(d.pop(), std::optional<value>(5));
  d.push(7);
  EXPECT_EQ(d.pop(), std::optional<value>(7));
  EXPECT_EQ(d.steal(), std::optional<value>(3));
  // One left: the owner's pop takes the last element through the CAS path.
  EXPECT_EQ(d.pop(), std::optional<value>(4));
  EXPECT_FALSE(d.pop().has_value());
  EXPECT_FALSE(d.steal().has_value());
  // The last element can also go to a thief.
  d.push(8);
  EXPECT_EQ(d.steal(), std::optional<value>(8));
  EXPECT_FALSE(d.pop().has_value());
  EXPECT_TRUE(d.empty());
}

TEST(DequeTest, HoldsPointers) {
  int cells[4] = {0, 1, 2, 3};
  chase_lev_deque<int*> d(2);
  for (int& c : cells) d.push(&c);
  EXPECT_EQ(d.steal(), std::optional<int*>(&cells[0]));
  EXPECT_EQ(d.pop(), std::optional<int*>(&cells[3]));
  EXPECT_EQ(d.pop(), std::optional<int*>(&cells[2]));
  EXPECT_EQ(d.steal(), std::optional<int*>(&cells[1]));
  EXPECT_TRUE(d.empty());
}

// A marked item reads as marked at the top before anyone takes it, and comes out of pop and steal
// as it was pushed, through a growth of the buffer too.
TEST(DequeTest, MarkedItemsAreSeenAtTheTopAndComeOutUnchanged) {
  std::vector<long> cells(6);
  chase_lev_deque<long*> d(2);
  EXPECT_FALSE(d.oldest_marked());
  d.push_marked(&cells[0]);
  d.push(&cells[1]);
  d.push_marked(&cells[2]);
  d.push(&cells[3]);  // grows the buffer
  EXPECT_TRUE(d.oldest_marked());
  EXPECT_EQ(d.steal(), &cells[0]);
  EXPECT_FALSE(d.oldest_marked());
  EXPECT_EQ(d.pop(), &cells[3]);
  EXPECT_EQ(d.pop(), &cells[2]);
  EXPECT_EQ(d.steal(), &cells[1]);
  EXPECT_FALSE(d.oldest_marked());
  d.push_marked(&cells[4]);
  EXPECT_TRUE(d.oldest_marked());
  EXPECT_EQ(d.pop(), &cells[4]);
  EXPECT_FALSE(d.oldest_marked()) << "an empty deque has no marked item";
}

TEST(DequeTest, GrowthKeepsEveryElementInOrder) {
  constexpr value n = 1000;
  {
    chase_lev_deque<value> d(2);
    for (value v = 0; v < n; ++v) d.push(v);
    EXPECT_EQ(d.size(), static_cast<std::int64_t>(n));
    EXPECT_GE(d.capacity(), n);
    EXPECT_EQ(d.capacity(), 1024u) << "growth doubles: 2 -> 4 -> ... -> 1024";
    for (value v = 0; v < n; ++v) {
      const auto got = d.steal();
      ASSERT_TRUE(got.has_value()) << "lost element " << v;
      ASSERT_EQ(*got, v);
    }
    EXPECT_TRUE(d.empty());
  }
  {
    chase_lev_deque<value> d(2);
    for (value v = 0; v < n; ++v) d.push(v);
    for (value v = n; v-- > 0;) {
      const auto got = d.pop();
      ASSERT_TRUE(got.has_value()) << "lost element " << v;
      ASSERT_EQ(*got, v);
    }
    EXPECT_TRUE(d.empty());
  }
}

// Grow while the live elements wrap around the end of the ring: the copy must follow the logical
// indices, not the physical slots.
TEST(DequeTest, GrowthWithWrappedIndicesKeepsOrder) {
  chase_lev_deque<value> d(4);
  value next = 0;
  value expected_front = 0;
  for (int round = 0; round < 3; ++round) {
    // Advance top so that the live range wraps.
    for (int i = 0; i < 3; ++i) d.push(next++);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(d.steal(), std::optional<value>(expected_front++));
  }
  ASSERT_TRUE(d.empty());
  ASSERT_EQ(d.capacity(), 4u);
  for (int i = 0; i < 11; ++i) d.push(next++);  // 4 -> 8 -> 16 with a wrapped live range
  EXPECT_EQ(d.capacity(), 16u);
  EXPECT_EQ(d.pop(), std::optional<value>(next - 1));
  for (value v = expected_front; v < next - 1; ++v) ASSERT_EQ(d.steal(), std::optional<value>(v));
  EXPECT_TRUE(d.empty());
}

// ---- concurrent stress ----------------------------------------------------------------------

std::uint64_t test_seed() {
  if (const char* s = std::getenv("LOCUS_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  return std::random_device{}();
}

struct stress_config {
  std::size_t initial_capacity;
  int thieves;
  int rounds;           // a fresh deque per round
  int ops_per_round;    // owner operations (push or pop) per round
  unsigned push_per_8;  // out of 8 owner operations, how many are pushes
};

#ifdef LOCUS_TSAN
constexpr int kOpsScale = 10;  // ThreadSanitizer is ~10-50x slower
#else
constexpr int kOpsScale = 1;
#endif

// One owner thread does a random mix of push and pop while `thieves` threads steal. Values are
// unique integers 1..N; each is counted once wherever it comes out. Checks: every pushed value
// is obtained exactly once, a value the owner pops is always its newest not-yet-taken push, and
// each thief sees values in increasing (FIFO) order.
void stress(const stress_config& cfg) {
  const std::uint64_t seed = test_seed();
  std::printf("[   seed   ] LOCUS_TEST_SEED=%llu (capacity %zu, %d thieves)\n",
              static_cast<unsigned long long>(seed), cfg.initial_capacity, cfg.thieves);
  std::fflush(stdout);
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  SCOPED_TRACE("LOCUS_TEST_SEED=" + std::to_string(seed));

  const std::size_t max_values =
      static_cast<std::size_t>(cfg.rounds) * static_cast<std::size_t>(cfg.ops_per_round) + 1;
  const auto taken = std::make_unique<std::atomic<std::uint32_t>[]>(max_values);
  for (std::size_t i = 0; i < max_values; ++i) taken[i].store(0, std::memory_order_relaxed);

  std::mt19937_64 rng(seed);
  value next = 1;
  std::atomic<std::uint64_t> order_violations{0};
  std::atomic<std::uint64_t> lost_flag_with_value{0};
  std::atomic<std::uint64_t> out_of_range{0};
  std::uint64_t pop_not_newest = 0;
  std::uint64_t steals_total = 0;

  auto record = [&](value v) {
    if (v == 0 || v >= max_values) {
      out_of_range.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    taken[v].fetch_add(1, std::memory_order_relaxed);
  };

  for (int round = 0; round < cfg.rounds; ++round) {
    chase_lev_deque<value> d(cfg.initial_capacity);
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> stolen{0};
    std::atomic<int> started{0};
    std::vector<std::thread> thieves;
    for (int t = 0; t < cfg.thieves; ++t) {
      thieves.emplace_back([&] {
        value last = 0;
        std::uint64_t mine = 0;
        started.fetch_add(1, std::memory_order_relaxed);
        for (;;) {
          const bool finished = done.load(std::memory_order_acquire);
          bool lost = false;
          const auto got = d.steal(&lost);
          if (got) {
            if (lost) lost_flag_with_value.fetch_add(1, std::memory_order_relaxed);
            if (*got <= last) order_violations.fetch_add(1, std::memory_order_relaxed);
            last = *got;
            record(*got);
            ++mine;
          } else if (finished && !lost) {
            break;  // the owner has drained the deque and stopped pushing
          }
        }
        stolen.fetch_add(mine, std::memory_order_relaxed);
      });
    }

    // Owner: values it pushed and that were neither popped by it nor known to be gone. Thieves
    // take from the front only, so a successful pop must return the back.
    while (started.load(std::memory_order_relaxed) < cfg.thieves) std::this_thread::yield();
    std::vector<value> shadow;
    std::uniform_int_distribution<unsigned> op(0, 7);
    std::uniform_int_distribution<int> burst(1, 16);
    for (int i = 0; i < cfg.ops_per_round;) {
      const bool do_push = op(rng) < cfg.push_per_8;
      const int n = std::min(burst(rng), cfg.ops_per_round - i);
      for (int k = 0; k < n; ++k, ++i) {
        if (do_push) {
          shadow.push_back(next);
          d.push(next++);
        } else if (const auto got = d.pop()) {
          if (shadow.empty() || *got != shadow.back()) {
            ++pop_not_newest;
          } else {
            shadow.pop_back();
          }
          record(*got);
        } else {
          shadow.clear();  // empty: everything still shadowed was stolen
        }
      }
    }
    // Drain the rest concurrently with the thieves, then let them stop.
    while (const auto got = d.pop()) {
      if (shadow.empty() || *got != shadow.back()) {
        ++pop_not_newest;
      } else {
        shadow.pop_back();
      }
      record(*got);
    }
    done.store(true, std::memory_order_release);
    for (auto& t : thieves) t.join();
    EXPECT_TRUE(d.empty()) << "round " << round;
    EXPECT_FALSE(d.pop().has_value()) << "round " << round;
    EXPECT_FALSE(d.steal().has_value()) << "round " << round;
    steals_total += stolen.load();
  }

  EXPECT_EQ(out_of_range.load(), 0u) << "a value that was never pushed came out of the deque";
  EXPECT_EQ(order_violations.load(), 0u) << "a thief saw values out of FIFO order";
  EXPECT_EQ(lost_flag_with_value.load(), 0u) << "steal reported a lost race and a value";
  EXPECT_EQ(pop_not_newest, 0u) << "pop returned something other than the newest element";
  std::uint64_t lost = 0, duplicated = 0;
  value first_bad = 0;
  for (value v = 1; v < next; ++v) {
    const std::uint32_t c = taken[v].load(std::memory_order_relaxed);
    if (c != 1 && first_bad == 0) first_bad = v;
    if (c == 0) ++lost;
    if (c > 1) ++duplicated;
  }
  for (value v = next; v < max_values; ++v) {
    EXPECT_EQ(taken[v].load(std::memory_order_relaxed), 0u) << "value " << v << " never pushed";
  }
  EXPECT_EQ(lost, 0u) << "values lost, first bad value " << first_bad;
  EXPECT_EQ(duplicated, 0u) << "values taken twice, first bad value " << first_bad;
  std::printf("[   info   ] %llu values pushed, %llu stolen\n",
              static_cast<unsigned long long>(next - 1),
              static_cast<unsigned long long>(steals_total));
}

TEST(DequeStressTest, OneThief) {
  stress({.initial_capacity = 256,
          .thieves = 1,
          .rounds = 4,
          .ops_per_round = 50'000 / kOpsScale,
          .push_per_8 = 5});
}

TEST(DequeStressTest, TwoThieves) {
  stress({.initial_capacity = 256,
          .thieves = 2,
          .rounds = 4,
          .ops_per_round = 50'000 / kOpsScale,
          .push_per_8 = 5});
}

TEST(DequeStressTest, ThreeThieves) {
  stress({.initial_capacity = 256,
          .thieves = 3,
          .rounds = 4,
          .ops_per_round = 50'000 / kOpsScale,
          .push_per_8 = 5});
}

// Tiny initial capacity and many fresh deques: the buffer grows (and old buffers are retired)
// while thieves are reading from it.
TEST(DequeStressTest, TinyCapacityGrowthRacesWithSteals) {
  for (int thieves = 1; thieves <= 3; ++thieves) {
    stress({.initial_capacity = 2,
            .thieves = thieves,
            .rounds = 200 / kOpsScale,
            .ops_per_round = 1'000,
            .push_per_8 = 6});
  }
}

// Mostly pops: the owner and the thieves keep fighting over the last element.
TEST(DequeStressTest, ContendedLastElement) {
  stress({.initial_capacity = 2,
          .thieves = 3,
          .rounds = 4,
          .ops_per_round = 50'000 / kOpsScale,
          .push_per_8 = 4});
}

}  // namespace
