// The scheduler's clock (sched/clock.hpp) reads CLOCK_MONOTONIC's time, through the time-stamp
// counter once calibrated: the two must agree, from every CPU.
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>

#include "locus/locus.hpp"
#include "sched/clock.hpp"

namespace {

using locus::detail::clock_ns;
using locus::detail::monotonic_ns;

// |clock_ns() - CLOCK_MONOTONIC| at one moment, bracketed by two monotonic readings.
std::uint64_t distance_to_monotonic() {
  const std::uint64_t before = monotonic_ns();
  const std::uint64_t ours = clock_ns();
  const std::uint64_t after = monotonic_ns();
  if (ours < before) return before - ours;
  if (ours > after) return ours - after;
  return 0;
}

TEST(SchedulerClock, AgreesWithTheMonotonicClockAfterCalibration) {
  locus::detail::calibrate_clock();
  locus::detail::calibrate_clock();  // once per process: a second call changes nothing
  // A rate off by 0.1% would be 50 us apart after 50 ms; calibration over 1 ms is far closer.
  EXPECT_LT(distance_to_monotonic(), 20'000u);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_LT(distance_to_monotonic(), 50'000u);
  // On every CPU this thread may use (the counter is synchronized where the kernel keeps time
  // with it), and never backwards on one thread.
  cpu_set_t own;
  ASSERT_EQ(sched_getaffinity(0, sizeof own, &own), 0);
  std::uint64_t last = clock_ns();
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &own)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) continue;
    EXPECT_LT(distance_to_monotonic(), 50'000u) << "cpu " << cpu;
    const std::uint64_t now = clock_ns();
    EXPECT_GE(now, last) << "cpu " << cpu;
    last = now;
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof own, &own), 0);
}

TEST(SchedulerClock, ARuntimeCalibratesIt) {
  { locus::runtime rt{locus::options{.workers = 1}}; }
#if defined(__x86_64__)
  std::ifstream sources("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  sources >> source;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string flags;
  while (std::getline(cpuinfo, flags) && !flags.starts_with("flags")) {
  }
  EXPECT_EQ(locus::detail::scheduler_clock.ready.load(),
            locus::detail::counter_keeps_monotonic_time(source, flags))
      << source;
#endif
}

TEST(SchedulerClock, TrustsTheCounterWhereTheKernelsTimeComesFromIt) {
  using locus::detail::counter_keeps_monotonic_time;
  const std::string invariant = "flags\t\t: fpu tsc constant_tsc rep_good nopl nonstop_tsc cpuid";
  EXPECT_TRUE(counter_keeps_monotonic_time("tsc", ""));
  EXPECT_TRUE(counter_keeps_monotonic_time("kvm-clock", invariant));
  // kvm-clock scales the counter, which is a fixed rate only where it never stops or slows.
  EXPECT_FALSE(counter_keeps_monotonic_time("kvm-clock", "flags\t\t: fpu tsc constant_tsc cpuid"));
  EXPECT_FALSE(counter_keeps_monotonic_time("kvm-clock", "flags\t\t: fpu tsc nonstop_tsc"));
  // Flags are whole words: a longer flag that contains one is not it.
  EXPECT_FALSE(counter_keeps_monotonic_time("kvm-clock",
                                            "flags\t\t: fpu xconstant_tsc nonstop_tsc_deadline"));
  EXPECT_TRUE(counter_keeps_monotonic_time("kvm-clock", "constant_tsc nonstop_tsc"));
  for (const char* other : {"hpet", "acpi_pm", "xen", "hyperv_clocksource_tsc_page", ""}) {
    EXPECT_FALSE(counter_keeps_monotonic_time(other, invariant)) << other;
  }
}

}  // namespace
