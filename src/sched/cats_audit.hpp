// Test hooks of cats (seed 002): what it decides, reported as it happens, and a replacement for
// the hardware counters it profiles with. Off (one relaxed load) unless installed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "prof/perf_event.hpp"
#include "sched/cats_profile.hpp"

namespace locus::detail {

struct cats_event {
  enum class what : std::uint8_t {
    task_begin,     // a task of the inter-socket tier (inter or leaf) begins, after profiling
    subtree_begin,  // a leaf inter-socket task takes its package's subtree slot
    subtree_end,    // and gives it back
    search,  // a worker is about to try a random steal (profiling, or as ws); package, path 0
  };
  what kind = what::task_begin;
  int worker = 0;
  int package = 0;
  std::uint64_t path = 0;
  cats::tier tier = cats::tier::unknown;
};

using cats_observer = void (*)(const cats_event&);
// Installs `observer` for every runtime in the process (null removes it). It runs on the worker
// that decides, inside the scheduler.
void set_cats_observer(cats_observer observer) noexcept;

// The line size cats multiplies misses by.
inline constexpr std::uint64_t cats_line_bytes = 64;
// Replaces the measurement of the profiling iteration: the private last-level cache misses of
// the task at `path`, its own and not its children's, as if the PMU had counted them. Install
// before the runtime's first root.
using cats_miss_source = std::uint64_t (*)(std::uint64_t path);
void set_cats_miss_source(cats_miss_source source) noexcept;
// Replaces the instructions counted with the misses: the task's own, as if the PMU had counted
// them (CPU-bound detection, §3.5). Install before the runtime's first root.
using cats_instruction_source = std::uint64_t (*)(std::uint64_t path);
void set_cats_instruction_source(cats_instruction_source source) noexcept;
// Replaces the PMU event cats counts per worker (this CPU's private L2 misses) by `event`, which
// must outlive the runtimes that profile with it: a software event stands in where the machine
// has no PMU, through the same perf_event path. Null restores the L2 misses.
void set_cats_pmu_event(const prof::event_spec* event) noexcept;

}  // namespace locus::detail
