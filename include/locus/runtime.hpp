// locus::runtime: a pool of workers running one scheduler policy on one topology.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "locus/detail/spawn.hpp"
#include "locus/stats.hpp"

namespace locus {

// Rejected configuration. The message names the variable (or option) and the accepted values.
class config_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Where the size of a task group's working set (locus::size_hint) comes from, for the schedulers
// that tie groups to caches by it (ml-adws, ml-ws, adws's flattening; cats profiles by it).
enum class size_hint_source : std::uint8_t {
  given,      // the program's size_hints; a group without one has no size
  learn,      // the program's where it gives one; learned from the first iteration elsewhere
  learn_all,  // learned for every group: the program's size_hints are ignored
  none,       // no sizes at all: the program's size_hints are ignored
};

// Explicit settings win; unset ones come from the environment (LOCUS_*), then the defaults.
struct options {
  std::optional<std::string> sched{};  // LOCUS_SCHED: ws (default)
  std::optional<int> workers{};        // LOCUS_WORKERS: default = PUs the process may use
  // LOCUS_TOPOLOGY: an hwloc synthetic description; "" is this machine, whatever the variable says
  std::optional<std::string> topology{};
  std::optional<std::size_t> stack_size{};  // LOCUS_STACK_SIZE: bytes per user-level thread
  std::optional<bool> stats_at_exit{};      // LOCUS_STATS
  std::optional<bool> print_config{};       // LOCUS_PRINT_CONFIG
  std::optional<bool> pmu{};                // LOCUS_PMU: per-worker PMU counters in stats()
  // LOCUS_LOCALITY: record locality declarations for the whole run and print the model's report
  // at exit (locus/locality.hpp)
  std::optional<bool> locality{};
  std::optional<std::size_t> locality_line{};  // LOCUS_LOCALITY_LINE: modeled line size in bytes
  // LOCUS_TRACE: write a Chrome/Perfetto trace JSON to this path when the runtime is destroyed
  // (docs/tracing.md); empty = no trace
  std::optional<std::string> trace{};
  // LOCUS_WORKSPAN: measure work, span and parallelism (needs exactly one worker); see
  // runtime::workspan()
  std::optional<bool> workspan{};
  // LOCUS_SIZE_HINTS: given (default), learn, learn-all, none. Learning measures, in the first
  // iteration, the distinct bytes each task group's tasks declare to the locality model
  // (locus/locality.hpp), and gives the group that size in later iterations.
  std::optional<size_hint_source> size_hints{};
  // LOCUS_SIZE_HINTS_SAMPLES: at most this many cache lines recorded while learning (16 bytes
  // each); past it, lines are sampled by address (the figure `learn_sample_every`).
  std::optional<std::size_t> size_hint_samples{};
};

// The configuration a runtime constructed with `opts` would run with, resolved as its
// constructor resolves it (explicit options, then LOCUS_* variables, then defaults) but without
// starting one, so that a tool can reject a bad environment before doing anything else. Throws
// config_error, naming the option or variable and its accepted values, for every value the
// constructor rejects on its own; not for what only a starting runtime can check (more workers
// than processing units, LOCUS_WORKSPAN with several workers, the trace file, a scheduler's own
// variables such as LOCUS_ADWS_STEAL). Unset in the result where the runtime falls back on the
// machine or nothing: workers (the topology's default), topology (this machine), locality_line
// (the topology's line size) and trace (none).
options resolve_options(const options& opts = {});

namespace detail {
class runtime_impl;
runtime_impl* current_runtime() noexcept;
}  // namespace detail

class runtime {
 public:
  runtime();  // everything from the environment
  explicit runtime(const options& opts);
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
  ~runtime();

