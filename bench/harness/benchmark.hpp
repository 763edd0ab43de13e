// The benchmark interface of locus-bench: what a benchmark file declares about itself and the
// instance object the harness times.
//
// A benchmark is a descriptor (name, description, documented parameters with per-size defaults,
// supported implementations) plus a prepare() function that turns resolved parameter values into
// an instance. The harness then, for every configuration and repetition:
//
//   inst->reset();                          // untimed: restore inputs a previous run consumed
//   t0 = now(); region([&] { inst->run(ctx); }); t1 = now();   // timed
//   inst->verify();                         // untimed: check the result of that run
//
// where `region` is the implementation's parallel region: nothing for serial, runtime::exec for
// locus, task_arena::execute for oneTBB, `omp parallel` + `omp single` for OpenMP. run() is
// therefore already inside the region and only spawns tasks (task_group, tbb::task_group,
// omp task).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace locus {
class runtime;
}

namespace locus_bench {

class data_placement;

// Bad command line or parameter value: the message names the flag or key and the accepted values.
// locus-bench prints it and exits with status 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Implementations a benchmark may provide. serial is the serial elision (no runtime at all);
// taskq is the same locus runtime programmed through locus::taskq (HotSLAW's task-queue API);
// taskq_mpi ("taskq-mpi") is locus::dist_taskq across the ranks of an MPI job (a locus runtime
// per rank; builds with MPI only; docs/distributed.md); tao is the same locus runtime programmed
// with task assemblies (locus/assembly.hpp, seed 003), usually under --sched tao.
enum class impl { serial, locus, tbb, omp, taskq, taskq_mpi, tao };

inline constexpr std::array<impl, 7> all_impls{impl::serial, impl::locus,     impl::tbb, impl::omp,
                                               impl::taskq,  impl::taskq_mpi, impl::tao};

// Whether the implementation runs on a locus runtime (and so has a scheduler and locus stats).
constexpr bool uses_locus_runtime(impl i) noexcept {
  return i == impl::locus || i == impl::taskq || i == impl::taskq_mpi || i == impl::tao;
}

std::string_view to_string(impl i) noexcept;
std::optional<impl> parse_impl(std::string_view s) noexcept;
// Whether this build contains the implementation (tbb and omp need LOCUS_BENCH_PEERS).
bool impl_compiled(impl i) noexcept;

// Problem sizes: each parameter has one default per size.
enum class size_class { small, medium, large };
std::string_view to_string(size_class s) noexcept;
std::optional<size_class> parse_size(std::string_view s) noexcept;

// A documented parameter, settable with --set key=value.
struct param_spec {
  enum class kind { integer, real, choice };
  std::string name;
  std::string description;
  kind type = kind::integer;
  std::array<std::string, 3> defaults;  // indexed by size_class
  // integer and real: inclusive range; choice: the accepted values.
  double min = 0, max = 0;
  std::vector<std::string> choices;

  static param_spec integer(std::string name, std::string description,
                            std::array<std::string, 3> defaults, std::int64_t min,
                            std::int64_t max);
  static param_spec real(std::string name, std::string description,
                         std::array<std::string, 3> defaults, double min, double max);
  static param_spec choice(std::string name, std::string description,
                           std::array<std::string, 3> defaults, std::vector<std::string> choices);

  // Throws usage_error naming `context` (e.g. "--set fib.n") when value is not acceptable.
  void validate(std::string_view value, std::string_view context) const;
  // What the value may be, for messages and `locus-bench info`: "integer in [1, 16]" ...
  std::string accepted() const;
};

// Resolved parameter values of one benchmark run, in declaration order. Values are stored as
// validated text; numbers are emitted as JSON numbers, choices as strings.
class param_values {
 public:
  struct entry {
    std::string name;
    std::string value;
    param_spec::kind type = param_spec::kind::integer;
    bool from_user = false;  // given with --set rather than a size default
  };

