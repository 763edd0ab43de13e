// How many tasks of a queue are live (put and not yet ended), for all_empty(). A single counter
// would be written by every put and every end on every worker, one cache line bouncing between
// them; instead each thread counts its puts and ends in a shard of its own, and emptiness is read
// as HotSLAW's collective test must be, without stopping anyone (see empty()).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace locus::detail {

class live_count {
 public:
  void put() noexcept { mine().puts.fetch_add(1, std::memory_order_relaxed); }
  // Release: whoever sees this end also sees the put of the task (it happened before the task
  // started, which happened before its end).
  void end() noexcept { mine().ends.fetch_add(1, std::memory_order_release); }

  // Every end read here has its put read after it, so ends never exceed puts, and they are equal
  // only if every put read has ended; a task live while this runs was put by a task (or caller)
  // live before, whose put is read and whose end is not. So equality means nothing was live.
  bool empty() const noexcept {
    std::uint64_t ends = 0, puts = 0;
    for (const auto& s : shards_) ends += s.ends.load(std::memory_order_acquire);
    for (const auto& s : shards_) puts += s.puts.load(std::memory_order_acquire);
    return puts == ends;
  }

 private:
  struct alignas(64) shard {
    std::atomic<std::uint64_t> puts{0};
    std::atomic<std::uint64_t> ends{0};
  };
  static constexpr unsigned shards = 32;  // more threads than this share shards, still exactly

  shard& mine() noexcept { return shards_[thread_shard() % shards]; }
  // The calling thread's number. Never inlined: a task may resume on another thread.
  [[gnu::noipa]] static unsigned thread_shard() noexcept;

  std::array<shard, shards> shards_{};
};

}  // namespace locus::detail
