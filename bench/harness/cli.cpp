#include "harness/cli.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <sstream>
#include <string_view>
#include <system_error>

#include "harness/platform.hpp"

namespace locus_bench {

namespace {

constexpr int max_workers = 4096;

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

int parse_count(std::string_view flag, std::string_view text, int min, int max) {
  int v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v);
  if (text.empty() || r.ec != std::errc{} || r.ptr != end || v < min || v > max) {
    throw usage_error(std::string(flag) + ": invalid value '" + std::string(text) +
                      "': expected an integer in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "]");
  }
  return v;
}

template <class T>
void append_unique(std::vector<T>& list, T value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(std::move(value));
}

std::string impl_names_text() {
  std::string s;
  for (const impl i : all_impls) {
    if (!s.empty()) s += ", ";
    s += to_string(i);
  }
  return s;
}

std::string keys_of(const benchmark& b) {
  if (b.params.empty()) return b.name + " has no parameters";
  std::string s = b.name + " accepts ";
  for (std::size_t i = 0; i < b.params.size(); ++i) {
    if (i != 0) s += ", ";
    s += b.params[i].name;
  }
  return s;
}

// The key of --set or --sweep: bench.key or key.
std::pair<std::string, std::string> split_key(const std::string& key) {
  if (const auto dot = key.find('.'); dot != std::string::npos) {
    return {key.substr(0, dot), key.substr(dot + 1)};
  }
  return {"", key};
}

// The plans a --set or --sweep key applies to: bench.key one benchmark, key every selected one
// that has the parameter. Throws usage_error naming the flag when it applies to none.
std::vector<bench_plan*> plans_with_key(std::vector<bench_plan>& plans, const registry& reg,
                                        const std::string& flag, const std::string& key) {
  const auto [bench_name, param] = split_key(key);
  std::vector<bench_plan*> found;
  std::string known;
  for (auto& bp : plans) {
    if (!bench_name.empty() && bp.bench->name != bench_name) continue;
    if (bp.bench->find_param(param) == nullptr) {
      if (!known.empty()) known += "; ";
      known += keys_of(*bp.bench);
      continue;
    }
    found.push_back(&bp);
  }
  if (!found.empty()) return found;
  if (!bench_name.empty() && reg.find(bench_name) == nullptr) {
    throw usage_error(flag + " " + key + ": unknown benchmark '" + bench_name +
                      "'; known: " + reg.names());
  }
  if (known.empty()) {
    throw usage_error(flag + " " + key + ": benchmark '" + bench_name +
                      "' is not among those being run");
  }
  throw usage_error(flag + " " + key + ": unknown parameter '" + param + "'; " + known);
}

void set_param(bench_plan& bp, const std::string& flag, const std::string& key,
               const std::string& value) {
  const std::string param = split_key(key).second;
  const param_spec* spec = bp.bench->find_param(param);
  spec->validate(value, flag + " " + bp.bench->name + "." + param);
  bp.params.set(param, value, spec->type, true);
}

constexpr std::string_view run_flags =
    "--size, --set, --sweep, --impl, --sched, --workers, --contend, --reps, --warmup, --json, "
    "--pmu, --locality, --workspan, --exec";

}  // namespace

int default_reps(size_class size) noexcept {
  switch (size) {
    case size_class::small:
      return 3;
    case size_class::medium:
      return 7;
    case size_class::large:
      return 5;
  }
  return 7;
}

std::string configuration::label() const {
  std::string s;
  switch (which) {
    case impl::serial:
      s = "serial";
      break;
    case impl::locus:
    case impl::taskq:
    case impl::taskq_mpi:
    case impl::tao:
      s = std::string(to_string(which)) + "/" + sched + "/" + std::to_string(workers);
      break;
    default:
      s = std::string(to_string(which)) + "/" + std::to_string(workers);
  }
  return load.quiet() ? s : s + "+contend=" + load.text();
}

