#include "sched/clock.hpp"

#include <fstream>
#include <mutex>
#include <string>

namespace locus::detail {

counter_clock scheduler_clock;

namespace {

#if defined(__x86_64__)
// The kernel keeps CLOCK_MONOTONIC with the counter only once it found the counter constant-rate
// and synchronized across CPUs; then the counter and CLOCK_MONOTONIC differ by a fixed rate.
bool kernel_keeps_time_with_the_counter() {
  std::ifstream in("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  return static_cast<bool>(in >> source) && source == "tsc";
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

}  // namespace

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
