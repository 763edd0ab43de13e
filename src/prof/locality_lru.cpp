#include "prof/locality_lru.hpp"

#include <algorithm>
#include <bit>

namespace locus::prof {

lru_cache::lru_cache(std::size_t capacity_lines)
    : slots_(std::max<std::size_t>(capacity_lines, 1), slot{0, none, none}) {
  // 2 * capacity >= 2 entries: the shift stays below 64.
  const std::size_t table = std::bit_ceil(2 * slots_.size());
  index_.assign(table, entry{0, none, 0});
  mask_ = table - 1;
  shift_ = 64 - std::countr_zero(table);
}

bool lru_cache::contains(std::uint64_t line) const {
  return index_[find(line)].key != 0;
}

void lru_cache::unlink(std::uint32_t s) noexcept {
  slot& x = slots_[s];
  if (x.prev != none) {
    slots_[x.prev].next = x.next;
  } else {
    head_ = x.next;
  }
  if (x.next != none) {
    slots_[x.next].prev = x.prev;
  } else {
    tail_ = x.prev;
  }
}

void lru_cache::push_front(std::uint32_t s) noexcept {
  slot& x = slots_[s];
  x.prev = none;
  x.next = head_;
  if (head_ != none) slots_[head_].prev = s;
  head_ = s;
  if (tail_ == none) tail_ = s;
}

void lru_cache::erase_index(std::size_t hole) noexcept {
  index_[hole] = entry{0, none, 0};
  // Backward-shift deletion keeps every probe chain unbroken without tombstones, so lookups stay
  // short however long the replay runs.
  for (std::size_t i = (hole + 1) & mask_; index_[i].key != 0; i = (i + 1) & mask_) {
    const std::size_t h = index_[i].home;
    // Move entry i into the hole unless its home lies cyclically in (hole, i].
    const bool stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i);
    if (stays) continue;
    index_[hole] = index_[i];
    index_[i] = entry{0, none, 0};
    hole = i;
  }
}

bool lru_cache::access(std::uint64_t line) {
  std::size_t i = find(line);
  if (index_[i].key != 0) {
    const std::uint32_t s = index_[i].slot;
    if (s != head_) {
      unlink(s);
      push_front(s);
    }
    return true;
  }
  std::uint32_t s;
  if (!erased_.empty()) {
    s = erased_.back();
    erased_.pop_back();
    ++resident_;
  } else if (fresh_ < slots_.size()) {
    s = static_cast<std::uint32_t>(fresh_++);
    ++resident_;
  } else {
    s = tail_;
    unlink(s);
    erase_index(find(slots_[s].line));
    i = find(line);  // the deletion may have moved entries along this line's chain
  }
  slots_[s].line = line;
  index_[i] = entry{line + 1, s, static_cast<std::uint32_t>(home(line))};
  push_front(s);
  return false;
}

bool lru_cache::erase(std::uint64_t line) {
  const std::size_t i = find(line);
  if (index_[i].key == 0) return false;
  const std::uint32_t s = index_[i].slot;
  unlink(s);
  erase_index(i);
  erased_.push_back(s);
  --resident_;
  return true;
}

}  // namespace locus::prof
