// ADWS's distribution range (seed 000 §3.1: Shiina & Taura, IEEE TPDS 33(12), 2022, Fig. 5-7): a
// half-open interval [lo, hi) over the units of one level of the tree of caches (the workers,
// for single-level ADWS), as a value type. A task belongs to unit floor(lo), its owner. Ranges
// are never negative, so truncation is floor (and needs no libm call on the spawn path).
#pragma once

#include <algorithm>

namespace locus::detail {

struct dist_range {
  double lo = 0, hi = 0;

  bool empty() const noexcept { return !(hi > lo); }
  static int floor_of(double x) noexcept { return static_cast<int>(std::max(0.0, x)); }

  // The unit [lo, hi) starts in, among `units` units.
  int owner(int units) const noexcept { return std::clamp(floor_of(lo), 0, units - 1); }
  // The last unit whose interval [i, i + 1) meets the range (hi exclusive).
  int last_unit(int units) const noexcept {
    const int f = floor_of(hi);
    const int i = static_cast<double>(f) == hi ? f - 1 : f;
    return std::clamp(i, 0, units - 1);
  }
  // The mapping's cross-worker range: it meets more than one unit's interval ([i, i + 1) lies on
  // unit i alone).
  bool spans_units(int units) const noexcept {
    return !empty() && owner(units) != last_unit(units);
  }
  // §3.2's cross-worker task, floor(lo) != floor(hi), which dominance uses: a task whose range
  // reaches the end of its owner's unit finishing means that unit's share of its group is done
  // ([1.6, 2) reaches unit 2's start although it lies on unit 1 alone).
  bool reaches_next_unit() const noexcept { return !empty() && floor_of(lo) != floor_of(hi); }

  // Fig. 7, RUN: the top `share` (0 .. 1) of the range for a child, and what is left below it.
  // The paper draws worker 0 on the right and children left to right: children take the range
  // from its top down.
  struct split;
  split divide(double share) const noexcept;

  // Moved by `shift` units; a range pushed past `unit`'s end becomes empty at its end.
  dist_range moved_onto(int unit, double shift) const noexcept {
    dist_range r{lo + shift, hi + shift};
    if (r.lo >= unit + 1.0) r.lo = r.hi = unit;
    return r;
  }

  bool contains(const dist_range& r) const noexcept { return r.lo >= lo && r.hi <= hi; }
};

struct dist_range::split {
  dist_range child, rest;
};

inline dist_range::split dist_range::divide(double share) const noexcept {
  const double at = share >= 1.0 ? lo : hi - (hi - lo) * share;
  return {{at, hi}, {lo, at}};
}

}  // namespace locus::detail
