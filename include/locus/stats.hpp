// Per-worker scheduling statistics (busy / idle / overhead as defined in ADWS §6.1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace locus {

// One PMU counter of one worker (or a sum) over the measured region, LOCUS_PMU=1 only. A counter
// the kernel refused has no value and says why: a count of 0 always means "counted, none".
struct pmu_value {
  std::string name;   // instructions, cycles, l1d_misses, l2_misses, llc_misses, task_clock_ns
  std::string event;  // what was opened for it, e.g. "hardware cache L1D read miss"
  std::optional<std::uint64_t> value;  // scaled by enabled / running time when multiplexed
  std::string unavailable;             // the reason when there is no value
  std::uint64_t enabled_ns = 0;        // time the counter was enabled while the thread ran
  std::uint64_t running_ns = 0;        // of which it was on the PMU (less when multiplexed)

  bool available() const noexcept { return value.has_value(); }
  // running / enabled: 1 = counted the whole time; below 1 the value is an extrapolation.
  double running_ratio() const noexcept;
  // The number, or "unavailable: <reason>".
  std::string text() const;
};

struct worker_stats {
  int worker = 0;
  // busy: running tasks (user code, including the spawn and join fast paths inside them);
  // idle: looking for work with an empty local queue; overhead: the rest of the scheduler loop
  // (taking a found item, stack set-up, resuming it, releasing finished stacks).
  double busy_s = 0, idle_s = 0, overhead_s = 0;
  std::uint64_t spawns = 0;  // child-first, parent-first and serial spawns
  // Of which serial: the child ran as a plain call on its parent's stack and nothing became
  // stealable (a policy's spawn_decision::serial, e.g. hws when the worker's queue is full).
  std::uint64_t serial_spawns = 0;
  std::uint64_t suspensions = 0;    // joins that had to suspend the waiting task
  std::uint64_t local_resumes = 0;  // own continuations taken back by the scheduler loop
  // Queued tasks started on the context of the queued task that ran before them, found by the
  // search at its end without going back to the scheduler loop.
  std::uint64_t chained_tasks = 0;
  std::uint64_t sleeps = 0;      // times the worker went to sleep
  std::uint64_t wakeups = 0;     // of which another worker woke it (the others timed out)
  std::uint64_t pushes = 0;      // items this worker sent to another one (policies that push)
  std::uint64_t migrations = 0;  // tasks this worker moved to another one at a group's end
  // Times this worker, pinned, let the OS run it on any PU of its place because a worker's PU was
  // contended (it waited to run over a quarter of the time), until the contention ended.
  std::uint64_t cpu_unbinds = 0;
  // Times a thread calling exec from outside, about to run its root in this worker's seat, found
  // itself on another pinned worker's PU and was moved to this worker's PU (seat worker only).
  std::uint64_t caller_moves = 0;
  std::uint64_t stolen_items = 0;  // items its steals took (a steal may take several)
  std::uint64_t lost_races = 0;    // failed steals that found an item another worker took first
  // Indexed by topology distance level between thief and victim (0 = same PU ... depth of the
  // machine tree; stats::level_names names them): successful steals (each took one item or
  // more) and failed ones.
  std::vector<std::uint64_t> steals_by_level;
  std::vector<std::uint64_t> failed_steals_by_level;
  // Items the successful steals at each level took (over steals_by_level: items per steal).
  std::vector<std::uint64_t> stolen_items_by_level;
  // Empty unless the runtime counts with the PMU (LOCUS_PMU=1, options::pmu).
  std::vector<pmu_value> pmu;

  // Successful and failed steals at every distance level together.
  std::uint64_t steals() const noexcept;
  std::uint64_t failed_steals() const noexcept;

  // Adds the times and counters of `other` (the worker index is left as it is). A PMU counter
  // unavailable on either side stays unavailable in the sum.
  worker_stats& operator+=(const worker_stats& other);
};

// Work, span and parallelism of the roots run since the last reset_stats(), measured on one
// worker (LOCUS_WORKSPAN=1, options::workspan; see docs/tracing.md). Times include the
// measurement's own overhead, as Cilkscale's do.
struct workspan_result {
  double work_s = 0;  // T1: the sum of every strand's duration
  double span_s = 0;  // T∞: the longest chain of strands that depend on one another
  std::uint64_t roots = 0;
  // work / span: the speedup no number of workers can exceed on this program.
  double parallelism() const noexcept { return span_s > 0 ? work_s / span_s : 0; }
};

// One figure a scheduler reports about its own decisions (e.g. what CATS learned from the
// program's first iteration): a name and a number.
struct policy_figure {
  std::string name;
  double value = 0;
};

struct stats {
  std::string scheduler;
  // The kind of machine-tree object where a thief and a victim at each distance level meet, e.g.
  // {"pu", "core", "L2", "L3", "package", "machine"}: one name per steals_by_level entry (see
  // topo::topology::level_names for trees that are not uniform). "steal_levels" in to_json().
  std::vector<std::string> level_names;
  std::vector<worker_stats> workers;
  std::uint64_t suppressed_exceptions = 0;
  // Children that did not run because their task group was cancelling (task_group::cancel(), a
  // sibling's exception, or an enclosing group's cancellation): dropped at run() or skipped when
  // taken from a queue.
  std::uint64_t canceled_tasks = 0;
  // The scheduler's own figures ("policy" in to_json()), empty for most.
  std::vector<policy_figure> policy;

  worker_stats total() const;  // sums (worker = -1)
  std::string to_json() const;
  std::string to_text() const;  // the table LOCUS_STATS=1 prints at exit
};

}  // namespace locus