cli_options parse_command_line(const std::vector<std::string>& args) {
  cli_options o;
  if (args.empty()) throw usage_error("missing command: expected list, info, run or help");
  const std::string& cmd = args[0];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    o.cmd = command::help;
    return o;
  }
  if (cmd == "list") {
    if (args.size() > 1) throw usage_error("list: unexpected argument '" + args[1] + "'");
    o.cmd = command::list;
    return o;
  }
  if (cmd == "info") {
    if (args.size() != 2) throw usage_error("info: expected exactly one benchmark name");
    o.cmd = command::info;
    o.benches.push_back(args[1]);
    return o;
  }
  if (cmd != "run") {
    throw usage_error("unknown command '" + cmd + "': expected list, info, run or help");
  }
  o.cmd = command::run;

  bool seen_size = false, seen_reps = false, seen_warmup = false;
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      if (!o.benches.empty()) {
        throw usage_error("run: unexpected argument '" + arg +
                          "' (give several benchmarks as one comma-separated list)");
      }
      for (auto& name : split(arg, ',')) {
        if (name.empty()) throw usage_error("run: empty benchmark name in '" + arg + "'");
        append_unique(o.benches, std::move(name));
      }
      continue;
    }
    // --flag=value or --flag value
    std::string flag = arg, value;
    bool has_value = false;
    if (const auto eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (flag == "--json") {
      if (has_value) throw usage_error("--json takes no value");
      o.json = true;
      continue;
    }
    if (flag == "--pmu") {
      if (has_value) throw usage_error("--pmu takes no value");
      o.pmu = true;
      continue;
    }
    if (flag == "--locality") {
      if (has_value) throw usage_error("--locality takes no value");
      o.locality = true;
      continue;
    }
    if (flag == "--workspan") {
      if (has_value) throw usage_error("--workspan takes no value");
      o.workspan = true;
      continue;
    }
    static const std::vector<std::string> valued{"--size",   "--set",     "--sweep",   "--impl",
                                                 "--sched",  "--workers", "--contend", "--reps",
                                                 "--warmup", "--exec"};
    if (std::find(valued.begin(), valued.end(), flag) == valued.end()) {
      throw usage_error("run: unknown option '" + flag + "'; accepted: " + std::string(run_flags));
    }
    if (!has_value) {
      if (i + 1 >= args.size()) throw usage_error(flag + ": missing value");
      value = args[++i];
    }

    if (flag == "--size") {
      if (seen_size) throw usage_error("--size given more than once");
      seen_size = true;
      const auto s = parse_size(value);
      if (!s) {
        throw usage_error("--size: invalid value '" + value +
                          "': expected one of small, medium, large");
      }
      o.size = *s;
    } else if (flag == "--set") {
      const auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == value.size()) {
        throw usage_error("--set: invalid value '" + value +
                          "': expected key=value (or bench.key=value)");
      }
      o.sets.emplace_back(value.substr(0, eq), value.substr(eq + 1));
    } else if (flag == "--sweep") {
      const auto eq = value.find('=');
      std::vector<std::string> values;
      if (eq != std::string::npos) values = split(std::string_view(value).substr(eq + 1), ',');
      if (eq == std::string::npos || eq == 0 || values.empty() ||
          std::find(values.begin(), values.end(), "") != values.end()) {
        throw usage_error("--sweep: invalid value '" + value +
                          "': expected key=v1,v2,... (or bench.key=v1,v2,...)");
      }
      o.sweeps.emplace_back(value.substr(0, eq), std::move(values));
    } else if (flag == "--impl") {
      for (const auto& name : split(value, ',')) {
        const auto which = parse_impl(name);
        if (!which) {
          throw usage_error("--impl: invalid value '" + name + "': expected a comma-separated " +
                            "list of " + impl_names_text());
        }
        if (*which == impl::taskq_mpi && !impl_compiled(*which)) {
          throw usage_error(
              "--impl: 'taskq-mpi' is not available: this locus-bench was built "
              "without MPI (LOCUS_BUILD_MPI; Debian/Ubuntu: libopenmpi-dev)");
        }
        if (!impl_compiled(*which)) {
          throw usage_error("--impl: '" + name +
                            "' is not available: this locus-bench was built without "
                            "LOCUS_BENCH_PEERS (available: serial, locus, taskq, tao)");
        }
        append_unique(o.impls, *which);
      }
    } else if (flag == "--sched") {
      for (auto& name : split(value, ',')) {
        if (name.empty()) {
          throw usage_error("--sched: empty scheduler name in '" + value +
                            "': expected a comma-separated list such as ws,adws");
        }
        append_unique(o.scheds, std::move(name));
      }
    } else if (flag == "--workers") {
      for (const auto& w : split(value, ',')) {
        append_unique(o.workers, parse_count("--workers", w, 1, max_workers));
      }
    } else if (flag == "--contend") {
      for (const auto& load : split(value, ',')) {
        append_unique(o.loads, parse_contention(load, available_cpus()));
      }
    } else if (flag == "--exec") {
      if (value != "once" && value != "step") {
        throw usage_error("--exec: invalid value '" + value + "': expected once or step");
      }
      o.exec_step = value == "step";
    } else if (flag == "--reps") {
      if (seen_reps) throw usage_error("--reps given more than once");
      seen_reps = true;
      o.reps = parse_count("--reps", value, 1, 1000000);
    } else if (flag == "--warmup") {
      if (seen_warmup) throw usage_error("--warmup given more than once");
      seen_warmup = true;
      o.warmup = parse_count("--warmup", value, 0, 1000000);
    }
  }
  if (o.benches.empty()) throw usage_error("run: missing benchmark name (or all)");
  return o;
}

