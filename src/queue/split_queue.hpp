// A worker's queue split into a private region and a public one (seed 004 §3.1, after Dinan et
// al.; the split request is Lace's): the owner pushes and pops its newest items in the private
// region with plain loads and stores, thieves take the oldest items of the public region, one or
// a chunk per compare-and-swap.
//
// Indices grow without bound (32-bit, wrapping) over a ring: the public region is [top, split),
// the private one [split, tail). Thieves change only `top`, and only by a compare-and-swap of
// the word {top, public length}, which leaves split = top + length where it was; the owner moves
// split itself (publishing toward tail, or taking back the newer half of the public region when
// its private region is empty) with a compare-and-swap of the same word, off the fast path.
//
// A thief claims its items first and reads them after: the compare-and-swap decides who owns
// them, so an earlier read can never be stale (no ABA). The claimed slots are read, then cleared;
// the owner writes a slot only once it sees it cleared, so a slow thief still finds its items,
// and a slot that is not clear when the owner comes round to it (the ring is full, or a thief has
// not read it yet) makes the ring grow instead. Retired rings live until the queue dies, because
// a thief may still read from one.
//
// The capacity is the bound a policy keeps (full()); pushes past it that nobody may refuse (a
// continuation, a program's own queued spawn, a stolen chunk) grow the ring rather than fail.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "queue/work_queue.hpp"

namespace locus::queue {

template <class T>
class split_queue final : public work_queue<T> {
  static_assert(std::is_pointer_v<T>, "a clear slot is a null item: the items are pointers");

 public:
  // `capacity`: what full() measures against. `private_limit`: a push that leaves more private
  // items than this publishes half of them.
  split_queue(std::size_t capacity, std::size_t private_limit)
      : capacity_(capacity < 1 ? 1 : capacity),
        private_limit_(static_cast<std::uint32_t>(private_limit)) {
    rings_.push_back(std::make_unique<ring>(std::bit_ceil(capacity_ < 2 ? 2 : capacity_)));
    ring_.store(rings_.back().get(), std::memory_order_relaxed);
  }

  // Owner only.
  void push(T item) override {
    ring* r = ring_.load(std::memory_order_relaxed);
    if (r->at(tail_).load(std::memory_order_acquire) != nullptr) [[unlikely]]
      r = grow();
    r->at(tail_).store(item, std::memory_order_relaxed);
    ++tail_;
    tail_shared_.store(tail_, std::memory_order_release);
    if (tail_ - split_ > private_limit_ || split_requested_.load(std::memory_order_relaxed))
        [[unlikely]] {
      publish();
    }
  }

  // Owner only: the newest item, private first; the newer half of the public region comes back
  // to the private one when that is empty.
  T pop() override {
    if (tail_ == split_ && !take_back()) return nullptr;
    --tail_;
    std::atomic<T>& slot = ring_.load(std::memory_order_relaxed)->at(tail_);
    const T item = slot.load(std::memory_order_relaxed);
    slot.store(nullptr, std::memory_order_relaxed);
    tail_shared_.store(tail_, std::memory_order_release);
    if (split_requested_.load(std::memory_order_relaxed)) [[unlikely]]
      publish();
    return item;
  }

