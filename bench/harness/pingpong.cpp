#include "harness/pingpong.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "harness/benchmark.hpp"
#include "harness/platform.hpp"

namespace locus_bench {
namespace {

void pin_this_thread(int cpu) {
  if (!bind_this_thread(cpu)) {
    throw std::runtime_error("pingpong: cannot run on CPU " + std::to_string(cpu));
  }
}

int parse_nonnegative(const std::string& flag, std::string_view text, int max) {
  int v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc{} || r.ptr != text.data() + text.size() || v < 0 ||
      v > max) {
    throw usage_error("pingpong: " + flag + ": invalid value '" + std::string(text) +
                      "': expected an integer in [0, " + std::to_string(max) + "]");
  }
  return v;
}

}  // namespace

double cache_line_round_trip_ns(int cpu_a, int cpu_b, int round_trips, int batches) {
  // The calling thread runs on cpu_a for the measurement, then where it ran before.
  cpu_set_t before;
  CPU_ZERO(&before);
  pthread_getaffinity_np(pthread_self(), sizeof before, &before);
  pin_this_thread(cpu_a);
  // The line the two threads hand back and forth, alone in its cache line.
  alignas(64) std::atomic<int> turn{0};
  std::atomic<int> ready{0};  // 1: the other thread runs on cpu_b; -1: it could not
  const long total = static_cast<long>(round_trips) * batches;
  std::thread other([&] {
    try {
      pin_this_thread(cpu_b);
    } catch (const std::runtime_error&) {
      ready.store(-1, std::memory_order_release);
      return;
    }
    ready.store(1, std::memory_order_release);
    for (long i = 0; i < total; ++i) {
      while (turn.load(std::memory_order_acquire) != 1) {
      }
      turn.store(0, std::memory_order_release);
    }
  });
  while (ready.load(std::memory_order_acquire) == 0) {
  }
  std::vector<double> ns;
  if (ready.load(std::memory_order_acquire) > 0) {
    for (int b = 0; b < batches; ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < round_trips; ++i) {
        turn.store(1, std::memory_order_release);
        while (turn.load(std::memory_order_acquire) != 0) {
        }
      }
      const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - t0;
      ns.push_back(took.count() / round_trips);
    }
  }
  other.join();
  pthread_setaffinity_np(pthread_self(), sizeof before, &before);
  if (ns.empty()) throw std::runtime_error("pingpong: cannot run on CPU " + std::to_string(cpu_b));
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

int run_pingpong(const std::vector<std::string>& args, std::ostream& out) {
  const std::vector<int> allowed = cpus_allowed();
  int a = -1, b = -1, round_trips = 100000;
  constexpr int batches = 5;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag != "--cpus" && flag != "--round-trips") {
      throw usage_error("pingpong: unknown option '" + flag + "'; accepted: --cpus, --round-trips");
    }
    if (i + 1 >= args.size()) throw usage_error("pingpong: " + flag + " needs a value");
    const std::string& value = args[++i];
    if (flag == "--round-trips") {
      round_trips = std::max(1, parse_nonnegative(flag, value, 100000000));
      continue;
    }
    const auto comma = value.find(',');
    if (comma == std::string::npos) {
      throw usage_error("pingpong: --cpus: invalid value '" + value + "': expected A,B");
    }
    a = parse_nonnegative(flag, std::string_view(value).substr(0, comma), CPU_SETSIZE - 1);
    b = parse_nonnegative(flag, std::string_view(value).substr(comma + 1), CPU_SETSIZE - 1);
    for (const int c : {a, b}) {
      if (std::find(allowed.begin(), allowed.end(), c) == allowed.end()) {
        throw usage_error("pingpong: --cpus: CPU " + std::to_string(c) +
                          " is not one this process may use");
      }
    }
    if (a == b) throw usage_error("pingpong: --cpus: two different CPUs, not " + value);
  }
  if (a < 0) {
    if (allowed.size() < 2) {
      throw usage_error("pingpong: this process may use only one CPU; it needs two");
    }
    a = allowed[0];
    b = allowed[1];
  }
  const double ns = cache_line_round_trip_ns(a, b, round_trips, batches);
  char line[160];
  std::snprintf(line, sizeof line,
                "cpu %d <-> cpu %d: cache-line round trip %.1f ns (median of %d x %d)\n", a, b, ns,
                batches, round_trips);
  out << line;
  return 0;
}

}  // namespace locus_bench
