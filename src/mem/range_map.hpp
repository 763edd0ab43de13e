// Disjoint address ranges with a value each; assigning or erasing a range cuts the ranges it
// overlaps. Bindings are recorded in one (binding_registry) and replayed into another (the
// locality model).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>

namespace locus::mem {

template <class V>
class range_map {
 public:
  struct entry {
    std::uintptr_t end;
    V value;
  };

  // [begin, end) takes `value`, whatever parts of other ranges were there.
  void assign(std::uintptr_t begin, std::uintptr_t end, const V& value) {
    if (begin >= end) return;
    erase(begin, end);
    ranges_.emplace(begin, entry{end, value});
  }

  // Nothing is left in [begin, end); the parts of ranges outside it stay.
  void erase(std::uintptr_t begin, std::uintptr_t end) {
    if (begin >= end) return;
    auto it = ranges_.lower_bound(begin);
    if (it != ranges_.begin()) {
      auto before = std::prev(it);
      if (before->second.end > begin) {
        // A range that starts before `begin` keeps its head, and its tail past `end`.
        if (before->second.end > end) ranges_.emplace(end, before->second);
        before->second.end = begin;
      }
    }
    while (it != ranges_.end() && it->first < end) {
      if (it->second.end > end) {
        const entry tail = it->second;
        ranges_.erase(it);
        ranges_.emplace(end, tail);
        break;
      }
      it = ranges_.erase(it);
    }
  }

  // Removes every range whose value satisfies `pred`.
  template <class Pred>
  void erase_if(Pred pred) {
    std::erase_if(ranges_, [&](const auto& kv) { return pred(kv.second.value); });
  }

  // The value of the first range that overlaps [begin, end), or null.
  const V* first_overlapping(std::uintptr_t begin, std::uintptr_t end) const {
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin()) {
      auto before = std::prev(it);
      if (before->second.end > begin) return &before->second.value;
    }
    return it != ranges_.end() && it->first < end ? &it->second.value : nullptr;
  }

  // f(piece_begin, piece_end, value) for every range overlapping [begin, end), clipped to it, in
  // address order.
  template <class F>
  void for_each_overlapping(std::uintptr_t begin, std::uintptr_t end, F f) const {
    if (begin >= end) return;
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second.end > begin) --it;
    for (; it != ranges_.end() && it->first < end; ++it) {
      f(it->first < begin ? begin : it->first, it->second.end < end ? it->second.end : end,
        it->second.value);
    }
  }

  bool empty() const noexcept { return ranges_.empty(); }
  std::size_t size() const noexcept { return ranges_.size(); }
  // (begin, entry) pairs in address order.
  const std::map<std::uintptr_t, entry>& ranges() const noexcept { return ranges_; }

 private:
  std::map<std::uintptr_t, entry> ranges_;
};

}  // namespace locus::mem
