// PMU counters (src/prof/pmu*, LOCUS_PMU, locus-bench --pmu): the real perf_event path with
// software events (skipped, with the kernel's reason, where even those are refused), hardware
// counters that are either counted or "unavailable: <reason>" and never a silent 0, refusals
// simulated with an injected perf_event_open, sums, and the JSON of stats and locus-bench.
// One suite, "pmu", so that `ctest -R pmu` selects them all.
#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <locus/locus.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "harness/cli.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "prof/pmu.hpp"
#include "prof/pmu_events.hpp"

namespace {

using locus::pmu_value;
using locus::prof::counter_request;
using locus::prof::thread_counters;

const std::vector<std::string> kHardware{"instructions", "cycles", "l1d_misses", "l2_misses",
                                         "llc_misses"};

// Work the compiler cannot remove: about `n` dependent floating-point steps plus a walk over a
// buffer larger than the caches, so that every counter has something to count.
double busy(long n) {
  static std::vector<double> buffer(8u << 20, 1.0);  // 64 MiB
  volatile double acc = 0;
  for (long i = 0; i < n; ++i) acc = acc + static_cast<double>(i) * 0.5;
  double sum = 0;
  for (std::size_t i = 0; i < buffer.size(); i += 8) sum += buffer[i];
  return acc + sum;
}

const pmu_value& find(const std::vector<pmu_value>& values, const std::string& name) {
  for (const auto& v : values) {
    if (v.name == name) return v;
  }
  static const pmu_value missing{};
  ADD_FAILURE() << "no PMU counter named " << name;
  return missing;
}

// The invariant of the whole feature: a value, or a reason; never a value-less counter without
// one, and the text of an unavailable counter starts with "unavailable: ".
void expect_value_or_reason(const pmu_value& v) {
  SCOPED_TRACE(v.name);
  if (v.available()) {
    EXPECT_TRUE(v.unavailable.empty());
    EXPECT_FALSE(v.event.empty()) << "an available counter says which event it counts";
  } else {
    EXPECT_FALSE(v.unavailable.empty()) << "an unavailable counter says why";
    EXPECT_EQ(v.text().rfind("unavailable: ", 0), 0u) << v.text();
  }
}

counter_request software(const char* name, std::uint64_t config, const char* label) {
  return {name, 1, {{PERF_TYPE_SOFTWARE, config, label}}, {}};
}

// ---- the real perf_event path, with software events ------------------------------------------

// The kernel's answer for task-clock on this thread: empty when it counts.
std::string software_refusal() {
  const auto v = thread_counters::open_here({locus::prof::task_clock_counter()}).read().at(0);
  return v.event.empty() ? v.unavailable : "";
}

#define SKIP_WITHOUT_SOFTWARE_EVENTS()                                              \
  do {                                                                              \
    if (const std::string why = software_refusal(); !why.empty()) {                 \
      GTEST_SKIP() << "the kernel refuses even software perf events here: " << why; \
    }                                                                               \
  } while (0)

TEST(pmu, RealSoftwareEventCountsABusyLoopAndStopsAtStop) {
  SKIP_WITHOUT_SOFTWARE_EVENTS();
  auto tc = thread_counters::open_here({locus::prof::task_clock_counter()});
  tc.start();
  busy(20'000'000);
  tc.stop();
  const pmu_value stopped = tc.read().at(0);
  ASSERT_TRUE(stopped.available()) << stopped.text();
  EXPECT_GT(*stopped.value, 0u) << "task-clock over a busy loop";
  EXPECT_GT(stopped.enabled_ns, 0u);
  EXPECT_EQ(stopped.running_ns, stopped.enabled_ns) << "a software event is never multiplexed";
  EXPECT_DOUBLE_EQ(stopped.running_ratio(), 1.0);

  busy(20'000'000);
  const pmu_value later = tc.read().at(0);
  ASSERT_TRUE(later.available());
  EXPECT_EQ(*later.value, *stopped.value) << "nothing counts after stop()";
  EXPECT_EQ(later.enabled_ns, stopped.enabled_ns);

  // start() resets: an empty region counts less than the busy one did.
  tc.start();
  tc.stop();
  const pmu_value empty = tc.read().at(0);
  ASSERT_TRUE(empty.available());
  EXPECT_LT(*empty.value, *stopped.value);
}

TEST(pmu, RealGroupReadMatchesEachMemberById) {
  SKIP_WITHOUT_SOFTWARE_EVENTS();
  // Two members of one group, read with one PERF_FORMAT_GROUP read.
  auto tc = thread_counters::open_here(
      {software("task_clock_ns", PERF_COUNT_SW_TASK_CLOCK, "software task-clock"),
       software("page_faults", PERF_COUNT_SW_PAGE_FAULTS, "software page-faults"),
       software("cpu_clock_ns", PERF_COUNT_SW_CPU_CLOCK, "software cpu-clock")});
  tc.start();
  const std::vector<char> fresh(32u << 20, 1);  // first touches fault
  busy(10'000'000 + fresh[12345]);
  tc.stop();
  const auto v = tc.read();
  ASSERT_EQ(v.size(), 3u);
  for (const auto& x : v) {
    SCOPED_TRACE(x.name);
    ASSERT_TRUE(x.available()) << x.text();
    EXPECT_GT(*x.value, 0u);
  }
}

TEST(pmu, RealNotStartedIsUnavailableNotZero) {
  SKIP_WITHOUT_SOFTWARE_EVENTS();
  const auto v = thread_counters::open_here({locus::prof::task_clock_counter()}).read().at(0);
  EXPECT_FALSE(v.available());
  EXPECT_NE(v.unavailable.find("not started"), std::string::npos) << v.unavailable;
}

// ---- hardware counters on this machine ------------------------------------------------------

TEST(pmu, HardwareEachCounterIsCountedOrUnavailableWithAReason) {
  auto tc = thread_counters::open_here(locus::prof::default_counters(locus::prof::this_cpu()));
  tc.start();
  busy(20'000'000);
  tc.stop();
  const auto values = tc.read();
  ASSERT_EQ(values.size(), kHardware.size() + 1);
  for (const auto& name : kHardware) {
    const pmu_value& v = find(values, name);
    expect_value_or_reason(v);
    std::printf("  %-13s %s%s%s\n", name.c_str(), v.text().c_str(), v.available() ? " via " : "",
                v.available() ? v.event.c_str() : "");
    // Instructions, cycles and L1D misses over this loop cannot be 0 where they are counted.
    if (v.available() && name != "l2_misses" && name != "llc_misses") {
      EXPECT_GT(*v.value, 0u);
    }
  }
}

TEST(pmu, HardwareWithoutACpuPmuEveryHardwareCounterIsUnavailable) {
  namespace fs = std::filesystem;
  if (fs::exists("/sys/bus/event_source/devices/cpu") ||
      fs::exists("/sys/bus/event_source/devices/cpu_core") ||
      !fs::exists("/sys/bus/event_source/devices")) {
    GTEST_SKIP() << "this kernel exposes a CPU PMU (or no sysfs): hardware counters may count";
  }
  auto tc = thread_counters::open_here(locus::prof::default_counters(locus::prof::this_cpu()));
  tc.start();
  busy(1'000'000);
  tc.stop();
  const auto values = tc.read();
  for (const auto& name : kHardware) {
    const pmu_value& v = find(values, name);
    SCOPED_TRACE(name);
    EXPECT_FALSE(v.available()) << v.text();
    EXPECT_FALSE(v.unavailable.empty());
  }
}

// ---- refusals, simulated ---------------------------------------------------------------------

std::atomic<int> g_refusal{ENOENT};
int refuse_all(const locus::prof::event_spec&, int) {
  return -g_refusal.load();
}
// Hardware refused, software opened for real.
int refuse_hardware(const locus::prof::event_spec& spec, int group_fd) {
  if (spec.type == PERF_TYPE_SOFTWARE) return locus::prof::open_for_this_thread(spec, group_fd);
  return -EACCES;
}

TEST(pmu, RefusedEveryCounterSaysWhyWithTheKernelsError) {
  for (int error : {ENOENT, EACCES, EPERM, ENOSYS, EMFILE, EINVAL}) {
    g_refusal = error;
    const std::string text = std::system_category().message(error);
    auto tc = thread_counters::open_here(locus::prof::default_counters(locus::prof::this_cpu()),
                                         &refuse_all);
    tc.start();
    tc.stop();
    for (const auto& v : tc.read()) {
      SCOPED_TRACE(v.name + " refused with " + text);
      EXPECT_FALSE(v.available());
      expect_value_or_reason(v);
      // The L2 counter may have no candidate on this CPU; every other reason quotes the errno.
      if (v.name != "l2_misses") {
        EXPECT_NE(v.unavailable.find(text), std::string::npos) << v.unavailable;
      }
      if (error == EACCES && v.name == "instructions") {
        EXPECT_NE(v.unavailable.find("perf_event_paranoid"), std::string::npos) << v.unavailable;
      }
    }
  }
}

TEST(pmu, RefusedUnknownCpuHasNoL2Event) {
  const auto set = locus::prof::default_counters(locus::prof::cpu_identity{"SomeVendor", 1, 2});
  const counter_request& l2 = set.at(3);
  ASSERT_EQ(l2.name, "l2_misses");
  EXPECT_TRUE(l2.candidates.empty());
  EXPECT_NE(l2.no_event_reason.find("no generic L2 event"), std::string::npos);
  const auto v = thread_counters::open_here({l2}).read().at(0);
  EXPECT_EQ(v.text().rfind("unavailable: no generic L2 event", 0), 0u) << v.text();
}

TEST(pmu, RefusedKnownCpusGetTheirRawL2Event) {
  const auto amd =
      locus::prof::default_counters(locus::prof::cpu_identity{"AuthenticAMD", 0x19, 1});
  ASSERT_EQ(amd.at(3).candidates.size(), 1u);
  EXPECT_EQ(amd.at(3).candidates[0].type, static_cast<std::uint32_t>(PERF_TYPE_RAW));
  EXPECT_EQ(amd.at(3).candidates[0].config, 0x0964u);
  EXPECT_FALSE(amd.at(4).no_event_reason.empty()) << "AMD has no per-thread LLC event";
  const auto intel =
      locus::prof::default_counters(locus::prof::cpu_identity{"GenuineIntel", 6, 0x55});
  ASSERT_EQ(intel.at(3).candidates.size(), 1u);
  EXPECT_EQ(intel.at(3).candidates[0].config, 0x3f24u);
  EXPECT_EQ(intel.at(4).candidates.size(), 2u) << "LL read misses, then generic cache-misses";
}

TEST(pmu, RefusedLeaderLeavesTheSoftwareGroupCounting) {
  SKIP_WITHOUT_SOFTWARE_EVENTS();
  auto tc = thread_counters::open_here(locus::prof::default_counters(locus::prof::this_cpu()),
                                       &refuse_hardware);
  tc.start();
  busy(5'000'000);
  tc.stop();
  const auto v = tc.read();
  for (const auto& name : kHardware) EXPECT_FALSE(find(v, name).available());
  const pmu_value& clock = find(v, "task_clock_ns");
  ASSERT_TRUE(clock.available()) << clock.text();
  EXPECT_GT(*clock.value, 0u);
}

// ---- sums and formatting ---------------------------------------------------------------------

pmu_value counted(const char* name, std::uint64_t n, std::uint64_t enabled, std::uint64_t running) {
  pmu_value v;
  v.name = name;
  v.event = "test";
  v.value = n;
  v.enabled_ns = enabled;
  v.running_ns = running;
  return v;
}
pmu_value refused(const char* name, const char* why) {
  pmu_value v;
  v.name = name;
  v.unavailable = why;
  return v;
}

TEST(pmu, StatsSumsAcrossWorkersAndKeepsUnavailable) {
  locus::stats s;
  s.scheduler = "ws";
  s.workers.resize(2);
  s.workers[0].worker = 0;
  s.workers[0].pmu = {counted("instructions", 100, 10, 10), counted("cycles", 7, 10, 5)};
  s.workers[1].worker = 1;
  s.workers[1].pmu = {counted("instructions", 23, 10, 10), refused("cycles", "no PMU")};
  const auto t = s.total();
  ASSERT_EQ(t.pmu.size(), 2u);
  EXPECT_EQ(t.pmu[0].value, std::optional<std::uint64_t>(123));
  EXPECT_EQ(t.pmu[0].enabled_ns, 20u);
  EXPECT_FALSE(t.pmu[1].available()) << "unavailable on one worker: unavailable in the sum";
  EXPECT_EQ(t.pmu[1].unavailable, "no PMU");

  const std::string json = s.to_json();
  EXPECT_NE(json.find(R"("pmu":{"instructions":123,"cycles":"unavailable: no PMU")"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("cycles":7)"), std::string::npos) << "worker 0 counted it" << json;
  EXPECT_NE(json.find(R"("pmu_running_ratio":{"instructions":1.0000,"cycles":0.5000})"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.find(R"("cycles":0,)"), std::string::npos) << json;
  EXPECT_EQ(json.find(R"("cycles":0})"), std::string::npos) << json;

  const std::string text = s.to_text();
  EXPECT_NE(text.find("PMU counters"), std::string::npos) << text;
  EXPECT_NE(text.find("cycles: unavailable: no PMU"), std::string::npos) << text;
}

TEST(pmu, StatsNoPmuKeyWhenOff) {
  locus::runtime rt{locus::options{.workers = 1, .pmu = false}};
  rt.pmu_start();  // no-ops when off
  rt.exec([] { return busy(1000); });
  rt.pmu_stop();
  const auto s = rt.stats();
  EXPECT_TRUE(s.workers.at(0).pmu.empty());
  EXPECT_EQ(s.to_json().find("pmu"), std::string::npos);
  EXPECT_EQ(s.to_text().find("PMU"), std::string::npos);
}

// ---- the runtime: one group per worker, opened by the worker ---------------------------------

TEST(pmu, RuntimePerWorkerCountersOverTheMeasuredRegionOnly) {
  locus::runtime rt{
      locus::options{.workers = 2, .topology = "pack:1 l3:1 l2:2 core:1 pu:1", .pmu = true}};
  {
    const auto before = rt.stats();
    ASSERT_EQ(before.workers.size(), 2u);
    for (const auto& w : before.workers) {
      ASSERT_EQ(w.pmu.size(), kHardware.size() + 1);
      for (const auto& v : w.pmu) {
        expect_value_or_reason(v);
        EXPECT_FALSE(v.available()) << v.name << ": nothing is counted before pmu_start()";
      }
    }
  }
  rt.reset_stats();
  rt.pmu_start();
  rt.exec([] {
    locus::parallel_for(
        0, 64, [](int) { busy(200'000); }, locus::grain{1});
    return 0;
  });
  rt.pmu_stop();
  const auto s = rt.stats();
  for (const auto& w : s.workers) {
    for (const auto& v : w.pmu) expect_value_or_reason(v);
  }
  const auto total = s.total();
  for (const auto& v : total.pmu) expect_value_or_reason(v);
  const std::string json = s.to_json();
  EXPECT_NE(json.find(R"("pmu":{"instructions":)"), std::string::npos) << json;
  for (const auto& name : kHardware) {
    const pmu_value& v = find(total.pmu, name);
    if (!v.available()) {
      EXPECT_NE(json.find("\"" + name + "\":\"unavailable: "), std::string::npos) << json;
      EXPECT_EQ(json.find("\"" + name + "\":0,"), std::string::npos) << json;
    }
  }
  const pmu_value& clock = find(total.pmu, "task_clock_ns");
  if (!clock.available()) GTEST_SKIP() << "software events refused too: " << clock.unavailable;
  EXPECT_GT(*clock.value, 0u) << "the workers ran the loop";

  // Stopped: more work does not change the counts.
  rt.exec([] {
    locus::parallel_for(
        0, 16, [](int) { busy(200'000); }, locus::grain{1});
    return 0;
  });
  EXPECT_EQ(find(rt.stats().total().pmu, "task_clock_ns").value, clock.value);
}

// ---- locus-bench --pmu -----------------------------------------------------------------------

TEST(pmu, BenchFlagParsesAndJsonLinesCarryTheCounters) {
  using namespace locus_bench;
  EXPECT_TRUE(parse_command_line({"run", "fib", "--pmu"}).pmu);
  EXPECT_FALSE(parse_command_line({"run", "fib"}).pmu);
  EXPECT_THROW(parse_command_line({"run", "fib", "--pmu=1"}), usage_error);
  const run_plan p =
      make_plan(parse_command_line({"run", "fib", "--size", "small", "--workers", "2", "--reps",
                                    "2", "--impl", "locus", "--json", "--pmu"}),
                registry::get(), 2);
  EXPECT_TRUE(p.pmu);
  std::ostringstream out, log;
  ASSERT_EQ(execute(p, out, log), 0) << log.str();
  const std::string line = out.str();
  EXPECT_NE(line.find(R"("pmu":{"instructions":)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("task_clock_ns":)"), std::string::npos) << line;
  EXPECT_EQ(line.find("not started"), std::string::npos)
      << "the harness starts the counters around every repetition: " << line;
}

}  // namespace
