// The split private/public queue of hws (queue/split_queue.hpp, seed 004 §3.1): the owner's end is
// LIFO, thieves see only the public region and take its oldest items, one or a chunk; the split
// moves at the private limit, at a thief's request and when the owner runs dry; past its capacity
// the ring grows rather than lose an item; and under a racing owner and thieves every item comes
// out exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "queue/split_queue.hpp"

namespace {

using locus::queue::split_queue;
using locus::queue::steal_status;

void* item(std::uint32_t id) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id) + 1);
}
std::uint32_t id_of(void* p) {
  return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) - 1);
}

TEST(SplitQueue, OwnerEndIsLifoAndThievesSeeOnlyThePublicRegion) {
  split_queue<void*> q(40, 20);
  for (std::uint32_t i = 0; i < 10; ++i) q.push(item(i));
  EXPECT_EQ(q.size(), 10u);
  EXPECT_EQ(q.private_size(), 10u);
  EXPECT_EQ(q.stealable(), 0u);
  void* out[4];
  steal_status why = steal_status::taken;
  EXPECT_EQ(q.steal(out, 1, &why), 0u);
  EXPECT_EQ(why, steal_status::empty);
  for (std::uint32_t i = 10; i-- > 0;) EXPECT_EQ(id_of(q.pop()), i);
  EXPECT_EQ(q.pop(), nullptr);
  EXPECT_EQ(q.size(), 0u);
}

TEST(SplitQueue, PushPastThePrivateLimitPublishesTheOlderHalf) {
  split_queue<void*> q(40, 20);
  for (std::uint32_t i = 0; i < 20; ++i) q.push(item(i));
  EXPECT_EQ(q.stealable(), 0u);
  q.push(item(20));  // 21 private: the oldest 11 become public
  EXPECT_EQ(q.stealable(), 11u);
  EXPECT_EQ(q.private_size(), 10u);
  void* out[16];
  steal_status why = steal_status::empty;
  ASSERT_EQ(q.steal(out, 6, &why), 6u);  // a chunk: the oldest, oldest first
  EXPECT_EQ(why, steal_status::taken);
  for (std::uint32_t i = 0; i < 6; ++i) EXPECT_EQ(id_of(out[i]), i);
  ASSERT_EQ(q.steal(out, 1, &why), 1u);
  EXPECT_EQ(id_of(out[0]), 6u);
  ASSERT_EQ(q.steal(out, 16, &why), 4u);  // no more than the public region holds
  EXPECT_EQ(id_of(out[3]), 10u);
  EXPECT_EQ(q.steal(out, 1, &why), 0u);
  EXPECT_EQ(why, steal_status::empty);
  EXPECT_EQ(q.size(), 10u);
}

TEST(SplitQueue, AThiefFindingNothingPublicMakesTheOwnerShareAtItsNextPushOrPop) {
  split_queue<void*> q(40, 20);
  for (std::uint32_t i = 0; i < 8; ++i) q.push(item(i));
  void* out[8];
  steal_status why = steal_status::taken;
  EXPECT_EQ(q.steal(out, 1, &why), 0u);  // records the request
  EXPECT_EQ(q.stealable(), 0u);          // nothing moves before the owner acts
  EXPECT_EQ(id_of(q.pop()), 7u);         // the owner honours it: half of the 7 left
  EXPECT_EQ(q.stealable(), 4u);
  ASSERT_EQ(q.steal(out, 1, &why), 1u);
  EXPECT_EQ(id_of(out[0]), 0u);
  // Answered once: the next pops do not publish more.
  EXPECT_EQ(id_of(q.pop()), 6u);
  EXPECT_EQ(q.stealable(), 3u);
  // The same through a push.
  split_queue<void*> p(40, 20);
  p.push(item(0));
  EXPECT_EQ(p.steal(out, 1, &why), 0u);
  p.push(item(1));
  EXPECT_EQ(p.stealable(), 1u);
  ASSERT_EQ(p.steal(out, 1, &why), 1u);
  EXPECT_EQ(id_of(out[0]), 0u);
}

TEST(SplitQueue, AnOwnerWithNoPrivateItemsTakesBackTheNewerHalfOfThePublicRegion) {
  split_queue<void*> q(40, 20);
  for (std::uint32_t i = 0; i < 21; ++i) q.push(item(i));  // 0..10 public, 11..20 private
  for (std::uint32_t i = 21; i-- > 11;) EXPECT_EQ(id_of(q.pop()), i);
  EXPECT_EQ(q.stealable(), 11u);
  EXPECT_EQ(id_of(q.pop()), 10u);  // 5..10 came back, newest first
  EXPECT_EQ(q.stealable(), 5u);
  EXPECT_EQ(q.private_size(), 5u);
  void* out[8];
  steal_status why = steal_status::empty;
  ASSERT_EQ(q.steal(out, 8, &why), 5u);
  EXPECT_EQ(id_of(out[0]), 0u);
  EXPECT_EQ(id_of(out[4]), 4u);
  for (std::uint32_t i = 10; i-- > 5;) EXPECT_EQ(id_of(q.pop()), i);
  EXPECT_EQ(q.pop(), nullptr);
}

