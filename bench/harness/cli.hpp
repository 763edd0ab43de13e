// locus-bench command line: parsing (syntax only) and planning (against the registry).
#pragma once

#include <locus/runtime.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/benchmark.hpp"
#include "harness/contention.hpp"
#include "harness/registry.hpp"

namespace locus_bench {

enum class command { help, list, info, run };

struct cli_options {
  command cmd = command::help;
  std::vector<std::string> benches;  // run: names or "all"; info: one name
  size_class size = size_class::medium;
  std::vector<std::pair<std::string, std::string>> sets;  // key (or bench.key), value
  // --sweep key=v1,v2,...: one plan per value (per combination, with several)
  std::vector<std::pair<std::string, std::vector<std::string>>> sweeps;
  std::vector<impl> impls;          // empty: what each benchmark supports
  std::vector<std::string> scheds;  // empty: {"ws"}
  std::vector<int> workers;         // empty: the available CPUs
  std::vector<contention> loads;    // empty: quiet only
  std::optional<int> reps;          // empty: default_reps(size)
  int warmup = 1;
  bool json = false;
  bool pmu = false;        // --pmu: PMU counters per worker around each repetition (else LOCUS_PMU)
  bool locality = false;   // --locality: run the locality model on every timed locus repetition
  bool workspan = false;   // --workspan: work, span and parallelism from one 1-worker locus run
  bool exec_step = false;  // --exec step: one parallel region per time step
};

// Parses the arguments after the program name. Throws usage_error naming the offending flag and
// the accepted values.
cli_options parse_command_line(const std::vector<std::string>& args);

// Repetitions when --reps is not given: small 3, medium 7, large 5 (large runs take seconds each;
// five keep the median robust without making a suite run take hours).
int default_reps(size_class size) noexcept;

// One measured configuration. sched is empty for every impl but locus; workers is 1 for serial.
struct configuration {
  impl which = impl::serial;
  std::string sched;
  int workers = 1;
  contention load;  // what else runs on the machine meanwhile (--contend)

  std::string label() const;  // "locus/ws/4", "serial", "tbb/4", "tbb/2+contend=1:1000/1000"
};

struct bench_plan {
  const benchmark* bench = nullptr;
  param_values params;
  std::vector<configuration> configs;
};

struct run_plan {
  std::vector<bench_plan> benches;
  // The locus-bench binary whose `load` command --contend starts (tests name the built one).
  std::string load_executable = "/proc/self/exe";
  size_class size = size_class::medium;
  int reps = 7;
  int warmup = 1;
  bool json = false;
  bool pmu = false;
  bool locality = false;
  bool workspan = false;
  bool exec_step = false;
};

// The locus settings the LOCUS_* variables select, checked as a locus runtime checks them
// (locus::resolve_options) even where locus-bench's own flags decide instead. Throws usage_error
// naming the variable and its accepted values.
locus::options environment_settings();

// Checks the LOCUS_* variables (environment_settings) and resolves benchmark names, --set keys and
// values (rejecting unknown keys with the benchmark's list), implementations and the
// configuration list; LOCUS_SCHED is the default of --sched. Throws usage_error.
run_plan make_plan(const cli_options& opts, const registry& reg, int default_workers);

// The help text.
std::string usage();
// `locus-bench info BENCH`: description, implementations, parameters with per-size defaults.
std::string describe(const benchmark& b);

}  // namespace locus_bench
