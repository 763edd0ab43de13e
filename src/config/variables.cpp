#include "config/variables.hpp"

#include <algorithm>
#include <array>

namespace locus::config {
namespace {

// Booleans go through parse_bool, which also takes an empty value (as 0).
constexpr std::string_view boolean = "0, 1, false, true, no, yes, off, on";

// A new entry needs its row in docs/guide.md's table, with the same texts (backticks aside);
// tests/variables_doc_test.cpp compares them.
constexpr std::array table{
    // The runtime (src/config/config.cpp), for every scheduler.
    variable{"LOCUS_SCHED", "all", "ws, adws, ml-adws, ml-ws, numa-ws, hws, cats, tao", "ws",
             "the scheduler of every runtime the process creates"},
    variable{"LOCUS_WORKERS", "all", "1 .. the PUs of the topology",
             "the PUs the process may run on, capped by its cgroup CPU quota", "worker threads"},
    variable{"LOCUS_TOPOLOGY", "all",
             "an hwloc synthetic description, e.g. pack:2 l3:1(size=32MB) l2:8(size=1MB) core:1 "
             "pu:1",
             "this machine (hwloc)",
             "a machine to model instead of this one; its workers are not pinned"},
    variable{"LOCUS_STACK_SIZE", "all", "bytes with an optional K, M or G suffix, 16K .. 1G",
             "256K", "the stack of each task, above a guard page"},
    variable{"LOCUS_STATS", "all", boolean, "0",
             "print the statistics (rt.stats()) when the runtime is destroyed"},
    variable{"LOCUS_PRINT_CONFIG", "all", boolean, "0",
             "print the effective configuration (rt.describe()) when the runtime starts"},
    variable{"LOCUS_PMU", "all", boolean, "0",
             "per-worker PMU counters in rt.stats(), between rt.pmu_start() and rt.pmu_stop()"},
    variable{"LOCUS_LOCALITY", "all", boolean, "0",
             "record the tasks' locality declarations and print the model's report at exit"},
    variable{"LOCUS_LOCALITY_LINE", "all", "a power of two, 8 .. 4096 (bytes)",
             "the topology's line size, else 64", "line size of the locality model's caches"},
    variable{"LOCUS_TRACE", "all", "a writable file path; empty: no trace", "no trace",
             "write a Chrome/Perfetto trace to this file when the runtime is destroyed"},
    variable{"LOCUS_WORKSPAN", "all", boolean, "0",
             "measure work, span and parallelism (rt.workspan()); needs LOCUS_WORKERS=1"},
    variable{"LOCUS_SIZE_HINTS", "adws, ml-adws, ml-ws, cats", "given, learn, learn-all, none",
             "given",
             "where a group's size_hint comes from: the program's, learned from the first "
             "iteration, or none"},
    variable{"LOCUS_SIZE_HINTS_SAMPLES", "adws, ml-adws, ml-ws, cats", "1024 .. 1073741824",
             "4194304",
             "cache lines recorded at most while learning sizes; past it, lines are sampled"},
    // The schedulers' own (src/sched/*.cpp), read when a runtime with that scheduler starts.
    variable{"LOCUS_WS_JOIN", "ws", "auto, home, thief", "auto",
             "where a task whose continuation was stolen goes on after its join: back on its "
             "victim if idle (home), or on the thief (Cilk-5); auto: home with 2 workers, thief "
             "with more"},
    variable{"LOCUS_WS_LONE_WAIT_US", "ws", "0 .. 1000000 (microseconds)", "5",
             "with the hand-back at joins (LOCUS_WS_JOIN): how long a thief leaves a victim's "
             "only item, a continuation, to it while a region whose continuation was stolen is "
             "still open; 0: it takes it at once, as in Cilk-5"},
    variable{"LOCUS_ADWS_STEAL", "adws, ml-adws", boolean, "1",
             "0 turns stealing off: the deterministic plan alone (for testing)"},
    variable{"LOCUS_ADWS_PATIENCE", "adws, ml-adws", boolean, "1",
             "1: a worker that runs out of work waits before its first steal within a group with "
             "a size hint, about as long as moving a part of the group's data (at most one "
             "cache's worth, and of a worker's share of the group larger than its cache only "
             "the cache's proportion) would take and at most as long as its own part took "
             "(src/sched/steal_patience.hpp); 0: it steals at once, as in the paper"},
    variable{"LOCUS_NUMA_WS_WEIGHTS", "numa-ws",
             "three non-negative numbers local,neighbour,remote, not all 0", "8,2,1",
             "how likely a thief picks a victim in its place, a neighbouring one, a remote one"},
    variable{"LOCUS_NUMA_WS_THRESHOLD", "numa-ws", "1 .. 1000", "4",
             "mailboxes a push tries before the task runs where it is"},
    variable{"LOCUS_HWS_QUEUE_BOUND", "hws", "1 .. 1048576", "40",
             "items a worker's queue holds before its spawns run serially"},
    variable{"LOCUS_HWS_ATTEMPTS", "hws",
             "up to one comma-separated entry per level, nearest first: 0 .. 1000000 or auto; not "
             "all 0",
             "auto: the workers at that level, 4 log2(workers) at the top",
             "victims tried at each topology level that has other workers"},
    variable{"LOCUS_HWS_CHUNKS", "hws",
             "up to one comma-separated entry per level: 1 .. 1000000, half or auto",
             "auto: 1 inside the top level, half at it", "items taken per steal at each level"},
    variable{"LOCUS_CATS_SOURCE", "cats", "auto, misses, hints, declared", "auto",
             "where footprints come from: PMU misses, size_hints, bytes declared to the locality "
             "model"},
    variable{"LOCUS_CATS_BOUND", "cats", "auto, memory, cpu", "auto",
             "memory-bound programs are partitioned, CPU-bound ones run as ws; auto measures"},
    variable{"LOCUS_CATS_CMPI", "cats", "a positive number", "0.002",
             "private-cache misses per instruction below which a task is CPU-bound"},
    variable{"LOCUS_CATS_CACHE", "cats", "bytes with an optional K, M or G suffix, 1 .. 1024G",
             "the largest cache shared by all workers of a package",
             "the cache size the partition cuts the task tree at"},
    variable{"LOCUS_CATS_PROFILE_TASKS", "cats", "1 .. 67108864", "262144",
             "tasks the profiled iteration records; deeper ones count towards their ancestor"},
    variable{"LOCUS_TAO_STEAL", "tao", boolean, "1",
             "0 turns stealing of tasks off: work spreads only through assemblies"},
    // The distributed taskq (src/dist/dist_config.cpp), read when a queue is created.
    variable{"LOCUS_DIST_STEAL", "dist_taskq", "half, one, or a task count 1 .. 1048576", "half",
             "tasks a steal across ranks takes"},
    variable{"LOCUS_DIST_POOL", "dist_taskq", "1 .. 1048576", "4096",
             "queued tasks per rank kept migratable"},
    variable{"LOCUS_DIST_NODE_SIZE", "dist_taskq", "1 .. 1048576",
             "unset: ranks on one host share a node",
             "ranks per node to assume: r and r' share one when r / N == r' / N"},
    variable{"LOCUS_DIST_DELAY_US", "dist_taskq", "0 .. 1000000", "0",
             "test hook: a random delay up to this many microseconds before each message"},
    // The scripts in tools/ (each documents its own in its --help).
    variable{"LOCUS_JOBS", "tools/main-job, tools/test-all", "a positive integer",
             "the number of CPUs", "build parallelism"},
    variable{"LOCUS_SKIP_DEPS", "tools/deps, tools/main-job, tools/test-all", "1", "unset",
             "do not check the distribution packages"},
    variable{"LOCUS_DEPS_EXTRA", "tools/deps", "space-separated package names", "none",
             "extra packages to require"},
    variable{"LOCUS_MAIN_BENCHES", "tools/main-job",
             "space-separated entries BENCH[:key=value,...]",
             "all uts:tree=T3 (S3 with --size small, T3L with --size large)",
             "what to run, one locus-bench invocation per entry"},
    variable{"LOCUS_TEST_STAGES", "tools/test-all", "release, tsan, asan, space-separated",
             "release tsan asan", "the stages to run, in this order"},
    variable{"LOCUS_TEST_JOBS", "tools/test-all", "a positive integer", "2", "ctest parallelism"},
    variable{"LOCUS_TEST_TIMEOUT", "tools/test-all", "seconds", "600", "default per-test timeout"},
};

constexpr bool well_formed() {
  for (std::size_t i = 0; i < table.size(); ++i) {
    const variable& v = table[i];
    if (!v.name.starts_with("LOCUS_")) return false;
    // A '|' would split the guide's table cell.
    for (const std::string_view s : {v.applies_to, v.accepted, v.default_value, v.meaning}) {
      if (s.empty() || s.find('|') != std::string_view::npos) return false;
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (table[j].name == v.name) return false;
    }
  }
  return true;
}
static_assert(well_formed(), "every entry: a unique LOCUS_ name and four non-empty texts, no '|'");

}  // namespace

std::span<const variable> variables() noexcept {
  return table;
}

const variable* find_variable(std::string_view name) noexcept {
  const auto it = std::find_if(table.begin(), table.end(),
                               [name](const variable& v) { return v.name == name; });
  return it == table.end() ? nullptr : &*it;
}

}  // namespace locus::config
