#include "prof/locality_lru.hpp"

#include <algorithm>
#include <bit>

namespace locus::prof {

lru_cache::lru_cache(std::size_t capacity_lines)
    : lines_(std::max<std::size_t>(capacity_lines, 1)),
      prev_(lines_.size(), none),
      next_(lines_.size(), none) {
  const std::size_t table = std::bit_ceil(2 * lines_.size());
  keys_.assign(table, 0);
  slots_.assign(table, none);
  mask_ = table - 1;
  shift_ = 64 - std::countr_zero(table);
}

std::size_t lru_cache::home(std::uint64_t line) const noexcept {
  // Fibonacci hashing: consecutive lines (the common stream) spread over the table.
  if (shift_ >= 64) return 0;
  return static_cast<std::size_t>((line * 0x9e3779b97f4a7c15ULL) >> shift_) & mask_;
}

std::size_t lru_cache::find(std::uint64_t line) const noexcept {
  const std::uint64_t key = line + 1;
  std::size_t i = home(line);
  while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask_;
  return i;
}

bool lru_cache::contains(std::uint64_t line) const {
  return keys_[find(line)] != 0;
}

void lru_cache::unlink(std::uint32_t s) noexcept {
  if (prev_[s] != none) {
    next_[prev_[s]] = next_[s];
  } else {
    head_ = next_[s];
  }
  if (next_[s] != none) {
    prev_[next_[s]] = prev_[s];
  } else {
    tail_ = prev_[s];
  }
  prev_[s] = next_[s] = none;
}

void lru_cache::push_front(std::uint32_t s) noexcept {
  prev_[s] = none;
  next_[s] = head_;
  if (head_ != none) prev_[head_] = s;
  head_ = s;
  if (tail_ == none) tail_ = s;
}

void lru_cache::erase_index(std::uint64_t line) noexcept {
  std::size_t hole = find(line);
  keys_[hole] = 0;
  slots_[hole] = none;
  // Backward-shift deletion keeps every probe chain unbroken without tombstones, so lookups stay
  // short however long the replay runs.
  for (std::size_t i = (hole + 1) & mask_; keys_[i] != 0; i = (i + 1) & mask_) {
    const std::size_t h = home(keys_[i] - 1);
    // Move entry i into the hole unless its home lies cyclically in (hole, i].
    const bool stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i);
    if (stays) continue;
    keys_[hole] = keys_[i];
    slots_[hole] = slots_[i];
    keys_[i] = 0;
    slots_[i] = none;
    hole = i;
  }
}

bool lru_cache::access(std::uint64_t line) {
  std::size_t i = find(line);
  if (keys_[i] != 0) {
    const std::uint32_t s = slots_[i];
    if (s != head_) {
      unlink(s);
      push_front(s);
    }
    return true;
  }
  std::uint32_t s;
  if (used_ < lines_.size()) {
    s = static_cast<std::uint32_t>(used_++);
  } else {
    s = tail_;
    unlink(s);
    erase_index(lines_[s]);
    i = find(line);  // the deletion may have moved entries along this line's chain
  }
  lines_[s] = line;
  keys_[i] = line + 1;
  slots_[i] = s;
  push_front(s);
  return false;
}

}  // namespace locus::prof
