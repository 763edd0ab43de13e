// Runs a plan: prepares each benchmark, times every configuration with interleaved repetitions,
// verifies every run, and reports.
#pragma once

#include <iosfwd>
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
  std::vector<double> times_s;     // timed repetitions, in order
  bool verified = true;            // every repetition (warm-up included) verified
  std::string result;              // verdict::result of the last run
  std::string error;               // first failure, if any
  std::string stats_json = "{}";   // locus::stats::to_json() over the timed reps; {} otherwise

  double median_s() const;
  double min_s() const;
};

double median(std::vector<double> values);

// {"bench":..,"impl":..,"sched":..,"workers":..,"params":{..},"times_s":[..],"median_s":..,
//  "min_s":..,"verified":..,"result":..,"stats":{..}} on one line (no newline). sched is null
// for implementations other than locus; "error" is added when verification failed.
std::string format_json_line(const config_result& r);
// The human-readable table: bench, impl, sched, workers, median, min, median / serial median of
// the same benchmark, result.
std::string format_table(const std::vector<config_result>& results);

// Adds the counters and times of `rep` to `into`, worker by worker.
void accumulate(locus::stats& into, const locus::stats& rep);

// Runs the plan; results go to `out` (JSON lines as each benchmark finishes, or the table at the
// end), progress and errors to `log`. Returns 0, or 1 when any run failed verification or threw.
// Throws usage_error for a configuration the runtime rejects (e.g. an unknown --sched), before
// anything is timed.
int execute(const run_plan& plan, std::ostream& out, std::ostream& log);

}  // namespace locus_bench
