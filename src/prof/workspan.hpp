// Work and span of a one-worker run (LOCUS_WORKSPAN=1), measured like OpenCilk's Cilkscale.
//
// Each running task has a frame: its work so far and the span of the path that ends at its
// current strand (prefix); each of its task groups with children not yet joined has the longest
// path through one of those children. A strand
// is the code between two of the boundaries a task crosses (spawn, a child's return, join); its
// duration, read from a cheap clock at those boundaries, adds to both work and prefix. A child's
// return adds its work to the parent and offers prefix-at-spawn + child span as a path; a join
// of that group makes the prefix the longest of its paths (groups, not tasks, are locus's sync
// scope: a join leaves the other groups' children unjoined). The serial (one-worker) run makes
// every frame boundary happen on one thread in the program's serial order.
#pragma once

#include <cstdint>
#include <vector>

#include "locus/stats.hpp"

namespace locus::prof {

class workspan_meter {
 public:
  workspan_meter();

  // A task (child-first child, queued task or root) starts: the running strand ends.
  void task_begin() noexcept;
  // The running task, a child of `group` (or a root), returns: its frame folds into its
  // parent's (or, for a root, into the totals).
  void task_end(const void* group) noexcept;
  // Task group `group` joins its children.
  void join(const void* group) noexcept;

  workspan_result result() const;
  void reset() noexcept;

 private:
  struct frame {
    std::uint64_t work = 0;
    std::uint64_t prefix = 0;
  };
  // Longest path through the returned, unjoined children of one group of frame `depth`.
  struct open_group {
    const void* group;
    std::size_t depth;
    std::uint64_t longest;
  };
  // Adds the strand that ran since the last boundary to the innermost frame.
  void close_strand(std::uint64_t now) noexcept;

  std::vector<frame> frames_;
  std::vector<open_group> groups_;  // innermost last
  std::uint64_t strand_start_ = 0;
  std::uint64_t work_ = 0, span_ = 0;  // over the roots that finished, in clock ticks
  std::uint64_t roots_ = 0;
  std::uint64_t origin_ticks_, origin_ns_;  // for converting ticks to seconds
};

}  // namespace locus::prof
