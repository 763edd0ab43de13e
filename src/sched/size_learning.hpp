// Learned size hints (options::size_hints, LOCUS_SIZE_HINTS=learn|learn-all): the size of a
// task group's working set measured in the program's first iteration and given to the same group
// in later iterations, for every scheduler that reads size_hints (ml-adws, ml-ws, adws), so that
// a program that declares what it touches to the locality model but writes no size_hint is
// scheduled as if it did. The idea is CATS's (seed 002 §3.2: profile the first iteration, name
// tasks by their spawn path, keep what each subtree touches); the size is the distinct bytes of
// the group's subtree (prof/footprint.hpp), which is what a size_hint states.
//
// A group's name mixes the name of the group its creator's work counts towards (the one it is a
// child of, or an open group of its own), its creator's spawn path and its ordinal among the
// groups its creator has started: the core's path alone numbers children
// per group, so the first children of two groups of one task share it, and their own groups
// would share a name. The first iteration is the first root, or the code up to the first
// locus::next_iteration(); runtime::relearn() starts again, and so does a root in which most
// groups had names the profile does not know (a program of another shape).
//
// The core calls it only on spawns that a scheduler policy watches, where a group begins: a
// scheduler that begins no group reads no size, and nothing is learned for it. In the profiled
// iteration every group begins (the policy sees hooks for children it would otherwise leave
// unhooked), so that a group is known in later iterations whatever level it is scheduled at.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "locus/runtime.hpp"
#include "locus/stats.hpp"
#include "prof/footprint.hpp"

namespace locus::detail {

class worker;
struct group_state;

class size_learner {
 public:
  size_learner(size_hint_source source, std::size_t max_records, std::size_t line_bytes,
               int workers);
  ~size_learner();
  size_learner(const size_learner&) = delete;
  size_learner& operator=(const size_learner&) = delete;

  // Group `g` begins on `w` (its first spawn), before the policy's group_begin: it is named,
  // and given its learned size or no size, as the source says. Until it ends, its creator's own
  // work (the part of the parallel region that the creator runs itself, such as the last of
  // its parts run inline) counts towards it.
  void group_begins(worker& w, group_state& g);
  // Group `g`'s wait() has returned, on its creator's stack.
  void group_ends(worker& w, group_state& g) noexcept;
  // Whether the first iteration is being profiled: every group then begins, even those whose
  // children the policy would spawn without hooks.
  bool profiling() const noexcept {
    return phase_.load(std::memory_order_relaxed) == phase::profiling;
  }
  // A root starts or ends on `w`; the task driving an iteration loop ends one (next_iteration).
  void root_begins(worker& w);
  void root_ends(worker& w);
  void iteration_ends(worker& w);
  // Forget what was learned: the next root is another program's first iteration.
  void relearn() noexcept;

  // A declaration by the task running on `w`, while the first iteration is profiled.
  void touched(worker& w, const void* p, std::size_t row_bytes, std::size_t rows,
               std::ptrdiff_t stride);

  std::vector<policy_figure> figures() const;
  size_hint_source source() const noexcept { return source_; }

 private:
  enum class phase : int { fresh, profiling, learned };

  std::uint64_t name_of_new_group(worker& w) noexcept;
  void finish_profiling();

  const size_hint_source source_;
  const std::size_t max_records_, line_bytes_;
  const int workers_;
  std::atomic<phase> phase_{phase::fresh};
  std::unique_ptr<prof::footprint_profile> profile_;
  std::unordered_map<std::uint64_t, std::uint64_t> sizes_;  // frozen after the profile
  const void* profiled_root_ = nullptr;                     // the stack of the root being profiled
  bool metering_ = false;
  std::uint64_t profile_began_ns_ = 0;

  // Per root after the profiled one: lookups, and those of names the profile did not know.
  std::atomic<std::uint64_t> looked_up_{0}, unknown_in_root_{0};

  mutable std::mutex report_lock_;
  struct report {
    std::uint64_t groups = 0, named = 0, recorded = 0, sample_every = 1, profile_ns = 0;
  } report_;
  std::atomic<std::uint64_t> applied_{0}, unknown_{0}, profiles_{0};
};

}  // namespace locus::detail
