#include "harness/idle.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include <locus/locus.hpp>

#include "harness/benchmark.hpp"
#include "harness/platform.hpp"

namespace locus_bench {
namespace {

double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; };
  return secs(u.ru_utime) + secs(u.ru_stime);
}

long busy_fib(int n) {
  if (n < 2) return n;
  long a = 0;
  locus::task_group tg;
  tg.run([&] { a = busy_fib(n - 1); });
  const long b = busy_fib(n - 2);
  tg.wait();
  return a + b;
}

int parse_int(const std::string& flag, const std::string& value, int lo, int hi) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(value, &used);
    if (used == value.size() && v >= lo && v <= hi) return v;
  } catch (const std::exception&) {
  }
  throw usage_error(flag + " expects an integer from " + std::to_string(lo) + " to " +
                    std::to_string(hi) + ", not '" + value + "'");
}

}  // namespace

int run_idle_probe(const std::vector<std::string>& args, std::ostream& out) {
  int workers = available_cpus();
  int reps = 7;
  int seconds = 1;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (i + 1 >= args.size()) throw usage_error("idle: " + flag + " needs a value");
    const std::string& value = args[++i];
    if (flag == "--workers") {
      workers = parse_int(flag, value, 1, 4096);
    } else if (flag == "--reps") {
      reps = parse_int(flag, value, 1, 1000);
    } else if (flag == "--seconds") {
      seconds = parse_int(flag, value, 1, 3600);
    } else {
      throw usage_error("idle: unknown flag '" + flag +
                        "'; accepted: --workers, --reps, --seconds");
    }
  }
  locus::runtime rt{locus::options{.workers = workers}};
  std::vector<double> used;
  for (int r = 0; r < reps; ++r) {
    const long result = rt.exec([] { return busy_fib(27); });
    if (result != 196418) {
      out << "idle: parallel phase computed fib(27) = " << result << ", expected 196418\n";
      return 1;
    }
    // The workers are still spinning down: the measurement covers the whole idle period
    // that follows the phase, spin, back-off and sleep included.
    const double before = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    used.push_back(process_cpu_seconds() - before);
    char line[128];
    std::snprintf(line, sizeof line, "rep %d: %.4f CPU-s used in %d s idle (%d workers)\n", r + 1,
                  used.back(), seconds, workers);
    out << line;
  }
  std::vector<double> sorted = used;
  std::sort(sorted.begin(), sorted.end());
  char line[160];
  std::snprintf(
      line, sizeof line,
      "idle CPU over %d s after a parallel phase: median %.4f s, min %.4f s, max %.4f s\n", seconds,
      sorted[sorted.size() / 2], sorted.front(), sorted.back());
  out << line;
  return 0;
}

}  // namespace locus_bench
