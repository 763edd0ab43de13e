// `locus-bench cpuspeed`: how fast each CPU runs a fixed piece of arithmetic while all of them
// run it at once, window by window. A VM's vCPUs can change speed independently of one another
// (a host thread sharing the physical core, the host's frequency): on the hosts of 2026-12-08 a
// vCPU ran sparselu's block updates at 25 us or at 50 us, one vCPU fast while the other was slow,
// flipping within a tenth of a second. Two workers of equal work then finish apart, and a ratio
// between two runs depends on the states each ran in (bench/README, "Two CPUs, two speeds").
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace locus_bench {

// Microseconds one call of the kernel took on each CPU: per window, the median over the calls
// that ended in it (0 where none did).
struct cpu_speed_series {
  std::vector<int> cpus;
  int window_ms = 0;
  std::vector<std::vector<double>> window_us;  // [window][cpu index]
};

// Runs the kernel on one thread pinned to each of `cpus` at once for `windows` windows of
// `window_ms`. Throws std::runtime_error when a thread cannot be pinned or finds itself off its
// CPU.
cpu_speed_series measure_cpu_speeds(const std::vector<int>& cpus, int window_ms, int windows);

// Parses `cpuspeed [--cpus LIST] [--seconds S] [--window-ms W]` (default: every CPU this process
// may use, 2 seconds, 100 ms windows) and prints a header, one line per window (each CPU's
// microseconds per call and the slowest over the fastest) and a summary per CPU and across them.
// Throws usage_error on bad arguments.
int run_cpu_speed(const std::vector<std::string>& args, std::ostream& out);

}  // namespace locus_bench
