// locus-bench: runs the benchmark suite on locus and its peers. See `locus-bench help`.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "harness/app.hpp"
#include "harness/contention.hpp"
#include "harness/dist_stats.hpp"
#include "harness/platform.hpp"

namespace {

// The serial elision, the oneTBB arena's calling thread and the OpenMP master thread recurse on
// the harness thread's stack; give it room for the deepest benchmark tree.
constexpr std::size_t harness_stack_bytes = std::size_t{512} << 20;
constexpr std::size_t omp_stack_bytes = std::size_t{256} << 20;

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  // A load process of --contend spins on this thread, the process's only one, so that the
  // process is what is pinned (sched_getaffinity of its pid says so).
  if (!args.empty() && args.front() == "load") {
    return locus_bench::run_load(args, std::cout, std::cerr);
  }
  // OpenMP workers get the default thread stack; make it as deep as the harness thread's unless
  // the user chose one (a UTS T3L branch is 17844 nested tasks).
  if (std::getenv("OMP_STACKSIZE") == nullptr && std::getenv("GOMP_STACKSIZE") == nullptr) {
    locus_bench::set_default_thread_stack(omp_stack_bytes);
  }
  // Under mpirun every rank runs the same plan (taskq-mpi's queues are collective); rank 0
  // alone prints it, and the exit statuses still tell whether every rank verified.
  std::ostream quiet(nullptr);
  const bool speaks = locus_bench::launcher_rank() == 0;
  try {
    return locus_bench::run_on_stack(harness_stack_bytes, [&] {
      return locus_bench::run_command_line(args, speaks ? std::cout : quiet,
                                           speaks ? std::cerr : quiet);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "locus-bench: error: %s\n", e.what());
    return 1;
  }
}
