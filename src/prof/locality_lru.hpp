// One cache of the locality model: fully associative, true LRU, a fixed number of lines.
//
// Fully associative rather than set-associative: the model asks how much data a schedule reuses
// within a cache's capacity, and set conflicts would add noise that depends on addresses the
// allocator chose, not on the schedule. An intrusive doubly linked recency list over a slot array
// plus an open-addressing index (linear probing, backward-shift deletion) make a hit or a miss
// O(1) with no allocation after construction: the replay pushes every modeled line through it.
//
// Speed: a large cache's index does not fit in the host's caches, so what a replay costs is mostly
// host cache misses per modeled access. Hence an index entry holds the line, its slot and its
// home (one host line for a probe, and deletions need not hash again), and a slot holds the line
// and both recency links (one host line for a relink). (Hashing runs of consecutive lines to
// neighbouring entries was tried: the longer probe chains and deletion shifts cost more than the
// shared host lines saved.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace locus::prof {

class lru_cache {
 public:
  explicit lru_cache(std::size_t capacity_lines);

  // Touches `line` (an address divided by the line size). Returns true on a hit; on a miss the
  // line becomes resident, evicting the least recently used one when the cache is full.
  bool access(std::uint64_t line);
  bool contains(std::uint64_t line) const;
  // Drops `line` (a coherence invalidation); returns whether it was resident.
  bool erase(std::uint64_t line);
  std::size_t capacity() const noexcept { return slots_.size(); }
  std::size_t size() const noexcept { return resident_; }

 private:
  static constexpr std::uint32_t none = UINT32_MAX;

  struct entry {
    std::uint64_t key;   // line + 1; 0: empty
    std::uint32_t slot;  // where the line's recency links are
    std::uint32_t home;  // home(key - 1), kept so that deletions need not hash again
  };
  struct slot {
    std::uint64_t line;
    std::uint32_t prev, next;  // towards the most / least recent
  };

  std::size_t home(std::uint64_t line) const noexcept {
    // Fibonacci hashing: consecutive lines (the common stream) spread over the table.
    return static_cast<std::size_t>((line * 0x9e3779b97f4a7c15ULL) >> shift_);
  }
  // The index entry of `line`, or the empty one where it would go.
  std::size_t find(std::uint64_t line) const noexcept {
    const std::uint64_t key = line + 1;
    std::size_t i = home(line);
    while (index_[i].key != 0 && index_[i].key != key) i = (i + 1) & mask_;
    return i;
  }
  void unlink(std::uint32_t s) noexcept;
  void push_front(std::uint32_t s) noexcept;
  void erase_index(std::size_t hole) noexcept;

  std::vector<slot> slots_;  // the resident lines (head = most recent)
  std::uint32_t head_ = none, tail_ = none;
  std::size_t fresh_ = 0;              // slots below this one have been used
  std::size_t resident_ = 0;           // lines in the cache
  std::vector<std::uint32_t> erased_;  // slots freed by erase(), used before fresh ones
  std::vector<entry> index_;           // at most half full
  std::size_t mask_ = 0;
  int shift_ = 0;
};

}  // namespace locus::prof
