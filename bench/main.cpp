// locus-bench: runs the benchmark suite on locus and its peers. See `locus-bench help`.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "harness/cli.hpp"
#include "harness/idle.hpp"
#include "harness/platform.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"

namespace {

// The serial elision, the oneTBB arena's calling thread and the OpenMP master thread recurse on
// the harness thread's stack; give it room for the deepest benchmark tree.
constexpr std::size_t harness_stack_bytes = std::size_t{512} << 20;
constexpr std::size_t omp_stack_bytes = std::size_t{256} << 20;

int bench_main(const std::vector<std::string>& args) {
  using namespace locus_bench;
  try {
    if (!args.empty() && args.front() == "idle") return run_idle_probe(args, std::cout);
    const cli_options opts = parse_command_line(args);
    const registry& reg = registry::get();
    switch (opts.cmd) {
      case command::help:
        std::cout << usage();
        return 0;
      case command::list:
        for (const auto& b : reg.all()) std::cout << b.name << "\n";
        return 0;
      case command::info: {
        const benchmark* b = reg.find(opts.benches.front());
        if (b == nullptr) {
          throw usage_error("info: unknown benchmark '" + opts.benches.front() +
                            "'; known: " + reg.names());
        }
        std::cout << describe(*b);
        return 0;
      }
      case command::run: {
        const run_plan plan = make_plan(opts, reg, available_cpus());
        return execute(plan, std::cout, std::cerr);
      }
    }
  } catch (const usage_error& e) {
    std::cerr << "locus-bench: error: " << e.what() << "\n"
              << "Try 'locus-bench help'.\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "locus-bench: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  // OpenMP workers get the default thread stack; make it as deep as the harness thread's unless
  // the user chose one (a UTS T3L branch is 17844 nested tasks).
  if (std::getenv("OMP_STACKSIZE") == nullptr && std::getenv("GOMP_STACKSIZE") == nullptr) {
    locus_bench::set_default_thread_stack(omp_stack_bytes);
  }
  try {
    return locus_bench::run_on_stack(harness_stack_bytes, [&] { return bench_main(args); });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "locus-bench: error: %s\n", e.what());
    return 1;
  }
}
