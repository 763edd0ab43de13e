// `locus-bench pingpong`: how long a cache line takes to go from one CPU to another and back.
// On a virtual machine the host may place two vCPUs on cores that share a cache or on cores that
// do not, and move them between the two; every figure that moves data between workers depends on
// which (bench/README, "Why: the host moves the two CPUs apart"), so runs can record it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace locus_bench {

// Median round trip in nanoseconds of an atomic handed back and forth between two threads pinned
// to cpu_a and cpu_b, over `batches` batches of `round_trips`. Throws std::runtime_error when a
// thread cannot be pinned.
double cache_line_round_trip_ns(int cpu_a, int cpu_b, int round_trips, int batches);

// Parses `pingpong [--cpus A,B] [--round-trips N]` (default: the first two CPUs this process may
// use, 100000 round trips per batch, 5 batches) and prints one line:
//   "cpu 0 <-> cpu 1: cache-line round trip 96.3 ns (median of 5 x 100000)".
// Throws usage_error on bad arguments or with fewer than two CPUs.
int run_pingpong(const std::vector<std::string>& args, std::ostream& out);

}  // namespace locus_bench