locus::options environment_settings() {
  try {
    return locus::resolve_options();
  } catch (const locus::config_error& e) {
    throw usage_error(e.what());
  }
}

run_plan make_plan(const cli_options& opts, const registry& reg, int default_workers) {
  // First: a bad LOCUS_* value stops the run before anything is prepared, whatever the flags.
  const locus::options env = environment_settings();
  run_plan plan;
  plan.size = opts.size;
  plan.reps = opts.reps.value_or(default_reps(opts.size));
  plan.warmup = opts.warmup;
  plan.json = opts.json;
  plan.pmu = opts.pmu;
  plan.locality = opts.locality;
  plan.workspan = opts.workspan;
  plan.exec_step = opts.exec_step;

  // Benchmarks.
  bool explicit_names = true;
  std::vector<const benchmark*> selected;
  for (const auto& name : opts.benches) {
    if (name == "all") {
      explicit_names = false;
      for (const auto& b : reg.all()) append_unique(selected, &b);
      continue;
    }
    const benchmark* b = reg.find(name);
    if (b == nullptr) {
      throw usage_error("run: unknown benchmark '" + name + "'; known: " + reg.names() +
                        " (or all)");
    }
    append_unique(selected, b);
  }
  if (opts.exec_step) {
    // With all, the benchmarks that have time steps; a named one without is an error.
    std::string with_steps;
    for (const auto& b : reg.all()) {
      if (b.steps) with_steps += (with_steps.empty() ? "" : ", ") + b.name;
    }
    std::vector<const benchmark*> stepped;
    for (const benchmark* b : selected) {
      if (b->steps) {
        stepped.push_back(b);
      } else if (explicit_names) {
        throw usage_error("--exec step: " + b->name + " has no time steps; benchmarks with time " +
                          "steps: " + with_steps);
      }
    }
    selected = std::move(stepped);
  }

  for (const benchmark* b : selected) {
    bench_plan bp;
    bp.bench = b;
    bp.params = b->defaults(opts.size);
    plan.benches.push_back(std::move(bp));
  }

  // --set: bench.key=value targets one benchmark, key=value every selected one that has the key.
  for (const auto& [key, value] : opts.sets) {
    for (bench_plan* bp : plans_with_key(plan.benches, reg, "--set", key)) {
      set_param(*bp, "--set", key, value);
    }
  }
  // --sweep: every plan a key applies to becomes one plan per value, in the order given.
  for (const auto& [key, values] : opts.sweeps) {
    const std::vector<bench_plan*> targets = plans_with_key(plan.benches, reg, "--sweep", key);
    std::vector<bench_plan> swept;
    for (auto& bp : plan.benches) {
      if (std::find(targets.begin(), targets.end(), &bp) == targets.end()) {
        swept.push_back(std::move(bp));
        continue;
      }
      for (const auto& value : values) {
        bench_plan copy = bp;
        set_param(copy, "--sweep", key, value);
        swept.push_back(std::move(copy));
      }
    }
    plan.benches = std::move(swept);
  }

  for (const auto& bp : plan.benches) {
    if (bp.bench->check) bp.bench->check(bp.params);
  }

  // Configurations.
  const std::vector<std::string> scheds =
      opts.scheds.empty() ? std::vector<std::string>{*env.sched} : opts.scheds;
  const std::vector<int> workers =
      opts.workers.empty() ? std::vector<int>{default_workers} : opts.workers;
  const std::vector<contention> loads =
      opts.loads.empty() ? std::vector<contention>{contention{}} : opts.loads;
  for (auto& bp : plan.benches) {
    std::vector<impl> impls;
    if (opts.impls.empty()) {
      impls = bp.bench->impls;
    } else {
      for (const impl i : opts.impls) {
        if (bp.bench->supports(i)) {
          impls.push_back(i);
        } else if (explicit_names) {
          throw usage_error("--impl: benchmark " + bp.bench->name + " has no " +
                            std::string(to_string(i)) + " implementation");
        }
      }
    }
    for (const contention& load : loads) {
      for (const impl i : impls) {
        if (i == impl::serial) {
          bp.configs.push_back({impl::serial, "", 1, load});
        } else if (uses_locus_runtime(i)) {
          for (const auto& s : scheds) {
            for (const int w : workers) bp.configs.push_back({i, s, w, load});
          }
        } else {
          for (const int w : workers) bp.configs.push_back({i, "", w, load});
        }
      }
    }
  }
  std::erase_if(plan.benches, [](const bench_plan& bp) { return bp.configs.empty(); });
  if (plan.benches.empty()) {
    throw usage_error("--impl: none of the selected benchmarks has any of those implementations");
  }
  return plan;
}

