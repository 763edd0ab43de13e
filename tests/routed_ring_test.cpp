// How adws routes children (sched/routed_ring.hpp): a ring per sender and receiver, and the
// receiver's inbox of them. A ring holds `capacity` items and refuses the next one until
// drained; items come out in the order they were put; an inbox raises its flag on every send and
// a drain takes everything that arrived; and with two senders racing two receivers that take
// turns under a lock, every item comes out exactly once, each sender's in order.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "sched/routed_ring.hpp"

namespace {

using locus::detail::resume_item;
using locus::detail::routed_inbox;
using locus::detail::routed_ring;
using locus::detail::work_item;

std::vector<work_item*> drained(routed_ring& ring) {
  std::vector<work_item*> out;
  ring.drain([&](work_item* w) { out.push_back(w); });
  return out;
}

TEST(RoutedRing, HoldsItsCapacityInOrderAndRefusesMoreUntilDrained) {
  routed_ring ring;
  std::vector<resume_item> items(routed_ring::capacity + 1);
  EXPECT_TRUE(drained(ring).empty());
  for (std::size_t i = 0; i < routed_ring::capacity; ++i) EXPECT_TRUE(ring.try_put(&items[i])) << i;
  EXPECT_FALSE(ring.try_put(&items.back()));
  const std::vector<work_item*> out = drained(ring);
  ASSERT_EQ(out.size(), routed_ring::capacity);
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], &items[i]) << i;
  EXPECT_TRUE(ring.try_put(&items.back()));
  EXPECT_EQ(drained(ring), std::vector<work_item*>{&items.back()});
}

TEST(RoutedInbox, RaisesItsFlagOnASendAndADrainTakesEverySendersItems) {
  routed_inbox inbox(3);
  std::vector<resume_item> items(4);
  EXPECT_FALSE(inbox.has_arrivals());
  std::vector<work_item*> out;
  inbox.drain([&](work_item* w) { out.push_back(w); });
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(inbox.try_send(2, &items[0]));
  EXPECT_TRUE(inbox.has_arrivals());
  ASSERT_TRUE(inbox.try_send(0, &items[1]));
  ASSERT_TRUE(inbox.try_send(2, &items[2]));
  inbox.drain([&](work_item* w) { out.push_back(w); });
  EXPECT_FALSE(inbox.has_arrivals());
  // Sender by sender, each one's oldest first.
  EXPECT_EQ(out, (std::vector<work_item*>{&items[1], &items[0], &items[2]}));
  // A sender whose ring is full drains with `all`, whatever the flag says.
  for (std::size_t i = 0; i < routed_ring::capacity; ++i) ASSERT_TRUE(inbox.try_send(1, &items[3]));
  EXPECT_FALSE(inbox.try_send(1, &items[3]));
  out.clear();
  inbox.drain([&](work_item* w) { out.push_back(w); }, true);
  EXPECT_EQ(out.size(), routed_ring::capacity);
  EXPECT_TRUE(inbox.try_send(1, &items[3]));
}

TEST(RoutedInbox, EveryItemArrivesOnceAndInOrderWithTwoSendersAndTwoReceivers) {
  constexpr std::size_t per_sender = 100'000;
  routed_inbox inbox(2);
  std::vector<resume_item> items(2 * per_sender);  // sender s sends items [s * n, (s + 1) * n)
  std::mutex lock;                                 // the receiver's queue lock
  std::vector<work_item*> received;
  received.reserve(items.size());
  std::atomic<int> senders_done{0};
  auto send = [&](int from) {
    const std::size_t first = static_cast<std::size_t>(from) * per_sender;
    for (std::size_t i = first; i < first + per_sender; ++i) {
      while (!inbox.try_send(from, &items[i])) std::this_thread::yield();
    }
    ++senders_done;
  };
  auto receive = [&] {
    for (;;) {
      const bool last_look = senders_done.load() == 2;
      if (inbox.has_arrivals()) {
        const std::lock_guard hold(lock);
        inbox.drain([&](work_item* w) { received.push_back(w); });
      } else if (last_look) {
        return;
      }
    }
  };
  std::thread s0(send, 0), s1(send, 1), r0(receive), r1(receive);
  s0.join();
  s1.join();
  r0.join();
  r1.join();
  ASSERT_EQ(received.size(), items.size());
  std::size_t next[2] = {0, per_sender};
  for (work_item* w : received) {
    const auto i = static_cast<std::size_t>(static_cast<resume_item*>(w) - items.data());
    const std::size_t from = i / per_sender;
    ASSERT_EQ(i, next[from]) << "sender " << from;
    ++next[from];
  }
}

}  // namespace