  // Any thread: up to `max` of the oldest public items, in one compare-and-swap.
  std::size_t steal(T* out, std::size_t max, steal_status* why) override {
    std::uint64_t word = ts_.load(std::memory_order_acquire);
    const std::uint32_t top = top_of(word), length = length_of(word);
    if (length == 0) {
      // Ask the owner to share when it holds private items (a request costs it one publish).
      const std::uint32_t held = tail_shared_.load(std::memory_order_relaxed) - top;
      if (static_cast<std::int32_t>(held) > 0 &&
          !split_requested_.load(std::memory_order_relaxed)) {
        split_requested_.store(true, std::memory_order_relaxed);
      }
      *why = steal_status::empty;
      return 0;
    }
    // Loaded before the claim: a ring loaded after it may be a newer one that never received the
    // claimed items (the owner copies only what is still queued when it grows).
    ring* r = ring_.load(std::memory_order_acquire);
    const std::uint32_t n = max < length ? static_cast<std::uint32_t>(max) : length;
    if (!ts_.compare_exchange_strong(word, pack(top + n, length - n), std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
      *why = steal_status::lost_race;
      return 0;
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      std::atomic<T>& slot = r->at(top + i);
      out[i] = slot.load(std::memory_order_relaxed);
      slot.store(nullptr, std::memory_order_release);
    }
    *why = steal_status::taken;
    return n;
  }

  // Any thread; the owner's own reading errs on the large side (a thief's take may not show yet).
  std::size_t size() const noexcept override {
    const std::uint32_t tail = tail_shared_.load(std::memory_order_seq_cst);
    const std::uint32_t top = top_of(ts_.load(std::memory_order_seq_cst));
    const auto n = static_cast<std::int32_t>(tail - top);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  // Any thread: the public region.
  std::size_t stealable() const noexcept override {
    return length_of(ts_.load(std::memory_order_relaxed));
  }

  std::size_t capacity() const noexcept { return capacity_; }
  // Owner only: whether the queue holds `capacity` items. Thieves only ever raise `top`, so the
  // size measured against the last `top` the owner read errs on the large side, and the shared
  // word, which thieves write, is read again only when that bound is reached.
  bool full() noexcept {
    if (tail_ - seen_top_ < capacity_) return false;
    seen_top_ = top_of(ts_.load(std::memory_order_relaxed));
    return tail_ - seen_top_ >= capacity_;
  }
  std::size_t private_size() const noexcept { return tail_ - split_; }

 private:
  struct ring {
    explicit ring(std::size_t cap) : mask(cap - 1), slots(cap) {}
    std::atomic<T>& at(std::uint32_t i) noexcept { return slots[i & mask]; }
    const std::size_t mask;
    std::vector<std::atomic<T>> slots;  // null: clear (free, and read by whoever took it)
  };

  static constexpr std::uint64_t pack(std::uint32_t top, std::uint32_t length) noexcept {
    return static_cast<std::uint64_t>(length) << 32 | top;
  }
  static constexpr std::uint32_t top_of(std::uint64_t w) noexcept {
    return static_cast<std::uint32_t>(w);
  }
  static constexpr std::uint32_t length_of(std::uint64_t w) noexcept {
    return static_cast<std::uint32_t>(w >> 32);
  }

  // Moves the older half of the private region (at least one item) to the public one.
  [[gnu::noinline]] void publish() noexcept {
    split_requested_.store(false, std::memory_order_relaxed);
    const std::uint32_t held = tail_ - split_;
    if (held == 0) return;
    const std::uint32_t give = (held + 1) / 2;
    std::uint64_t word = ts_.load(std::memory_order_relaxed);
    while (!ts_.compare_exchange_weak(word, pack(top_of(word), length_of(word) + give),
                                      std::memory_order_release, std::memory_order_relaxed)) {
    }
    split_ += give;
  }

  // The private region is empty: claims the newer half of the public region (at least one item)
  // for it; false when the public region is empty too.
  [[gnu::noinline]] bool take_back() noexcept {
    std::uint64_t word = ts_.load(std::memory_order_relaxed);
    std::uint32_t take = 0;
    do {
      const std::uint32_t length = length_of(word);
      if (length == 0) return false;
      take = (length + 1) / 2;
      // acquire: the thieves' clears of the slots this region will reuse
    } while (!ts_.compare_exchange_weak(word, pack(top_of(word), length_of(word) - take),
                                        std::memory_order_acquire, std::memory_order_relaxed));
    split_ -= take;
    return true;
  }

  // The slot at tail is not clear: a ring twice as large with what is still queued.
  [[gnu::noinline]] ring* grow() {
    ring* old = ring_.load(std::memory_order_relaxed);
    auto bigger = std::make_unique<ring>(old->slots.size() * 2);
    // What thieves claim after this read is copied too; what they claimed before stays behind
    // (each thief reads the ring it loaded before claiming).
    const std::uint32_t top = top_of(ts_.load(std::memory_order_acquire));
    for (std::uint32_t i = top; i != tail_; ++i) {
      bigger->at(i).store(old->at(i).load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    ring* fresh = bigger.get();
    rings_.push_back(std::move(bigger));
    ring_.store(fresh, std::memory_order_release);
    return fresh;
  }

  const std::size_t capacity_;
  const std::uint32_t private_limit_;

  // Thieves' side.
  alignas(std::hardware_destructive_interference_size) std::atomic<std::uint64_t> ts_{0};
  std::atomic<ring*> ring_{nullptr};
  alignas(std::hardware_destructive_interference_size) std::atomic<bool> split_requested_{false};
  // The owner's side: tail and split are exact here; tail_shared_ mirrors tail for size().
  alignas(std::hardware_destructive_interference_size) std::uint32_t tail_ = 0;
  std::uint32_t split_ = 0;
  std::uint32_t seen_top_ = 0;  // `top` when full() last read it: at most the current one
  std::atomic<std::uint32_t> tail_shared_{0};
  std::vector<std::unique_ptr<ring>> rings_;  // owner only
};

}  // namespace locus::queue
