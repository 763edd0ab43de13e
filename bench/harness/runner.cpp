#include "harness/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include <unistd.h>

#include <locus/locality.hpp>
#include <locus/runtime.hpp>
#include <locus/stats.hpp>

#include "harness/contention.hpp"
#include "harness/data_placement.hpp"
#include "harness/json.hpp"
#include "harness/platform.hpp"
#include "harness/quiesce.hpp"
#include "harness/regions.hpp"
#include "harness/run_order.hpp"

namespace locus_bench {

namespace {

using clock = std::chrono::steady_clock;

double seconds_since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

// The name of one run_benchmark call's rounds, which every configuration of it carries: unique
// in the process, and across processes (its id and start time) so that a report reading several
// invocations' output pairs only repetitions that ran in the same round.
std::string next_batch_name() {
  static const std::string process =
      std::to_string(::getpid()) + "-" +
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count());
  static int count = 0;
  return process + "-" + std::to_string(++count);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A duration for people: 12.3 us, 4.56 ms, 1.234 s.
std::string human_time(double seconds) {
  char buf[64];
  if (seconds < 1e-3) {
    std::snprintf(buf, sizeof buf, "%.1f us", seconds * 1e6);
  } else if (seconds < 1) {
    std::snprintf(buf, sizeof buf, "%.2f ms", seconds * 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3f s", seconds);
  }
  return buf;
}

// PMU counting of a locus runtime for one scope (nothing for the other implementations, whose
// threads locus does not own). Stops also when the run throws.
class pmu_window {
 public:
  explicit pmu_window(locus::runtime* rt) : rt_(rt) {
    if (rt_ != nullptr) rt_->pmu_start();
  }
  pmu_window(const pmu_window&) = delete;
  pmu_window& operator=(const pmu_window&) = delete;
  ~pmu_window() {
    if (rt_ != nullptr) rt_->pmu_stop();
  }

 private:
  locus::runtime* rt_;
};

// Everything the runs of one configuration need and produce.
struct config_run {
  configuration config;
  std::unique_ptr<region> where;
  locus::runtime* rt = nullptr;  // locus only
  // --locality: the runtime whose topology models this configuration's caches (rt for locus; for
  // serial a one-worker runtime whose worker 0 stands for the harness thread).
  locus::runtime* model_rt = nullptr;
  std::optional<locus::stats> stats;
  std::optional<locus::locality_report> locality;
  config_result result;
};

using runtime_key = std::pair<std::string, int>;

// A --sched entry: a scheduler, optionally with "+SOURCE" naming where its runtime's size hints
// come from (LOCUS_SIZE_HINTS: given, learn, learn-all, none), so that one invocation compares
// a scheduler with the program's hints and with learned ones.
void set_scheduler(locus::options& o, const std::string& entry) {
  const std::size_t plus = entry.find('+');
  o.sched = entry.substr(0, plus);
  if (plus == std::string::npos) return;
  const std::string source = entry.substr(plus + 1);
  if (source == "given") {
    o.size_hints = locus::size_hint_source::given;
  } else if (source == "learn") {
    o.size_hints = locus::size_hint_source::learn;
  } else if (source == "learn-all") {
    o.size_hints = locus::size_hint_source::learn_all;
  } else if (source == "none") {
    o.size_hints = locus::size_hint_source::none;
  } else {
    throw usage_error("--sched " + entry + ": '" + source +
                      "' after '+' is not a source of size hints: given, learn, learn-all, none");
  }
}

// The runtime that --locality models the serial elision on: one worker, so that the model has
// exactly the caches on worker 0's path (and reports one instance per level). It never runs a
// task; its worker sleeps.
const runtime_key serial_model_key{"(serial model)", 1};

std::map<runtime_key, std::unique_ptr<locus::runtime>> make_runtimes(const run_plan& plan) {
  std::map<runtime_key, std::unique_ptr<locus::runtime>> runtimes;
  for (const auto& bp : plan.benches) {
    for (const auto& c : bp.configs) {
      const bool serial_model = c.which == impl::serial && plan.locality;
      if (!uses_locus_runtime(c.which) && !serial_model) continue;
      const runtime_key key = serial_model ? serial_model_key : runtime_key{c.sched, c.workers};
      if (runtimes.count(key) != 0) continue;
      locus::options opts;
      if (!serial_model) set_scheduler(opts, c.sched);
      opts.workers = key.second;
      if (plan.pmu) opts.pmu = true;  // otherwise LOCUS_PMU decides
      // --locality opens its own sessions around the timed repetitions; a runtime opening one
      // for its whole life (LOCUS_LOCALITY=1) would make those fail.
      opts.locality = false;
      try {
        runtimes.emplace(key, std::make_unique<locus::runtime>(opts));
      } catch (const locus::config_error& e) {
        throw usage_error("--sched " + c.sched + " --workers " + std::to_string(c.workers) +
                          ": locus rejected the configuration: " + e.what());
      }
    }
  }
  return runtimes;
}

int max_workers_of(const run_plan& plan, impl which) {
  int m = 0;
  for (const auto& bp : plan.benches) {
    for (const auto& c : bp.configs) {
      if (c.which == which) m = std::max(m, c.workers);
    }
  }
  return m;
}

std::unique_ptr<region> make_region(const configuration& c, locus::runtime* rt) {
  switch (c.which) {
    case impl::serial:
      return make_serial_region();
    case impl::locus:
    case impl::taskq:
    case impl::taskq_mpi:
    case impl::tao:
      return make_locus_region(*rt);
    case impl::tbb:
      return make_tbb_region(c.workers);
    case impl::omp:
      return make_omp_region(c.workers);
  }
  return make_serial_region();
}

// --workspan: an untimed run of `inst` on a one-worker runtime of r's scheduler measuring work
// and span. Separate from the timed runtimes: the measurement slows every spawn down. After a
// first run: a fresh runtime's first spawns fault in the pages of its user-level thread stacks,
// tens of microseconds that all lie on the leftmost path and so count in full in the span.
void measure_workspan(instance& inst, config_result& r, std::ostream& log) {
  try {
    locus::options opts;
    set_scheduler(opts, r.config.sched);
    opts.workers = 1;
    opts.workspan = true;
    opts.locality = false;
    locus::runtime rt(opts);
    const run_context ctx{r.config.which, 1, rt.num_places()};
    const auto region = make_locus_region(rt);
    for (int run = 0; run < 2; ++run) {
      inst.reset();
      data_placement placed(rt);
      inst.place(placed);
      rt.reset_stats();
      region->execute([&] { inst.run(ctx); });
    }
    if (const auto ws = rt.workspan()) {
      r.work_s = ws->work_s;
      r.span_s = ws->span_s;
      r.parallelism = ws->parallelism();
    }
  } catch (const std::exception& e) {
    log << "locus-bench: " << r.bench << " " << r.config.label()
        << ": work/span measurement failed: " << e.what() << "\n"
        << std::flush;
  }
}

// Runs all configurations of one benchmark; returns whether every run verified.
bool run_benchmark(const bench_plan& bp, const run_plan& plan,
                   std::map<runtime_key, std::unique_ptr<locus::runtime>>& runtimes,
                   clock::time_point start, std::vector<config_result>& results, std::ostream& out,
                   std::ostream& log) {
  const benchmark& b = *bp.bench;
  param_values params = bp.params;
  log << "locus-bench: " << b.name << ": preparing\n" << std::flush;
  const auto prep_t0 = clock::now();
  std::unique_ptr<instance> inst = b.prepare(params);
  log << "locus-bench: " << b.name << " " << params.to_json() << ": prepared in "
      << fixed(seconds_since(prep_t0), 2) << " s; " << bp.configs.size() << " configurations x ("
      << plan.warmup << " warm-up + " << plan.reps << " timed) interleaved\n"
      << std::flush;

  std::vector<config_run> runs;
  runs.reserve(bp.configs.size());
  const std::string batch = next_batch_name();
  for (const auto& c : bp.configs) {
    config_run r;
    r.config = c;
    r.result.batch = batch;
    if (uses_locus_runtime(c.which)) r.rt = runtimes.at({c.sched, c.workers}).get();
    r.model_rt = r.rt;
    if (c.which == impl::serial && plan.locality) r.model_rt = runtimes.at(serial_model_key).get();
    r.where = make_region(c, r.rt);
    r.result.bench = b.name;
    r.result.config = c;
    r.result.params_json = params.to_json();
    if (b.work_units) {
      r.result.work_units = b.work_units(params);
      r.result.unit = b.unit;
    }
    if (b.working_set_bytes) r.result.working_set_bytes = b.working_set_bytes(params);
    runs.push_back(std::move(r));
  }

  // Each benchmark is another program to a scheduler that learns from the first iteration.
  for (auto& r : runs) {
    if (r.rt != nullptr) r.rt->relearn();
  }

  const int rounds = plan.warmup + plan.reps;
  for (int round = 0; round < rounds; ++round) {
    const bool timed = round >= plan.warmup;
    // A run can be slower right after another: the timed rounds' orders balance which
    // configuration follows which (harness/run_order.hpp).
    const auto row = static_cast<std::size_t>(timed ? round - plan.warmup : round);
    for (std::size_t k = 0; k < runs.size(); ++k) {
      auto& r = runs[configuration_at(row, k, runs.size())];
      if (!r.result.verified) continue;  // a failed configuration is not run again
      run_context ctx{r.config.which, r.config.workers, r.rt != nullptr ? r.rt->num_places() : 1};
      if (plan.exec_step) {
        ctx.each_step = [&r](const std::function<void()>& f) { r.where->execute(f); };
        r.result.exec_step = true;
      }
      const bool model = plan.locality && timed && r.model_rt != nullptr;
      double t = 0;
      verdict v;
      try {
        inst->reset();
        std::optional<data_placement> placed;  // ends after verify(), while inst owns the memory
        if (r.rt != nullptr) {
          inst->place(placed.emplace(*r.rt));
          r.rt->reset_stats();
        }
        if (model) {
          locus::locality::session_options so;
          // The serial elision runs on this thread, outside the runtime.
          if (r.rt == nullptr) so.attribute_outside_to = 0;
          locus::locality::begin(*r.model_rt, so);
        }
        // The threads of the configuration that ran before this one go to sleep first.
        (void)wait_for_other_threads_to_sleep();
        {
          // The load runs from before the timed interval to after it; starting it returns once
          // every load process runs on its CPU.
          std::optional<contender> load;
          if (!r.config.load.quiet()) load.emplace(r.config.load, plan.load_executable);
          // The PMU counts this repetition only; its ioctls stay outside the timed interval.
          const pmu_window counting(r.rt);
          const auto t0 = clock::now();
          if (ctx.each_step) {
            inst->run(ctx);
          } else {
            r.where->execute([&] { inst->run(ctx); });
          }
          t = seconds_since(t0);
        }
        if (model) {
          // The replay runs outside the timed interval.
          const locus::locality_report rep = locus::locality::end();
          if (r.locality) {
            *r.locality += rep;
          } else {
            r.locality = rep;
          }
        }
        if (timed && r.rt != nullptr) {
          if (r.stats) {
            accumulate(*r.stats, r.rt->stats());
          } else {
            r.stats = r.rt->stats();
          }
        }
        v = inst->verify();
        if (!v.ok) v.message = "verification failed: " + v.message;
        if (r.config.which == impl::taskq_mpi) {
          std::string ranks = inst->dist_stats_json();  // collective: every rank, every run
          if (timed) r.result.dist_json = std::move(ranks);
        }
      } catch (const std::exception& e) {
        v.ok = false;
        v.message = std::string("exception: ") + e.what();
      } catch (...) {
        v.ok = false;
        v.message = "unknown exception";
      }
      if (locus::locality::recording()) (void)locus::locality::end();
      r.result.result = v.result;
      std::string what =
          timed ? "rep " + std::to_string(round - plan.warmup + 1) + "/" + std::to_string(plan.reps)
                : "warm-up " + std::to_string(round + 1) + "/" + std::to_string(plan.warmup);
      if (timed && v.ok) r.result.times_s.push_back(t);
      log << b.name << " " << r.config.label() << " " << what << ": " << human_time(t)
          << " (elapsed " << fixed(seconds_since(start), 1) << " s)";
      if (!v.ok) {
        r.result.verified = false;
        r.result.error = v.message;
        log << " FAILED";
      }
      log << "\n" << std::flush;
      if (model && !plan.json && r.locality && round + 1 == rounds) {
        log << b.name << " " << r.config.label() << " (" << plan.reps
            << " reps): " << r.locality->to_text() << std::flush;
      }
      if (!v.ok) {
        log << "locus-bench: error: " << b.name << " " << r.config.label() << " " << what << ": "
            << v.message << "\n"
            << std::flush;
      }
    }
  }

  bool ok = true;
  std::vector<config_result> mine;
  for (auto& r : runs) {
    if (r.stats) {
      r.result.stats_json = r.stats->to_json();
      if (!r.result.times_s.empty()) {
        r.result.busy_per_rep_s =
            r.stats->total().busy_s / static_cast<double>(r.result.times_s.size());
      }
    }
    if (plan.locality) r.result.locality_json = r.locality ? r.locality->to_json() : "null";
    ok = ok && r.result.verified;
    mine.push_back(std::move(r.result));
  }
  if (plan.workspan) {
    for (auto& r : mine) {
      if (uses_locus_runtime(r.config.which) && r.verified) measure_workspan(*inst, r, log);
    }
  }
  derive_ratios(mine);
  for (auto& r : mine) {
    if (plan.json) out << format_json_line(r) << "\n" << std::flush;
    results.push_back(std::move(r));
  }
  return ok;
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void derive_ratios(std::vector<config_result>& results) {
  const auto usable = [](const config_result& r) { return r.verified && !r.times_s.empty(); };
  for (auto& r : results) {
    if (!usable(r) || r.config.which == impl::serial) continue;
    // Ratios compare configurations that ran under the same load.
    const config_result* serial = nullptr;
    const config_result* one = nullptr;
    for (const auto& o : results) {
      if (!usable(o) || o.config.load != r.config.load) continue;
      if (o.config.which == impl::serial) serial = &o;
      if (o.config.which == r.config.which && o.config.sched == r.config.sched &&
          o.config.workers == 1) {
        one = &o;
      }
    }
    if (r.config.workers == 1 && serial != nullptr && serial->median_s() > 0) {
      r.t1_over_ts = r.median_s() / serial->median_s();
    }
    if (r.config.workers > 1 && one != nullptr && r.median_s() > 0) {
      r.t1_over_tp = one->median_s() / r.median_s();
    }
    if (r.busy_per_rep_s >= 0 && one != nullptr && one->median_s() > 0) {
      r.work_inflation = r.busy_per_rep_s / one->median_s();
    }
  }
}

double config_result::median_s() const {
  return median(times_s);
}

double config_result::min_s() const {
  return times_s.empty() ? 0 : *std::min_element(times_s.begin(), times_s.end());
}

std::string format_json_line(const config_result& r) {
  json::object o;
  o.str("bench", r.bench);
  o.str("impl", to_string(r.config.which));
  if (uses_locus_runtime(r.config.which)) {
    o.str("sched", r.config.sched);
  } else {
    o.null("sched");
  }
  o.num("workers", static_cast<std::int64_t>(r.config.workers));
  if (!r.config.load.quiet()) o.str("contend", r.config.load.text());
  if (r.exec_step) o.str("exec", "step");
  if (!r.batch.empty()) o.str("batch", r.batch);
  o.raw("params", r.params_json);
  o.raw("times_s", json::array(r.times_s));
  if (r.times_s.empty()) {
    o.null("median_s").null("min_s");
  } else {
    o.num("median_s", r.median_s()).num("min_s", r.min_s());
  }
  const auto optional_num = [&o](const char* key, const std::optional<double>& v) {
    if (v) {
      o.num(key, *v);
    } else {
      o.null(key);
    }
  };
  optional_num("t1_over_ts", r.t1_over_ts);
  optional_num("t1_over_tp", r.t1_over_tp);
  optional_num("work_inflation", r.work_inflation);
  if (r.work_units) o.num("work_units", *r.work_units).str("unit", r.unit);
  if (r.working_set_bytes) {
    o.num("working_set_bytes", *r.working_set_bytes);
    if (const std::size_t l2 = l2_cache_bytes()) o.num("l2_bytes", static_cast<std::int64_t>(l2));
  }
  o.boolean("verified", r.verified);
  o.str("result", r.result);
  if (!r.verified) o.str("error", r.error);
  o.raw("stats", r.stats_json);
  if (!r.locality_json.empty()) o.raw("locality", r.locality_json);
  if (!r.dist_json.empty()) o.raw("ranks", r.dist_json);
  if (r.work_s) {
    o.num("work_s", *r.work_s).num("span_s", *r.span_s).num("parallelism", *r.parallelism);
  }
  return o.str();
}

std::string format_table(const std::vector<config_result>& results) {
  // The load column only when some configuration ran under one.
  const bool loads = std::any_of(results.begin(), results.end(),
                                 [](const config_result& r) { return !r.config.load.quiet(); });
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"bench", "impl", "sched", "workers", "reps", "median", "min", "median/serial",
                  "T1/TS", "T1/TP", "W_P/T1", "result"});
  if (loads) rows[0].insert(rows[0].begin() + 4, "contend");
  // The parameters when one benchmark ran with several (--sweep).
  bool swept = false;
  for (const auto& a : results) {
    for (const auto& b : results)
      swept = swept || (a.bench == b.bench && a.params_json != b.params_json);
  }
  if (swept) rows[0].insert(rows[0].begin() + 1, "params");
  for (const auto& r : results) {
    std::optional<double> serial;
    for (const auto& s : results) {
      if (s.bench == r.bench && s.params_json == r.params_json && s.config.which == impl::serial &&
          s.config.load == r.config.load && s.verified && !s.times_s.empty()) {
        serial = s.median_s();
      }
    }
    const bool have = r.verified && !r.times_s.empty();
    rows.push_back({r.bench, std::string(to_string(r.config.which)),
                    uses_locus_runtime(r.config.which) ? r.config.sched : "-",
                    std::to_string(r.config.workers), std::to_string(r.times_s.size()),
                    have ? human_time(r.median_s()) : "FAILED", have ? human_time(r.min_s()) : "-",
                    have && serial && *serial > 0 ? fixed(r.median_s() / *serial, 3) : "-",
                    r.t1_over_ts ? fixed(*r.t1_over_ts, 3) : "-",
                    r.t1_over_tp ? fixed(*r.t1_over_tp, 3) : "-",
                    r.work_inflation ? fixed(*r.work_inflation, 3) : "-",
                    r.verified ? r.result : "FAILED: " + r.error});
    if (loads) rows.back().insert(rows.back().begin() + 4, r.config.load.text());
    if (swept) rows.back().insert(rows.back().begin() + 1, r.params_json);
  }
  std::vector<std::size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::size_t text_columns = swept ? 4 : 3;
      const bool left = i < text_columns || (loads && i == text_columns + 1) || i + 1 == row.size();
      const std::string pad(width[i] - row[i].size(), ' ');
      if (i != 0) line += "  ";
      line += left ? row[i] + (i + 1 == row.size() ? "" : pad) : pad + row[i];
    }
    text += line + "\n";
  }
  return text;
}

