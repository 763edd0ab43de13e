// Chase-Lev work-stealing deque, after the C11 formulation of Lê, Pop, Cohen and Zappa Nardelli,
// "Correct and Efficient Work-Stealing for Weak Memory Models" (PPoPP 2013), Fig. 1, with the
// fences folded into the accesses they order: the release fence of push into a release store of
// bottom, and the two seq_cst fences (pop, steal) into seq_cst accesses, which C++20 orders in one
// total order just like the fences. The result has no fence at all, so ThreadSanitizer (which
// does not model fences) checks the very code that runs, and on x86 the steal path loses an
// mfence.
//
// One owner pushes and pops at the bottom; any thread steals from the top. The buffer grows by
// doubling when full; retired buffers are kept until the deque is destroyed, because a concurrent
// thief may still read from them (their total size is below twice the largest buffer).
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

namespace locus::queue {

template <class T>
class chase_lev_deque {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(void*),
                "elements are copied racily by thieves: keep them pointer-sized and trivial");

 public:
  explicit chase_lev_deque(std::size_t initial_capacity = 256) : buffer_(nullptr) {
    const std::size_t cap = std::bit_ceil(initial_capacity < 2 ? std::size_t{2} : initial_capacity);
    retired_.push_back(std::make_unique<ring>(cap));
    buffer_.store(retired_.back().get(), std::memory_order_relaxed);
  }
  chase_lev_deque(const chase_lev_deque&) = delete;
  chase_lev_deque& operator=(const chase_lev_deque&) = delete;

  // Owner only.
  void push(T item) { put_bottom(item); }
  // Owner only: an item that thieves can tell apart before they take it (oldest_marked); pop and
  // steal return it as pushed. For pointers to objects aligned to at least 2: the mark is the
  // pointer's low bit.
  void push_marked(T item) requires std::is_pointer_v<T> {
    put_bottom(std::bit_cast<T>(std::bit_cast<std::uintptr_t>(item) | mark_bit));
  }

  // Owner only.
  std::optional<T> pop() {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* a = buffer_.load(std::memory_order_relaxed);
    // Store-load ordering against the thieves: a seq_cst exchange, one locked instruction on
    // x86 instead of a store and an mfence.
    bottom_.exchange(b, std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t > b) {
      bottom_.store(b + 1, std::memory_order_relaxed);
      return std::nullopt;
    }
    T item = unmarked(a->get(b));
    if (t == b) {
      // Last element: race against thieves for it.
      const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                                    std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_relaxed);
      if (!won) return std::nullopt;
    }
    return item;
  }

  // Any thread. Empty result means empty or lost a race; `lost_race` tells which.
  std::optional<T> steal(bool* lost_race = nullptr) {
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return std::nullopt;
    ring* a = buffer_.load(std::memory_order_acquire);
    T item = unmarked(a->get(t));
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                      std::memory_order_relaxed)) {
      if (lost_race) *lost_race = true;
      return std::nullopt;
    }
    return item;
  }

  // Any thread: whether the oldest item, if there is one, was pushed marked. A hint: it may be
  // taken, and its slot reused, before the caller acts on the answer.
  bool oldest_marked() const noexcept {
    if constexpr (std::is_pointer_v<T>) {
      const std::int64_t t = top_.load(std::memory_order_acquire);
      const std::int64_t b = bottom_.load(std::memory_order_acquire);
      if (t >= b) return false;
      const T item = buffer_.load(std::memory_order_acquire)->get(t);
      return (std::bit_cast<std::uintptr_t>(item) & mark_bit) != 0;
    } else {
      return false;
    }
  }

  // Approximate; exact when called by the owner with no concurrent thieves.
  std::int64_t size() const noexcept {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_relaxed);
    return b > t ? b - t : 0;
  }
  bool empty() const noexcept { return size() == 0; }
  std::size_t capacity() const noexcept {
    return buffer_.load(std::memory_order_relaxed)->capacity;
  }

 private:
  static constexpr std::uintptr_t mark_bit = 1;
  static T unmarked(T item) noexcept {
    if constexpr (std::is_pointer_v<T>) {
      return std::bit_cast<T>(std::bit_cast<std::uintptr_t>(item) & ~mark_bit);
    } else {
      return item;
    }
  }

  void put_bottom(T item) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_acquire);
    ring* a = buffer_.load(std::memory_order_relaxed);
    if (b - t > static_cast<std::int64_t>(a->capacity) - 1) [[unlikely]]
      a = grow(a, t, b);
    a->put(b, item);
    bottom_.store(b + 1, std::memory_order_release);
  }

  struct ring {
    explicit ring(std::size_t cap) : capacity(cap), mask(cap - 1), slots(cap) {}
    // Slots are atomics accessed relaxed: a thief may read a slot the owner is overwriting after
    // a wrap-around; the CAS on top then fails and the value is discarded.
    T get(std::int64_t i) const noexcept {
      return slots[static_cast<std::size_t>(i) & mask].load(std::memory_order_relaxed);
    }
    void put(std::int64_t i, T v) noexcept {
      slots[static_cast<std::size_t>(i) & mask].store(v, std::memory_order_relaxed);
    }
    const std::size_t capacity;
    const std::size_t mask;
    std::vector<std::atomic<T>> slots;
  };

  [[gnu::noinline]] ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<ring>(old->capacity * 2);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    ring* fresh = bigger.get();
    retired_.push_back(std::move(bigger));
    buffer_.store(fresh, std::memory_order_release);
    return fresh;
  }

  alignas(std::hardware_destructive_interference_size) std::atomic<std::int64_t> top_{0};
  alignas(std::hardware_destructive_interference_size) std::atomic<std::int64_t> bottom_{0};
  alignas(std::hardware_destructive_interference_size) std::atomic<ring*> buffer_;
  std::vector<std::unique_ptr<ring>> retired_;  // owner only
};

}  // namespace locus::queue
