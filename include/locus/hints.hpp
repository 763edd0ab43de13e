// Scheduling hints. They steer placement and never affect results: a scheduler that does not
// use a hint ignores it (ws ignores them all).
#pragma once

#include <cstddef>

namespace locus {

// Relative amount of work of a task, or the total of a task group's children (ADWS).
struct work_hint {
  double value = 1.0;
};

// Working-set size in bytes of a task group (multi-level ADWS, CATS).
struct size_hint {
  std::size_t bytes = 0;
};

// A place (a NUMA node, else a package; locus::num_places()) where a task and its descendants
// belong, until one of them names another; any_place clears it. A spawn naming a place the
// runtime does not have throws std::out_of_range.
struct place {
  int id = -1;
};
inline constexpr place any_place{-1};

// Leaf size of parallel_for / parallel_reduce: ranges of at most this many iterations run serially.
struct grain {
  std::size_t value = 1;
};

// Leaf size of a two-dimensional parallel_for: blocks of at most rows x cols iterations run
// serially; a larger block is cut in halves along each dimension that exceeds its grain.
struct grain2d {
  std::size_t rows = 1;
  std::size_t cols = 1;
};

// Bytes of data one iteration of a parallel loop touches: each group of the loop's split then
// carries a size_hint of its iterations times this (the working set that ml-adws, ml-ws and cats
// tie to a cache).
struct item_size {
  std::size_t bytes = 0;
};

// Name of a task in a trace (LOCUS_TRACE): `tg.run(f, locus::label{"solve"})`. The pointer is
// kept, not the text, so it must outlive the runtime (a string literal does). Unlabeled tasks
// are named after their spawn site (the closure's type).
struct label {
  const char* name = nullptr;
};

// Per-spawn request for child stealing (help-first): the child is queued and the parent goes on.
// The default is child-first (work-first): the child runs now and the continuation is stealable.
struct parent_first_t {
  explicit parent_first_t() = default;
};
inline constexpr parent_first_t parent_first{};

}  // namespace locus