void accumulate(locus::stats& into, const locus::stats& rep) {
  if (into.workers.size() < rep.workers.size()) into.workers.resize(rep.workers.size());
  for (std::size_t i = 0; i < rep.workers.size(); ++i) {
    into.workers[i].worker = rep.workers[i].worker;
    into.workers[i] += rep.workers[i];
  }
  into.suppressed_exceptions += rep.suppressed_exceptions;
  if (into.scheduler.empty()) into.scheduler = rep.scheduler;
  if (into.level_names.empty()) into.level_names = rep.level_names;
  // A scheduler's own figures describe the runtime so far: the latest repetition's.
  into.policy = rep.policy;
}

int execute(const run_plan& plan, std::ostream& out, std::ostream& log) {
  const auto start = clock::now();
  // Everything that starts threads exists before the first timed run and lives to the end.
  const int tbb_workers = max_workers_of(plan, impl::tbb);
  const auto tbb_settings = tbb_workers > 0 ? make_tbb_settings(tbb_workers) : nullptr;
  auto runtimes = make_runtimes(plan);

  std::vector<config_result> results;
  bool ok = true;
  for (const auto& bp : plan.benches) {
    ok = run_benchmark(bp, plan, runtimes, start, results, out, log) && ok;
  }
  if (!plan.json) out << format_table(results) << std::flush;
  log << "locus-bench: done in " << fixed(seconds_since(start), 1) << " s"
      << (ok ? "" : "; SOME RUNS FAILED") << "\n"
      << std::flush;
  return ok ? 0 : 1;
}

}  // namespace locus_bench
