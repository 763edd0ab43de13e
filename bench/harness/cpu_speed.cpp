#include "harness/cpu_speed.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <thread>

#include "harness/benchmark.hpp"
#include "harness/platform.hpp"

namespace locus_bench {
namespace {

using clock_type = std::chrono::steady_clock;

// The kernel: one 32 x 32 block update inner -= row * col of sparselu's bmod (65,536 flops on
// 12 KB, in L1). The values stay normal floats for billions of calls: each call takes 1/1024
// off every entry, so no call runs into the slow path of denormals.
constexpr int order = 32;
// One line of output each.
constexpr int max_windows = 100'000;
struct alignas(64) blocks {
  float row[order * order];
  float col[order * order];
  float inner[order * order];
};

// Where each thread leaves one entry of its result, so that the updates are not dead code.
std::atomic<float> result_sink{0};

[[gnu::noinline]] void block_update(blocks& b) {
  for (int i = 0; i < order; ++i) {
    for (int k = 0; k < order; ++k) {
      const float x = b.row[i * order + k];
      for (int j = 0; j < order; ++j) b.inner[i * order + j] -= x * b.col[k * order + j];
    }
  }
}

double median_of(std::vector<float>& v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

[[noreturn]] void bad_value(const std::string& flag, const std::string& value,
                            const std::string& expected) {
  throw usage_error("cpuspeed: " + flag + ": invalid value '" + value + "': expected " + expected);
}

int parse_int_in(const std::string& flag, const std::string& text, int lo, int hi) {
  int v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc{} || r.ptr != text.data() + text.size() || v < lo ||
      v > hi) {
    bad_value(flag, text, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

double parse_seconds(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || !(v > 0) || v > 3600) {
    bad_value("--seconds", text, "a number of seconds in (0, 3600]");
  }
  return v;
}

std::vector<int> parse_cpus(const std::string& text, const std::vector<int>& allowed) {
  std::vector<int> cpus;
  std::set<int> seen;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const int c = parse_int_in("--cpus", text.substr(begin, comma - begin), 0, CPU_SETSIZE - 1);
    if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
      throw usage_error("cpuspeed: --cpus: CPU " + std::to_string(c) +
                        " is not one this process may use");
    }
    if (!seen.insert(c).second) {
      throw usage_error("cpuspeed: --cpus: CPU " + std::to_string(c) + " is named twice");
    }
    cpus.push_back(c);
    begin = comma + 1;
  }
  return cpus;
}

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char line[128];
  std::snprintf(line, sizeof line, fmt, a, b, c);
  return line;
}

}  // namespace

cpu_speed_series measure_cpu_speeds(const std::vector<int>& cpus, int window_ms, int windows) {
  const std::size_t n = cpus.size();
  // Per CPU, per window: how long each call that ended in the window took.
  std::vector<std::vector<std::vector<float>>> samples(
      n, std::vector<std::vector<float>>(static_cast<std::size_t>(windows)));
  std::vector<std::string> failures(n);
  std::atomic<std::size_t> ready{0};
  std::atomic<bool> go{false};
  clock_type::time_point start;
  const auto window = std::chrono::milliseconds(window_ms);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      const int cpu = cpus[t];
      const bool pinned = bind_this_thread(cpu);
      if (!pinned) failures[t] = "cpuspeed: cannot run on CPU " + std::to_string(cpu);
      auto b = std::make_unique<blocks>();
      std::fill(std::begin(b->row), std::end(b->row), 1.0F / 1024);
      std::fill(std::begin(b->col), std::end(b->col), 1.0F / order);
      std::fill(std::begin(b->inner), std::end(b->inner), 1.0F);
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      if (!pinned) return;
      const auto end = start + window * windows;
      for (auto t0 = clock_type::now(); t0 < end;) {
        block_update(*b);
        const auto t1 = clock_type::now();
        if (sched_getcpu() != cpu) {
          failures[t] = "cpuspeed: a thread pinned to CPU " + std::to_string(cpu) + " ran on CPU " +
                        std::to_string(sched_getcpu());
          return;
        }
        const auto w = static_cast<std::size_t>((t1 - start) / window);
        if (w < samples[t].size()) {
          samples[t][w].push_back(std::chrono::duration<float, std::micro>(t1 - t0).count());
        }
        t0 = t1;
      }
      result_sink.store(b->inner[0], std::memory_order_relaxed);
    });
  }
  while (ready.load() < n) std::this_thread::yield();
  start = clock_type::now();
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  for (const std::string& f : failures) {
    if (!f.empty()) throw std::runtime_error(f);
  }
  cpu_speed_series s;
  s.cpus = cpus;
  s.window_ms = window_ms;
  s.window_us.assign(static_cast<std::size_t>(windows), std::vector<double>(n));
  for (std::size_t w = 0; w < s.window_us.size(); ++w) {
    for (std::size_t t = 0; t < n; ++t) s.window_us[w][t] = median_of(samples[t][w]);
  }
  return s;
}

