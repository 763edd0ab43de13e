#include "sched/clock.hpp"

#include <fstream>
#include <mutex>
#include <string>

namespace locus::detail {

counter_clock scheduler_clock;

namespace {

#if defined(__x86_64__)
bool kernel_keeps_time_with_the_counter() {
  std::ifstream sources("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  if (!(sources >> source)) return false;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.starts_with("flags")) break;
  }
  return counter_keeps_monotonic_time(source, line);
}

struct clock_pair {
  std::uint64_t tick = 0, ns = 0;
};

// A counter reading and CLOCK_MONOTONIC read between two counter readings close together, so that
// a preemption inside the pair is seen and the pair taken again.
clock_pair read_pair() noexcept {
  clock_pair best;
  std::uint64_t narrowest = ~std::uint64_t{0};
  for (int i = 0; i < 8; ++i) {
    const std::uint64_t before = __builtin_ia32_rdtsc();
    const std::uint64_t ns = monotonic_ns();
    const std::uint64_t after = __builtin_ia32_rdtsc();
    if (after - before < narrowest) {
      narrowest = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}
#endif

bool has_word(std::string_view text, std::string_view word) noexcept {
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    const bool starts = at == 0 || text[at - 1] == ' ' || text[at - 1] == '\t';
    const std::size_t end = at + word.size();
    if (starts && (end == text.size() || text[end] == ' ' || text[end] == '\t')) return true;
  }
  return false;
}

}  // namespace

// The kernel keeps CLOCK_MONOTONIC with the counter only once it found the counter constant-rate
// and synchronized across CPUs; kvm-clock is the guest's counter scaled by parameters the host
// keeps consistent across the guest's CPUs. Either way the counter and CLOCK_MONOTONIC then differ
// by a fixed rate, which calibrate_clock measures.
bool counter_keeps_monotonic_time(std::string_view clocksource,
                                  std::string_view cpu_flags) noexcept {
  if (clocksource == "tsc") return true;
  return clocksource == "kvm-clock" && has_word(cpu_flags, "constant_tsc") &&
         has_word(cpu_flags, "nonstop_tsc");
}

void calibrate_clock() noexcept {
#if defined(__x86_64__)
  static std::once_flag once;
  std::call_once(once, [] {
    if (!kernel_keeps_time_with_the_counter()) return;
    constexpr std::uint64_t window_ns = 1'000'000;
    const clock_pair first = read_pair();
    clock_pair last = first;
    while (last.ns - first.ns < window_ns) last = read_pair();
    if (last.tick <= first.tick) return;
    scheduler_clock.tick0 = last.tick;
    scheduler_clock.ns0 = last.ns;
    scheduler_clock.ns_per_tick =
        static_cast<double>(last.ns - first.ns) / static_cast<double>(last.tick - first.tick);
    scheduler_clock.ready.store(true, std::memory_order_release);
  });
#endif
}

}  // namespace locus::detail