  // Runs f on a worker of this runtime and returns its result (or rethrows its exception);
  // from inside one of this runtime's tasks it simply calls f. A thread outside the runtime
  // takes the place of a sleeping worker for the call and runs f itself, the other workers
  // stealing from it, as oneTBB's and OpenMP's calling threads do; when that worker is awake
  // (or the runtime counts PMU events per worker thread) f runs on the workers and the caller
  // blocks until it ends.
  template <class F>
  std::invoke_result_t<F&> exec(F&& f) {
    using R = std::invoke_result_t<F&>;
    static_assert(!std::is_reference_v<R>, "runtime::exec: f must return a value or void");
    if (detail::current_runtime() == impl_.get()) return f();
    detail::root_outcome<R> outcome;
    run_root(std::make_unique<detail::root_task<std::remove_reference_t<F>, R>>(f, outcome),
             outcome.signal);
    if (outcome.error) std::rethrow_exception(outcome.error);
    if constexpr (!std::is_void_v<R>) return std::move(*outcome.value);
  }

  int num_workers() const noexcept;
  // Places: the NUMA nodes of the topology the workers run on (its packages when it has one NUMA
  // node but several packages; else 1). Workers are spread evenly over them.
  int num_places() const noexcept;
  // The place of worker `worker` (0 .. num_workers() - 1).
  int place_of_worker(int worker) const;
  const std::string& scheduler() const noexcept;
  // The effective configuration, one `key = value` per line (what LOCUS_PRINT_CONFIG prints).
  std::string describe() const;
  locus::stats stats() const;
  void reset_stats();
  // The roots that follow belong to another program: schedulers that learn from a program's
  // first iteration (cats), and learned size hints, learn again from the next root. Call it between
  // roots, as a harness that runs several programs on one runtime does.
  void relearn();
  // PMU counting (options::pmu / LOCUS_PMU=1; no-ops otherwise): start resets every worker's
  // counters and enables them, stop disables them. stats() reports what was counted in between,
  // so that the region measured is the caller's, not the whole process.
  void pmu_start();
  void pmu_stop();
  // Work and span of the roots run since construction or the last reset_stats(); nullopt
  // unless the runtime measures them (options::workspan, LOCUS_WORKSPAN=1).
  std::optional<workspan_result> workspan() const;

  detail::runtime_impl& impl() noexcept { return *impl_; }

 private:
  // Runs `root` and returns once it has ended: on the calling thread, in the seat of a worker
  // whose own thread sleeps (runtime_impl::run_seated), else on the workers while the caller
  // blocks.
  void run_root(std::unique_ptr<detail::task_base> root, detail::root_signal& signal);
  std::unique_ptr<detail::runtime_impl> impl_;
};

// The runtime created on first use from the environment, destroyed at exit.
runtime& default_runtime();

// Runs f on the default runtime (or inline when already on a worker).
template <class F>
std::invoke_result_t<F&> root_exec(F&& f) {
  if (detail::current_runtime() != nullptr) return f();
  return default_runtime().exec(std::forward<F>(f));
}

// Index of the calling worker in its runtime, or -1 on a thread that is not a worker.
int this_worker() noexcept;
// The place hint the calling task carries: the locus::place given to its spawn, or else its
// parent's, up to the root; -1 when none was given or locus::any_place cleared it, and on a
// thread that is not a worker. Every scheduler carries it; those that place work by it use it.
int this_task_place() noexcept;
// A 48-bit name of the calling task's position in the fork tree: the root's is fixed, and a
// child's mixes its parent's with its ordinal among the children spawned into its task group
// (counted from the group's creation: a group reused after wait() goes on counting). A program
// that repeats the same forks with groups of its own (an iteration of a loop of parallel_for, say)
// repeats the same names, whichever workers run them. 0 on a thread that is not a worker.
std::uint64_t this_task_path() noexcept;
// Marks the end of one iteration of the program's outer loop, for code that runs all its
// iterations inside one root (one exec): call it from the code that drives the loop, after the
// iteration's joins. Schedulers that learn from the first iteration (cats; learned size hints)
// take it as the end of that iteration, and an open locality session (locus/locality.hpp) counts
// it as locality::next_iteration does. A root run by exec is an iteration without it. Does
// nothing on a thread that is not a worker, apart from the locality session.
void next_iteration() noexcept;
// Number of workers of the runtime the caller runs on (the default runtime's otherwise).
int num_workers();
// Number of places of the runtime the caller runs on (the default runtime's otherwise).
int num_places();
// The place of the worker the caller runs on, or -1 on a thread that is not a worker.
int current_place() noexcept;

}  // namespace locus
