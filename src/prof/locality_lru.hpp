// One cache of the locality model: fully associative, true LRU, a fixed number of lines.
//
// Fully associative rather than set-associative: the model asks how much data a schedule reuses
// within a cache's capacity, and set conflicts would add noise that depends on addresses the
// allocator chose, not on the schedule. An intrusive doubly linked recency list over a slot array
// plus an open-addressing index (linear probing, backward-shift deletion) make a hit or a miss
// O(1) with no allocation after construction: the replay pushes every modeled line through it.
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
  std::size_t capacity() const noexcept { return lines_.size(); }
  std::size_t size() const noexcept { return used_; }

 private:
  static constexpr std::uint32_t none = UINT32_MAX;

  std::size_t home(std::uint64_t line) const noexcept;
  std::size_t find(std::uint64_t line) const noexcept;  // index slot, or the empty one to fill
  void unlink(std::uint32_t slot) noexcept;
  void push_front(std::uint32_t slot) noexcept;
  void erase_index(std::uint64_t line) noexcept;

  // Slots: the resident lines and their recency links (head = most recent).
  std::vector<std::uint64_t> lines_;
  std::vector<std::uint32_t> prev_, next_;
  std::uint32_t head_ = none, tail_ = none;
  std::size_t used_ = 0;
  // Index: line + 1 (0 = empty) -> slot; at most half full.
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> slots_;
  std::size_t mask_ = 0;
  int shift_ = 0;
};

}  // namespace locus::prof
