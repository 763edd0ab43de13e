// How many tasks of a queue are live (put and not yet ended), for all_empty(). Counting them in
// one atomic would cost every put and every end a locked read-modify-write (most of a put's own
// cost, measured) on a cache line every worker writes. Instead each thread owns a shard whose
// counters only it writes, with plain stores, and emptiness is read as HotSLAW's collective test
// must be, without stopping anyone (see empty()).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace locus::detail {

class live_count {
 public:
  // `slot`: the calling thread's (acquire_slot()).
  void put(unsigned slot) noexcept {
    if (shard* s = shard_of(slot)) [[likely]] {
      s->puts.store(s->puts.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      overflow_.puts.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Release: whoever reads this end also reads the put of the task (it happened before the task
  // started, which happened before its end).
  void end(unsigned slot) noexcept {
    if (shard* s = shard_of(slot)) [[likely]] {
      s->ends.store(s->ends.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    } else {
      overflow_.ends.fetch_add(1, std::memory_order_release);
    }
  }

  // Every end read here has its put read after it, so ends never exceed puts, and they are equal
  // only if every put read has ended; a task live while this runs was put by a task (or caller)
  // live before, whose put is read and whose end is not. So equality means nothing was live.
  bool empty() const noexcept {
    std::uint64_t ends = overflow_.ends.load(std::memory_order_acquire);
    for (const auto& s : shards_) ends += s.ends.load(std::memory_order_acquire);
    std::uint64_t puts = overflow_.puts.load(std::memory_order_acquire);
    for (const auto& s : shards_) puts += s.puts.load(std::memory_order_acquire);
    return puts == ends;
  }

  // Every put so far, for statistics: a snapshot, exact only when nothing is put meanwhile.
  std::uint64_t puts_total() const noexcept {
    std::uint64_t puts = overflow_.puts.load(std::memory_order_relaxed);
    for (const auto& s : shards_) puts += s.puts.load(std::memory_order_relaxed);
    return puts;
  }

  static constexpr unsigned shards = 64;

  // A slot for the calling thread, unique among live threads and given back when it exits (the
  // handover is ordered through the taken slots' word). Threads beyond `shards` count in an
  // atomic shared shard.
  static unsigned acquire_slot();

 private:
  struct alignas(64) shard {
    std::atomic<std::uint64_t> puts{0};
    std::atomic<std::uint64_t> ends{0};
  };

  shard* shard_of(unsigned slot) noexcept { return slot < shards ? &shards_[slot] : nullptr; }

  std::array<shard, shards> shards_{};
  shard overflow_;
};

}  // namespace locus::detail
