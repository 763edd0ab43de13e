// Place hints and placed data of the NUMA-WS benchmarks (seed 001, §III-A and Fig. 4): a
// benchmark cuts its data into parts, binds part i to a place (locus/memory.hpp) and gives the
// top-level task that works on part i the same place hint; everything below inherits it. Only
// the top level carries hints, as in the paper. With one place nothing is bound and nothing is
// hinted, so a one-place run builds the task tree of the serial elision.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <locus/hints.hpp>
#include <locus/runtime.hpp>
#include <locus/task_group.hpp>

#include "harness/data_placement.hpp"

namespace locus_bench::placement {

// The place of part i of `parts` when a run has `places` places: consecutive parts share a place
// when there are fewer places than parts (parts 0 1 | 2 3 on two places), and parts-many of the
// places get one when there are more.
inline int place_of_part(int part, int parts, int places) {
  return static_cast<int>(static_cast<std::int64_t>(part) * places / parts);
}

inline locus::place hint_of_part(int part, int parts, int places) {
  return locus::place{place_of_part(part, parts, places)};
}

// The parts of a top level, in the order to spawn them: hinted top-level children are queued
// (locus::parent_first), so that a thief takes each and NUMA-WS pushes it to its place at that
// steal; a child run at once would stay with its spawner (a continuation-stealing runtime always
// runs the first spawned child where its parent is). The spawner's wait then pops the part queued
// last itself, so that one is its own place's part (the first part of the place, when it has
// several; the spawn order unchanged when it has none).
template <class PlaceOf, class Spawn>
void each_part_own_last(int parts, const PlaceOf& place_of, const Spawn& spawn) {
  const int here = locus::current_place();
  int own = 0;
  while (own + 1 < parts && place_of(own) != here) ++own;
  if (place_of(own) != here) own = parts - 1;
  for (int i = 1; i <= parts; ++i) spawn((own + i) % parts);
}
// Part k of `parts` on place_of_part(k, parts, places).
template <class Spawn>
void each_part_own_last(int parts, int places, const Spawn& spawn) {
  each_part_own_last(
      parts, [parts, places](int k) { return place_of_part(k, parts, places); }, spawn);
}

// [0, n) cut into `parts` equal parts: the first element of part k.
inline std::size_t part_begin(std::size_t n, int k, int parts) {
  return n * static_cast<std::size_t>(k) / static_cast<std::size_t>(parts);
}

// The parts of [lo, hi) that par_policy's for_range_by_place and reduce_by_place give `places`
// places: the halving tree of parallel_for and parallel_reduce (leaves of at most g elements),
// each node's places halved with it (the left half of the range gets the lower half), down to one
// place per subtree; part k is [bounds[k], bounds[k + 1]). A node of at most g elements that
// still has several places is not split: it goes to its first place, the others get nothing.
inline std::vector<std::int64_t> halving_parts(std::int64_t lo, std::int64_t hi, std::int64_t g,
                                               int places) {
  std::vector<std::int64_t> bounds(static_cast<std::size_t>(places) + 1, hi);
  const auto visit = [&](const auto& self, std::int64_t a, std::int64_t b, int first,
                         int count) -> void {
    if (count == 1 || b - a <= g) {
      for (int k = first; k < first + count; ++k) bounds[static_cast<std::size_t>(k)] = b;
      bounds[static_cast<std::size_t>(first)] = a;
      return;
    }
    const std::int64_t mid = a + (b - a) / 2;
    self(self, a, mid, first, count / 2);
    self(self, mid, b, first + count / 2, count - count / 2);
  };
  visit(visit, lo, hi, 0, places);
  return bounds;
}

// Binds the n elements at p to the run's places in `parts` equal parts, part k on place_of_part.
// The OS binds whole pages, so a page two parts share goes with the later part. Nothing to do
// with one place.
template <class T>
void bind_parts(data_placement& where, T* p, std::size_t n, int parts) {
  const int places = where.num_places();
  if (places < 2 || n == 0) return;
  for (int k = 0; k < parts; ++k) {
    const std::size_t lo = part_begin(n, k, parts), hi = part_begin(n, k + 1, parts);
    if (hi > lo) where.bind(p + lo, (hi - lo) * sizeof(T), place_of_part(k, parts, places));
  }
}

// Part k of an array, [p + bounds[k], p + bounds[k + 1]), on place k (bounds from halving_parts
// for the run's places). Nothing to do with one place.
template <class T>
void bind_bounds(data_placement& where, T* p, const std::vector<std::int64_t>& bounds) {
  if (where.num_places() < 2) return;
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k) {
    if (bounds[k + 1] > bounds[k]) {
      where.bind(p + bounds[k], static_cast<std::size_t>(bounds[k + 1] - bounds[k]) * sizeof(T),
                 static_cast<int>(k));
    }
  }
}

}  // namespace locus_bench::placement
