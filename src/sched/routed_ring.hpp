// Work items one worker hands to another, without a lock on the sender's side: one ring per
// sender and receiver. A send is plain stores (the item, the ring's tail, the inbox's flag), so
// it never waits for a cache line the receiver polls (a locked instruction would: the receiver
// reads that line on every round of its search). Whoever holds the receiver's queue lock moves
// what arrived into its queues, so the ring has one consumer at a time.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "locus/detail/spawn.hpp"

namespace locus::detail {

class routed_ring {
 public:
  static constexpr std::uint64_t capacity = 256;

  // The sender's side; false when the ring is full.
  bool try_put(work_item* item) noexcept {
    const std::uint64_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_seen_ >= capacity) {
      head_seen_ = head_.load(std::memory_order_acquire);
      if (t - head_seen_ >= capacity) return false;
    }
    slots_[t % capacity].store(item, std::memory_order_relaxed);
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }

  // Under the receiver's lock: hands every waiting item to `take`, oldest first.
  template <class Take>
  void drain(Take&& take) {
    const std::uint64_t t = tail_.load(std::memory_order_acquire);
    std::uint64_t h = head_.load(std::memory_order_relaxed);
    if (h == t) return;
    for (; h != t; ++h) take(slots_[h % capacity].load(std::memory_order_relaxed));
    head_.store(h, std::memory_order_release);
  }

 private:
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  std::uint64_t head_seen_ = 0;  // the sender's last look at head_
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::array<std::atomic<work_item*>, capacity> slots_{};
};

// The rings into one worker: one per sender, made by the sender on its first send, and a flag
// that every send raises, so that the receiver polls one line whatever the number of workers.
// Whoever clears the flag (exchange, under the receiver's lock) drains every ring after it, so
// that an item put before the flag was raised is never left behind a cleared flag.
class routed_inbox {
 public:
  explicit routed_inbox(int senders)
      : rings_(std::make_unique<std::atomic<routed_ring*>[]>(static_cast<std::size_t>(senders))),
        owned_(static_cast<std::size_t>(senders)),
        senders_(senders) {}

  // Sender `from`, on its own thread; false when its ring is full.
  bool try_send(int from, work_item* item) {
    const auto i = static_cast<std::size_t>(from);
    routed_ring* ring = rings_[i].load(std::memory_order_relaxed);
    if (ring == nullptr) {
      owned_[i] = std::make_unique<routed_ring>();
      ring = owned_[i].get();
      rings_[i].store(ring, std::memory_order_release);
    }
    if (!ring->try_put(item)) return false;
    arrivals_.store(true, std::memory_order_release);
    return true;
  }

  // Anyone, without the lock: whether items may be waiting.
  bool has_arrivals() const noexcept { return arrivals_.load(std::memory_order_relaxed); }

  // Under the receiver's lock: hands what arrived to `take`, each sender's oldest first; with
  // `all`, also when the flag is down (a sender whose own ring is full).
  template <class Take>
  void drain(Take&& take, bool all = false) {
    if (!all && !arrivals_.load(std::memory_order_relaxed)) return;
    arrivals_.exchange(false, std::memory_order_acquire);
    for (std::size_t i = 0; i < static_cast<std::size_t>(senders_); ++i) {
      if (routed_ring* ring = rings_[i].load(std::memory_order_acquire)) ring->drain(take);
    }
  }

 private:
  std::unique_ptr<std::atomic<routed_ring*>[]> rings_;
  std::vector<std::unique_ptr<routed_ring>> owned_;  // entry i written by sender i only
  int senders_;
  alignas(64) std::atomic<bool> arrivals_{false};
};

}  // namespace locus::detail
