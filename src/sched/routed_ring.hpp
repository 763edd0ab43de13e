// Work items one worker hands to another, without a lock on the sender's side: one ring per
// sender and receiver. A send is two plain stores, so it never waits for a cache line the
// receiver polls (a locked instruction would: the receiver reads that line on every round of
// its search). Whoever holds the receiver's queue lock moves what arrived into its queues, so
// the ring has one consumer at a time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

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

  // Anyone, without the lock: whether items may be waiting.
  bool looks_empty() const noexcept {
    return head_.load(std::memory_order_relaxed) == tail_.load(std::memory_order_acquire);
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

}  // namespace locus::detail
