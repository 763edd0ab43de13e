// The ring adws routes children through (sched/routed_ring.hpp): one sender, and any number of
// receivers that take turns under a lock. It holds `capacity` items and refuses the next one
// until drained; items come out in the order they were put; and with the sender racing two
// receivers every item comes out exactly once, in order.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "sched/routed_ring.hpp"

namespace {

using locus::detail::resume_item;
using locus::detail::routed_ring;
using locus::detail::work_item;

TEST(RoutedRing, HoldsItsCapacityInOrderAndRefusesMoreUntilDrained) {
  routed_ring ring;
  std::vector<resume_item> items(routed_ring::capacity + 1);
  EXPECT_TRUE(ring.looks_empty());
  for (std::size_t i = 0; i < routed_ring::capacity; ++i) EXPECT_TRUE(ring.try_put(&items[i])) << i;
  EXPECT_FALSE(ring.try_put(&items.back()));
  EXPECT_FALSE(ring.looks_empty());
  std::vector<work_item*> out;
  ring.drain([&](work_item* w) { out.push_back(w); });
  ASSERT_EQ(out.size(), routed_ring::capacity);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], &items[i]) << i;
  EXPECT_TRUE(ring.looks_empty());
  EXPECT_TRUE(ring.try_put(&items.back()));
  out.clear();
  ring.drain([&](work_item* w) { out.push_back(w); });
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], &items.back());
}

TEST(RoutedRing, EveryItemArrivesOnceAndInOrderWithTwoReceiversTakingTurns) {
  constexpr std::size_t n = 200'000;
  routed_ring ring;
  std::vector<resume_item> items(n);
  std::mutex lock;  // the receiver's queue lock
  std::vector<work_item*> received;
  received.reserve(n);
  std::atomic<bool> sent_all{false};
  std::thread sender([&] {
    for (std::size_t i = 0; i < n; ++i) {
      while (!ring.try_put(&items[i])) std::this_thread::yield();
    }
    sent_all = true;
  });
  auto receive = [&] {
    for (;;) {
      const bool last_look = sent_all.load();
      if (!ring.looks_empty()) {
        const std::lock_guard hold(lock);
        ring.drain([&](work_item* w) { received.push_back(w); });
      } else if (last_look) {
        return;
      }
    }
  };
  std::thread first(receive), second(receive);
  sender.join();
  first.join();
  second.join();
  ASSERT_EQ(received.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(received[i], &items[i]) << i;
}

}  // namespace