  void set(std::string name, std::string value, param_spec::kind type, bool from_user = false);
  void erase(std::string_view name);
  bool contains(std::string_view name) const noexcept;
  bool user_set(std::string_view name) const noexcept;
  const std::string& text(std::string_view name) const;  // throws std::out_of_range if absent
  std::int64_t integer(std::string_view name) const;
  double real(std::string_view name) const;
  const std::vector<entry>& entries() const noexcept { return entries_; }
  std::string to_json() const;  // {"n":30,"tree":"T1"}

 private:
  std::vector<entry> entries_;
};

// Passed to instance::run.
struct run_context {
  impl which = impl::serial;
  int workers = 1;  // 1 for serial
  // The places the run's place hints may name (runtime::num_places() for locus, 1 otherwise):
  // benchmarks that hint places split their top level by place only when there are several, so
  // that the serial elision and a one-place run have the same task tree.
  int places = 1;
  // --exec step: the harness calls run() outside the implementation's parallel region and this
  // enters the region once per time step (a locus exec, a oneTBB arena execute, an OpenMP
  // parallel region), as a serial time loop of the user's would; empty otherwise. Benchmarks
  // with `steps` run each step through step().
  std::function<void(const std::function<void()>&)> each_step{};
  void step(const std::function<void()>& f) const {
    if (each_step) {
      each_step(f);
    } else {
      f();
    }
  }
};

struct verdict {
  bool ok = false;
  std::string result;   // what was computed, e.g. "832040" or "nodes=4130071 leaves=... depth=10"
  std::string message;  // why it failed (empty when ok)
};

// One prepared problem. Instances are reused across all configurations and repetitions of a
// benchmark invocation, one run at a time.
class instance {
 public:
  instance() = default;
  instance(const instance&) = delete;
  instance& operator=(const instance&) = delete;
  virtual ~instance() = default;

  // Untimed, before every run: restore whatever a previous run consumed or overwrote.
  virtual void reset() {}
  // Untimed, after reset() and before every locus run: put the data where the run's place hints
  // send its tasks, through `where` (the run's runtime's places). Bindings are per runtime (the
  // locality model counts those of its session's runtime) and end with the run, hence once per
  // run, not once per instance.
  virtual void place(data_placement& where) { (void)where; }
  // Timed: compute the result with ctx.which. Called inside that implementation's parallel
  // region (see the file comment); must leave its result for verify().
  virtual void run(const run_context& ctx) = 0;
  // Untimed: check the result of the last run.
  virtual verdict verify() const = 0;
  // Untimed, after a taskq-mpi run, on every rank (collective): the ranks' counters of that run
  // as a JSON array on rank 0 (harness/dist_stats.hpp), empty elsewhere and for other runs.
  virtual std::string dist_stats_json() { return {}; }
};

struct benchmark {
  std::string name;
  std::string description;
  std::vector<param_spec> params;
  std::vector<impl> impls;  // supported and compiled in; serial first
  // Also supported, but run only when --impl names them: what a run without --impl (the main
  // job's) compares stays the same.
  std::vector<impl> on_request;
  // Its run() is a loop of time steps, each through run_context::step (--exec step).
  bool steps = false;
  // Optional: rejects combinations of individually valid values (throwing usage_error). Called
  // when the command line is planned, before anything runs, so it must be cheap.
  std::function<void(const param_values& params)> check;
  // Builds the input. May normalise `params` to the values that actually run (they are what the
  // JSON output records). Throws usage_error for parameters check() would reject.
  std::function<std::unique_ptr<instance>(param_values& params)> prepare;
  // Optional, for size sweeps (--sweep; "work_units", "unit" and "working_set_bytes" in the
  // JSON): how many elementary updates one run makes (named by `unit`, e.g. "cell update"), so
  // that runs of different sizes compare per unit, and the bytes one pass over the data touches,
  // to place a size against the caches.
  std::function<double(const param_values& params)> work_units;
  std::string unit;
  std::function<double(const param_values& params)> working_set_bytes;

  const param_spec* find_param(std::string_view key) const noexcept;
  bool supports(impl i) const noexcept;
  // Defaults for a size; no validation beyond the specs' own.
  param_values defaults(size_class size) const;
};

}  // namespace locus_bench
