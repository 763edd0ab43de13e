#include "prof/pmu_events.hpp"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace locus::prof {
namespace {

constexpr std::uint64_t cache_event(std::uint64_t cache, std::uint64_t op, std::uint64_t result) {
  return cache | (op << 8) | (result << 16);
}

// Intel family 6 models whose L2_RQSTS.MISS is event 0x24, umask 0x3f (Intel's event lists for
// Haswell, Broadwell, Skylake and its successors up to Emerald Rapids). Hybrid parts are left
// out: a raw event there is ambiguous between their two core PMUs.
constexpr unsigned intel_l2_rqsts_miss_models[] = {
    0x3C, 0x3F, 0x45, 0x46,              // Haswell
    0x3D, 0x47, 0x4F, 0x56,              // Broadwell
    0x4E, 0x5E, 0x55, 0x8E, 0x9E, 0xA5,  // Skylake, Kaby/Coffee/Comet Lake, Cascade Lake
    0xA6, 0x7D, 0x7E, 0x6A, 0x6C,        // Comet Lake, Ice Lake
    0x8C, 0x8D, 0x8F, 0xCF,              // Tiger Lake, Sapphire and Emerald Rapids
};

bool is_amd_zen(const cpu_identity& cpu) {
  return cpu.vendor == "AuthenticAMD" && cpu.family >= 0x17 && cpu.family <= 0x1A;
}

std::optional<event_spec> l2_miss_event(const cpu_identity& cpu) {
  if (is_amd_zen(cpu)) {
    // PMCx064 L2CacheReqStat, umask 0x09: instruction and data cache requests that missed in L2
    // (Zen 1 to 5; the kernel's own "cache-misses" on these families is the same event).
    return event_spec{PERF_TYPE_RAW, 0x0964, "raw 0x0964 (AMD l2_cache_req_stat.ic_dc_miss_in_l2)"};
  }
  if (cpu.vendor == "GenuineIntel" && cpu.family == 6 &&
      std::find(std::begin(intel_l2_rqsts_miss_models), std::end(intel_l2_rqsts_miss_models),
                cpu.model) != std::end(intel_l2_rqsts_miss_models)) {
    return event_spec{PERF_TYPE_RAW, 0x3f24, "raw 0x3f24 (Intel L2_RQSTS.MISS)"};
  }
  return std::nullopt;
}

std::string describe(const cpu_identity& cpu) {
  if (cpu.vendor.empty()) return "a CPU locus cannot identify";
  char text[96];
  std::snprintf(text, sizeof text, "%s family 0x%x model 0x%x", cpu.vendor.c_str(), cpu.family,
                cpu.model);
  return text;
}

}  // namespace

cpu_identity this_cpu() {
  cpu_identity cpu;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return cpu;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  cpu.vendor = vendor;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return cpu;
  const unsigned base_family = (a >> 8) & 0xF, base_model = (a >> 4) & 0xF;
  const unsigned ext_family = (a >> 20) & 0xFF, ext_model = (a >> 16) & 0xF;
  cpu.family = base_family == 0xF ? base_family + ext_family : base_family;
  cpu.model = base_family == 0xF || base_family == 6 ? base_model | (ext_model << 4) : base_model;
#endif
  return cpu;
}

counter_request task_clock_counter() {
  return {"task_clock_ns",
          1,
          {{PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "software task-clock"}},
          {}};
}

std::vector<counter_request> default_counters(const cpu_identity& cpu) {
  std::vector<counter_request> set;
  set.push_back({"instructions",
                 0,
                 {{PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "hardware instructions"}},
                 {}});
  set.push_back(
      {"cycles", 0, {{PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "hardware cpu-cycles"}}, {}});
  set.push_back({"l1d_misses",
                 0,
                 {{PERF_TYPE_HW_CACHE,
                   cache_event(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                               PERF_COUNT_HW_CACHE_RESULT_MISS),
                   "hardware cache L1D read miss"}},
                 {}});
  counter_request l2{"l2_misses", 0, {}, {}};
  if (auto e = l2_miss_event(cpu)) {
    l2.candidates.push_back(*e);
  } else {
    l2.no_event_reason = "no generic L2 event, and no raw L2-miss event known for " + describe(cpu);
  }
  set.push_back(std::move(l2));
  counter_request llc{"llc_misses",
                      0,
                      {{PERF_TYPE_HW_CACHE,
                        cache_event(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ,
                                    PERF_COUNT_HW_CACHE_RESULT_MISS),
                        "hardware cache LL read miss"}},
                      {}};
  // The generic "cache-misses" is the fallback where it means the last level (Intel: LLC
  // misses); on AMD Zen the kernel maps it to L2 misses, and the L3 is counted per CCX by an
  // uncore PMU, never per thread.
  if (is_amd_zen(cpu)) {
    llc.no_event_reason =
        "AMD Zen counts L3 misses only per CCX (amd_l3 uncore PMU), not per thread";
  } else {
    llc.candidates.push_back(
        {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "hardware cache-misses (generic)"});
  }
  set.push_back(std::move(llc));
  set.push_back(task_clock_counter());
  return set;
}

}  // namespace locus::prof
