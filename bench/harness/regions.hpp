// The parallel region of each implementation: what the harness times around instance::run.
#pragma once

#include <functional>
#include <memory>

#include "harness/benchmark.hpp"

namespace locus {
class runtime;
}

namespace locus_bench {

class region {
 public:
  region() = default;
  region(const region&) = delete;
  region& operator=(const region&) = delete;
  virtual ~region() = default;
  // Runs f inside the region and returns when f and every task it spawned are done; rethrows an
  // exception f threw.
  virtual void execute(const std::function<void()>& f) = 0;
};

// Calls f on the calling thread.
std::unique_ptr<region> make_serial_region();
// rt.exec(f): f runs on a worker of rt; rt outlives the region.
std::unique_ptr<region> make_locus_region(locus::runtime& rt);
// A tbb::task_arena of `workers` slots (one of them the calling thread), initialised now;
// f runs inside arena.execute. Throws usage_error in a build without LOCUS_BENCH_PEERS.
std::unique_ptr<region> make_tbb_region(int workers);
// `#pragma omp parallel num_threads(workers)` + `#pragma omp single` around f (libgomp).
// Throws usage_error in a build without LOCUS_BENCH_PEERS.
std::unique_ptr<region> make_omp_region(int workers);

// Process-wide oneTBB settings for the lifetime of the returned handle: the parallelism limit
// raised to `max_workers` (so that arenas larger than the machine, used for oversubscribed runs,
// get all their threads) and a 256 MiB worker stack (deep recursion: UTS T3L is 17844 levels).
// Without LOCUS_BENCH_PEERS the handle does nothing.
std::shared_ptr<void> make_tbb_settings(int max_workers);

}  // namespace locus_bench
