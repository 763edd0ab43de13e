// stats_trace: a program that reads its own runtime statistics (rt.stats(), locus/stats.hpp)
// and its own trace (options::trace, the same as LOCUS_TRACE; docs/tracing.md). It runs a
// Fibonacci whose spawns it can count serially, checks that stats() counted exactly those, then
// checks that the trace written when the runtime ends has one task slice per task.
//
//   build/release/examples/stats_trace [trace.json]
//
// With a path, the trace is kept there: open it at https://ui.perfetto.dev (drop the file on the
// page) to see a track per worker, a slice per task and an arrow per steal. Without one it goes
// to a temporary file, removed at the end.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>  // getpid, for a temporary file name of our own

#include <locus/locus.hpp>

namespace {

constexpr int cutoff = 15;  // fib below this runs serially, without spawning

long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

long fib(int n) {
  if (n < cutoff) return fib_serial(n);
  long a = 0;
  locus::task_group tg;
  // The label names this task's slices in the trace (a string literal: the pointer is kept).
  tg.run([&] { a = fib(n - 1); }, locus::label{"fib"});
  const long b = fib(n - 2);
  tg.wait();
  return a + b;
}

// How many tasks fib(n) spawns: one per call at or above the cutoff.
std::uint64_t spawns_of(int n) {
  return n < cutoff ? 0 : 1 + spawns_of(n - 1) + spawns_of(n - 2);
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (const std::uint64_t x : v) s += x;
  return s;
}

int failures = 0;
void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("  check failed: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool keep = argc > 1;
  const std::string path = keep ? argv[1]
                                : (std::filesystem::temp_directory_path() /
                                   ("locus_stats_trace_" + std::to_string(::getpid()) + ".json"))
                                      .string();
  constexpr int n = 30;
  const std::uint64_t expected_spawns = spawns_of(n);

  std::uint64_t spawns = 0;
  {
    locus::runtime rt{locus::options{.trace = path}};  // scheduler, workers from the environment
    const long result = rt.exec([] { return fib(n); });
    check(result == fib_serial(n), "fib's result");

    const locus::stats s = rt.stats();
    const locus::worker_stats total = s.total();              // every worker's counters summed
    const std::uint64_t steals = sum(total.steals_by_level);  // successful steals, all levels
    for (const locus::worker_stats& w : s.workers) {
      std::printf("  worker %d: busy %.1f ms, idle %.1f ms, %llu spawns, %llu steals\n", w.worker,
                  w.busy_s * 1e3, w.idle_s * 1e3, static_cast<unsigned long long>(w.spawns),
                  static_cast<unsigned long long>(sum(w.steals_by_level)));
    }
    spawns = total.spawns;
    // Spawns are counted exactly, whichever worker ran them; a steal takes one item or more.
    check(spawns == expected_spawns, "stats().total().spawns == the spawns fib made");
    check(static_cast<int>(s.workers.size()) == rt.num_workers(), "one entry per worker");
    check(total.busy_s > 0, "some busy time");
    check(steals <= total.stolen_items, "steals take at least one item each");
    check(s.suppressed_exceptions == 0, "no exception");
  }  // the runtime ends here and writes the trace

  // The trace is one JSON event per line: count the task slices that begin ("ph":"B").
  std::ifstream in(path);
  std::string line, first, last;
  std::uint64_t task_slices = 0, fib_slices = 0, steal_arrows = 0;
  while (std::getline(in, line)) {
    if (first.empty()) first = line;
    if (!line.empty()) last = line;
    if (line.find(R"("ph":"B","cat":"task")") != std::string::npos) {
      ++task_slices;
      if (line.find(R"("name":"fib")") != std::string::npos) ++fib_slices;
    }
    if (line.find(R"("ph":"s","cat":"steal")") != std::string::npos) ++steal_arrows;
  }
  check(first.starts_with(R"({"displayTimeUnit":"ns","traceEvents":[)"), "the trace's header");
  check(last == "]}", "the trace's end");
  check(task_slices == spawns + 1, "one task slice per spawn, plus the root");
  check(fib_slices == spawns, "every spawned task's slice named by its label");
  std::printf("  trace %s: %llu task slices, %llu steal arrows\n", path.c_str(),
              static_cast<unsigned long long>(task_slices),
              static_cast<unsigned long long>(steal_arrows));
  if (!keep) std::filesystem::remove(path);

  std::printf("stats-trace: fib(%d) spawned %llu tasks, counted in stats and trace, %s\n", n,
              static_cast<unsigned long long>(spawns), failures == 0 ? "ok" : "WRONG");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
