// The scheduler's clock: CLOCK_MONOTONIC in nanoseconds, read through the time-stamp counter
// where the kernel itself keeps time with it. Every dispatched task reads the clock several times
// (busy, idle and overhead accounting, the search beat), and clock_gettime through a VM's vDSO
// costs a few times a counter read: on loops of microsecond tasks that shows in the run's time.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace locus::detail {

inline std::uint64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// Set once by calibrate_clock(); until then, and where the counter cannot be trusted (another
// clocksource, another architecture), clock_ns() is clock_gettime.
struct counter_clock {
  std::uint64_t tick0 = 0;  // a counter reading ...
  std::uint64_t ns0 = 0;    // ... and CLOCK_MONOTONIC at the same moment
  double ns_per_tick = 0;
  std::atomic<bool> ready{false};
};
extern counter_clock scheduler_clock;

// Measures the counter's rate against CLOCK_MONOTONIC (about a millisecond, once per process;
// later calls return at once). Thread-safe.
void calibrate_clock() noexcept;

inline std::uint64_t clock_ns() noexcept {
#if defined(__x86_64__)
  if (scheduler_clock.ready.load(std::memory_order_acquire)) {
    const std::uint64_t ticks = __builtin_ia32_rdtsc() - scheduler_clock.tick0;
    return scheduler_clock.ns0 +
           static_cast<std::uint64_t>(static_cast<double>(ticks) * scheduler_clock.ns_per_tick);
  }
#endif
  return monotonic_ns();
}

}  // namespace locus::detail
