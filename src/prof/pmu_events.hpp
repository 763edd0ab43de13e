// Which events stand for each PMU counter locus reports, on which CPU.
#pragma once

#include <string>
#include <vector>

#include "prof/perf_event.hpp"

namespace locus::prof {

struct cpu_identity {
  std::string vendor;  // cpuid vendor string ("GenuineIntel", "AuthenticAMD"), empty off x86
  unsigned family = 0, model = 0;  // display family and model (extended fields folded in)
};
cpu_identity this_cpu();

// One reported counter: the events to try in order (the first the kernel accepts counts).
// no_event_reason says why this CPU has no (or no better) event for it: the whole reason when
// there are no candidates, a note after the kernel's refusals otherwise.
struct counter_request {
  std::string name;
  int group = 0;  // counters of one group are scheduled on the PMU together
  std::vector<event_spec> candidates;
  std::string no_event_reason;
};

// Group 0: instructions, cycles, L1D read misses, L2 misses, LLC misses (hardware); group 1:
// task_clock_ns (software: the CPU time a worker thread ran, and proof that the counting
// machinery works where the hardware ones are refused).
std::vector<counter_request> default_counters(const cpu_identity& cpu);

// task-clock alone, as the default set's software group opens it.
counter_request task_clock_counter();

}  // namespace locus::prof