int run_cpu_speed(const std::vector<std::string>& args, std::ostream& out) {
  const std::vector<int> allowed = cpus_allowed();
  std::vector<int> cpus = allowed;
  double seconds = 2;
  int window_ms = 100;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag != "--cpus" && flag != "--seconds" && flag != "--window-ms") {
      throw usage_error("cpuspeed: unknown option '" + flag +
                        "'; accepted: --cpus, --seconds, --window-ms");
    }
    if (i + 1 >= args.size()) throw usage_error("cpuspeed: " + flag + " needs a value");
    const std::string& value = args[++i];
    if (flag == "--cpus") cpus = parse_cpus(value, allowed);
    if (flag == "--seconds") seconds = parse_seconds(value);
    if (flag == "--window-ms") window_ms = parse_int_in(flag, value, 1, 60000);
  }
  if (cpus.empty()) throw usage_error("cpuspeed: this process may use no CPU it can name");
  const int windows = static_cast<int>(seconds * 1000 / window_ms);
  if (windows < 1) {
    throw usage_error("cpuspeed: --seconds must cover at least one --window-ms window");
  }
  if (windows > max_windows) {
    throw usage_error("cpuspeed: --seconds / --window-ms gives " + std::to_string(windows) +
                      " windows; at most " + std::to_string(max_windows));
  }
  const cpu_speed_series s = measure_cpu_speeds(cpus, window_ms, windows);

  out << "one 32x32 block update (65,536 flops in L1) on CPUs";
  for (std::size_t t = 0; t < cpus.size(); ++t) out << (t ? "," : " ") << cpus[t];
  out << " at once, " << windows << " windows of " << window_ms
      << " ms: microseconds per update, median per window\n";
  out << "window ms";
  for (const int c : cpus) {
    const std::string name = "cpu " + std::to_string(c);
    out << std::string(name.size() < 9 ? 9 - name.size() : 1, ' ') << name;
  }
  out << "  slowest/fastest\n";
  int uneven = 0;
  double widest = 1;
  for (std::size_t w = 0; w < s.window_us.size(); ++w) {
    out << format("%9.0f", static_cast<double>(w) * window_ms);
    double lo = 0, hi = 0;
    for (const double us : s.window_us[w]) {
      out << format("  %7.2f", us);
      if (us > 0) {
        lo = lo == 0 ? us : std::min(lo, us);
        hi = std::max(hi, us);
      }
    }
    const double spread = lo > 0 ? hi / lo : 0;
    out << format("  %15.2f\n", spread);
    if (spread > 1.25) ++uneven;
    widest = std::max(widest, spread);
  }
  for (std::size_t t = 0; t < cpus.size(); ++t) {
    std::vector<float> per_window;
    for (const auto& row : s.window_us) {
      if (row[t] > 0) per_window.push_back(static_cast<float>(row[t]));
    }
    if (per_window.empty()) continue;
    const auto [lo, hi] = std::minmax_element(per_window.begin(), per_window.end());
    const double lo_us = *lo, hi_us = *hi;
    out << "cpu " << cpus[t]
        << format(": median %.2f us, windows %.2f to %.2f us\n", median_of(per_window), lo_us,
                  hi_us);
  }
  out << "slowest/fastest above 1.25 in " << uneven << " of " << windows << " windows"
      << format(", at most %.2f\n", widest);
  return 0;
}

}  // namespace locus_bench