std::string usage() {
  std::ostringstream s;
  s << "usage:\n"
       "  locus-bench list                 benchmark names, one per line\n"
       "  locus-bench info BENCH           parameters, defaults per size, implementations\n"
       "  locus-bench run BENCH[,BENCH...]|all [options]\n"
       "  locus-bench idle [--workers N] [--reps R] [--seconds S]\n"
       "      CPU time an idle runtime uses in S seconds after a parallel phase\n"
       "  locus-bench pingpong [--cpus A,B] [--round-trips N]\n"
       "      how long a cache line takes from one CPU to another and back\n"
       "  locus-bench cpuspeed [--cpus LIST] [--seconds S] [--window-ms W]\n"
       "      how fast each CPU runs a fixed block update while all of them run it,\n"
       "      window by window (a VM's vCPUs may each be fast or slow at any moment)\n"
       "  locus-bench load CPU [BUSY/IDLE]\n"
       "      one load process of --contend: pinned to CPU, spinning, or BUSY microseconds\n"
       "      at a time with IDLE asleep between, until killed or its parent ends\n"
       "  locus-bench help\n"
       "\n"
       "run options (LIST = comma-separated; list options may be repeated):\n"
       "  --size small|medium|large   parameter defaults (default medium)\n"
       "  --set KEY=VALUE             override a parameter; BENCH.KEY=VALUE for one benchmark\n"
       "  --sweep KEY=V1,V2,...       run the benchmark once per value (BENCH.KEY for one\n"
       "                              benchmark; several sweeps: every combination)\n"
       "  --impl LIST                 serial, locus, tbb, omp, taskq, tao (default: all\n"
       "                              the benchmark has but taskq and tao, which run only\n"
       "                              when named)\n"
       "  --sched LIST                locus schedulers (default: LOCUS_SCHED if set, else\n"
       "                              ws); locus and taskq impls only; SCHED+SOURCE gives\n"
       "                              that runtime LOCUS_SIZE_HINTS=SOURCE (given, learn,\n"
       "                              learn-all, none), e.g. ml-adws,ml-adws+learn-all\n"
       "  --workers LIST              worker counts (default: the CPUs this process may use);\n"
       "                              serial always runs once with 1\n"
       "  --contend LIST              loads to run every configuration under, besides or\n"
       "                              instead of none (quiet, the default): N processes\n"
       "                              pinned to the last N CPUs, always busy, or N:BUSY/IDLE\n"
       "                              in bursts (microseconds busy, then asleep); started\n"
       "                              before each run and ended after it, untimed\n"
       "  --exec once|step            once (the default): each repetition runs inside one\n"
       "                              parallel region (a locus exec, ...); step: a serial\n"
       "                              loop on this thread enters one per time step, as a\n"
       "                              user's time loop would (benchmarks with time steps)\n"
       "  --reps R                    timed repetitions (default: small 3, medium 7, large 5)\n"
       "  --warmup W                  untimed repetitions before them (default 1)\n"
       "  --json                      one JSON object per configuration on stdout\n"
       "  --pmu                       count instructions, cycles and cache misses per locus\n"
       "                              worker around each repetition (as LOCUS_PMU=1 does);\n"
       "                              refused counters say \"unavailable: <reason>\"\n"
       "  --locality                  record the locality declarations of every timed locus\n"
       "                              and serial repetition and replay them through LRU\n"
       "                              models of the topology's caches (\"locality\" in the\n"
       "                              JSON; the times then include the recording, not the\n"
       "                              replay)\n"
       "  --workspan                  after the timed repetitions, run each locus\n"
       "                              configuration once more on one worker measuring work,\n"
       "                              span and parallelism (Cilkscale-style; \"work_s\",\n"
       "                              \"span_s\", \"parallelism\" in the JSON)\n"
       "\n"
       "Repetitions are interleaved (rep 1 of every configuration, then rep 2, ..., the rounds'\n"
       "orders chosen so that each configuration runs right after each other one equally\n"
       "often), so ratios are measured side by side; benchmarks run one after another. Every\n"
       "repetition is verified; a failure exits with status 1, a bad argument with status 2.\n"
       "Progress goes to stderr.\n"
       "\n"
       "locus settings not chosen here come from the environment (LOCUS_SCHED as --sched's\n"
       "default; LOCUS_TOPOLOGY for a synthetic machine, needed for more workers than\n"
       "processing units; LOCUS_STACK_SIZE; LOCUS_LOCALITY_LINE for --locality's line size).\n"
       "LOCUS_WORKERS and LOCUS_LOCALITY are ignored: use --workers and --locality. Every\n"
       "LOCUS_* variable is checked as a locus runtime checks it before run or idle does\n"
       "anything: an invalid value exits with status 2, naming the accepted values.\n"
       "OpenMP workers get 256 MiB stacks unless OMP_STACKSIZE is set.\n";
  return s.str();
}

std::string describe(const benchmark& b) {
  std::ostringstream s;
  s << b.name << ": " << b.description << "\n";
  s << "implementations:";
  for (const impl i : b.impls) s << ' ' << to_string(i);
  if (!b.on_request.empty()) {
    s << " (with --impl:";
    for (const impl i : b.on_request) s << ' ' << to_string(i);
    s << ')';
  }
  s << "\nparameters (--set KEY=VALUE; defaults small / medium / large):\n";
  for (const auto& p : b.params) {
    s << "  " << p.name << " = " << p.defaults[0] << " / " << p.defaults[1] << " / "
      << p.defaults[2] << "\n      " << p.description << "\n      accepts " << p.accepted() << "\n";
  }
  return s.str();
}

}  // namespace locus_bench