TEST(SplitQueue, FullAtItsCapacityYetGrowsRatherThanLoseAPush) {
  split_queue<void*> q(4, 2);
  for (std::uint32_t i = 0; i < 3; ++i) q.push(item(i));
  EXPECT_FALSE(q.full());
  q.push(item(3));
  EXPECT_TRUE(q.full());
  for (std::uint32_t i = 4; i < 1000; ++i) q.push(item(i));
  EXPECT_EQ(q.size(), 1000u);
  // Thieves and owner between them get every item back, in order from each end.
  void* out[1];
  steal_status why = steal_status::empty;
  std::uint32_t oldest = 0;
  while (q.steal(out, 1, &why) == 1) EXPECT_EQ(id_of(out[0]), oldest++);
  EXPECT_GT(oldest, 0u);
  for (std::uint32_t i = 1000; i-- > oldest;) ASSERT_EQ(id_of(q.pop()), i);
  EXPECT_EQ(q.pop(), nullptr);
  EXPECT_FALSE(q.full());
}

// full() reads the thieves' word only near the bound, yet always answers as the exact size
// would: a random single-threaded mix of pushes, pops and steals of one or several items.
TEST(SplitQueue, FullFollowsTheExactSizeThroughStealsAndPops) {
  for (const std::size_t capacity : {1u, 4u, 40u}) {
    split_queue<void*> q(capacity, capacity / 2);
    std::mt19937 rng(static_cast<unsigned>(capacity));
    std::uint32_t next = 0;
    int fulls = 0;
    for (int op = 0; op < 20000; ++op) {
      // Phases that grow and phases that shrink, so that the size crosses the bound often.
      const unsigned grow = (op / 500) % 2 == 0 ? 7 : 3;
      const unsigned r = rng() % 10;
      if (r < grow) {
        q.push(item(next++));
      } else if (r < 8) {
        q.pop();
      } else {
        void* out[8];
        steal_status why = steal_status::empty;
        q.steal(out, 1 + rng() % 8, &why);
      }
      ASSERT_EQ(q.full(), q.size() >= capacity) << "capacity " << capacity << ", op " << op;
      fulls += q.size() >= capacity ? 1 : 0;
    }
    EXPECT_GT(fulls, 0) << "the mix never reached the bound";
  }
}

// The owner pushes (in bursts that overflow the capacity, so the ring grows under the thieves)
// and pops at random; thieves steal one item or half of the public region. Every item must come
// out exactly once.
TEST(SplitQueue, RacingOwnerAndThievesNeitherLoseNorDuplicateAnItem) {
#if defined(LOCUS_TSAN) || defined(LOCUS_ASAN)
  constexpr std::uint32_t items = 1'000'000;
#else
  constexpr std::uint32_t items = 10'000'000;
#endif
  constexpr int thieves = 3;
  split_queue<void*> q(40, 20);
  std::vector<std::atomic<std::uint8_t>> seen(items);
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> stolen{0}, steals{0}, lost{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < thieves; ++t) {
    pool.emplace_back([&, t] {
      void* out[64];
      std::uint64_t mine = 0, ops = 0, races = 0;
      while (!done.load(std::memory_order_acquire)) {
        const std::size_t want = t == 0 ? 1 : (q.stealable() + 1) / 2;
        steal_status why = steal_status::empty;
        const std::size_t n = q.steal(out, want < 1 ? 1 : want > 64 ? 64 : want, &why);
        ++ops;
        races += why == steal_status::lost_race ? 1 : 0;
        for (std::size_t i = 0; i < n; ++i) {
          seen[id_of(out[i])].fetch_add(1, std::memory_order_relaxed);
        }
        mine += n;
        if (n == 0) std::this_thread::yield();
      }
      stolen += mine;
      steals += ops;
      lost += races;
    });
  }
  std::mt19937 rng(42);
  std::uint64_t popped = 0;
  std::uint32_t next = 0;
  while (next < items) {
    const std::uint32_t r = rng();
    if (r % 64 == 0) {
      // A burst past the capacity.
      for (int i = 0; i < 100 && next < items; ++i) q.push(item(next++));
    } else if (r % 2 == 0) {
      q.push(item(next++));
    } else if (void* p = q.pop()) {
      seen[id_of(p)].fetch_add(1, std::memory_order_relaxed);
      ++popped;
    }
  }
  while (void* p = q.pop()) {
    seen[id_of(p)].fetch_add(1, std::memory_order_relaxed);
    ++popped;
  }
  done.store(true, std::memory_order_release);
  for (auto& t : pool) t.join();
  std::uint32_t missing = 0, doubled = 0;
  for (auto& s : seen) {
    const auto n = s.load(std::memory_order_relaxed);
    missing += n == 0 ? 1 : 0;
    doubled += n > 1 ? 1 : 0;
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(doubled, 0u);
  EXPECT_EQ(popped + stolen.load(), items);
  EXPECT_GT(stolen.load(), 0u);
  std::printf(
      "%u items: %llu popped, %llu stolen in %llu steal attempts (%llu lost races)\n", items,
      static_cast<unsigned long long>(popped), static_cast<unsigned long long>(stolen.load()),
      static_cast<unsigned long long>(steals.load()), static_cast<unsigned long long>(lost.load()));
}

}  // namespace
