#include "harness/app.hpp"

#include <exception>

#include "harness/cli.hpp"
#include "harness/cpu_speed.hpp"
#include "harness/idle.hpp"
#include "harness/pingpong.hpp"
#include "harness/platform.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"

namespace locus_bench {

int run_command_line(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    if (!args.empty() && args.front() == "pingpong") return run_pingpong(args, out);
    if (!args.empty() && args.front() == "cpuspeed") return run_cpu_speed(args, out);
    if (!args.empty() && args.front() == "idle") {
      environment_settings();  // the probe's runtime reads them: reject bad ones with status 2
      return run_idle_probe(args, out);
    }
    const cli_options opts = parse_command_line(args);
    const registry& reg = registry::get();
    switch (opts.cmd) {
      case command::help:
        out << usage();
        return 0;
      case command::list:
        for (const auto& b : reg.all()) out << b.name << "\n";
        return 0;
      case command::info: {
        const benchmark* b = reg.find(opts.benches.front());
        if (b == nullptr) {
          throw usage_error("info: unknown benchmark '" + opts.benches.front() +
                            "'; known: " + reg.names());
        }
        out << describe(*b);
        return 0;
      }
      case command::run: {
        const run_plan plan = make_plan(opts, reg, available_cpus());
        return execute(plan, out, err);
      }
    }
  } catch (const usage_error& e) {
    err << "locus-bench: error: " << e.what() << "\n"
        << "Try 'locus-bench help'.\n";
    return 2;
  } catch (const std::exception& e) {
    err << "locus-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace locus_bench
