// Runs a plan: prepares each benchmark, times every configuration with interleaved repetitions,
// verifies every run, and reports.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli.hpp"

namespace locus {
struct stats;
}

namespace locus_bench {

struct config_result {
  std::string bench;
  configuration config;
  std::string params_json = "{}";  // the values that ran (after prepare's normalisation)
  bool exec_step = false;          // --exec step
  // The configurations of one benchmark and set of parameters run their repetitions in the same
  // rounds (times_s[i] of each in round i) and share this name; empty outside run_benchmark.
  std::string batch;
  // benchmark::work_units, unit and working_set_bytes of those values, when it defines them.
  std::optional<double> work_units, working_set_bytes;
  std::string unit;
  std::vector<double> times_s;    // timed repetitions, in order
  bool verified = true;           // every repetition (warm-up included) verified
  std::string result;             // verdict::result of the last run
  std::string error;              // first failure, if any
  std::string stats_json = "{}";  // locus::stats::to_json() over the timed reps; {} otherwise
  // taskq-mpi on rank 0: every rank's counters in the last timed repetition (tasks, steals sent
  // and served, tasks and bytes moved, idle time); empty (no "ranks" key) otherwise.
  std::string dist_json;
  // --locality: locus::locality_report::to_json() summed over the timed reps, "null" for other
  // implementations; empty (no "locality" key) without --locality.
  std::string locality_json;
  // Derived when the needed configurations ran in the same invocation (see derive_ratios):
  std::optional<double> t1_over_ts;      // 1-worker configurations: work efficiency T1/TS
  std::optional<double> t1_over_tp;      // P-worker configurations: speedup over own 1 worker
  std::optional<double> work_inflation;  // locus: W_P/T1, W_P = busy time of all workers per rep
  double busy_per_rep_s = -1;            // locus: total busy seconds per timed rep; -1 otherwise
  // --workspan, locus only: from one extra, untimed run on a 1-worker runtime of the same
  // scheduler with LOCUS_WORKSPAN on.
  std::optional<double> work_s, span_s, parallelism;

  double median_s() const;
  double min_s() const;
};

double median(std::vector<double> values);

// Fills the derived ratios of every result of one benchmark invocation (same parameters): T1/TS
// against the serial configuration, T1/TP against the same implementation and scheduler on one
// worker, and for locus the work inflation W_P/T1; each against configurations of the same load.
void derive_ratios(std::vector<config_result>& results);

// {"bench":..,"impl":..,"sched":..,"workers":..,"params":{..},"times_s":[..],"median_s":..,
//  "min_s":..,"verified":..,"result":..,"stats":{..}} on one line (no newline). sched is null
// for implementations other than locus; "contend" (the load, as --contend takes it) is added when
// the configuration ran under one, "batch" (config_result::batch) when it has one, "error" when
// verification failed, "locality" when the result has one.
std::string format_json_line(const config_result& r);
// The human-readable table: bench, impl, sched, workers, (contend, when any configuration ran
// under a load), median, min, median / serial median of the same benchmark and load, result.
std::string format_table(const std::vector<config_result>& results);

// Adds the counters and times of `rep` to `into`, worker by worker.
void accumulate(locus::stats& into, const locus::stats& rep);

// Runs the plan; results go to `out` (JSON lines as each benchmark finishes, or the table at the
// end), progress and errors to `log`. Returns 0, or 1 when any run failed verification or threw.
// Throws usage_error for a configuration the runtime rejects (e.g. an unknown --sched), before
// anything is timed.
int execute(const run_plan& plan, std::ostream& out, std::ostream& log);

}  // namespace locus_bench
