// The scheduler's clock: CLOCK_MONOTONIC in nanoseconds, read through the time-stamp counter
// where the kernel's own time comes from it. Every dispatched task reads the clock several times
// (busy, idle and overhead accounting, the search beat), and clock_gettime through a VM's vDSO
// costs a few times a counter read: on loops of microsecond tasks that shows in the run's time.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#include <string_view>

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

// Whether CLOCK_MONOTONIC advances with the counter at a fixed rate, given the kernel's current
// clocksource and the CPU's flags (/proc/cpuinfo): the kernel keeps time with the counter itself
// ("tsc"), or a KVM guest's kvm-clock, which is the counter scaled by the host, on a CPU whose
// counter runs at one rate whatever the core's frequency and sleep state (constant_tsc and
// nonstop_tsc). Such guests are often booted with the counter marked unstable as a clocksource,
// which leaves their clock_gettime several times slower than a counter read.
bool counter_keeps_monotonic_time(std::string_view clocksource,
                                  std::string_view cpu_flags) noexcept;

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
