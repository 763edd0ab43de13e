// Per-worker scheduling statistics (busy / idle / overhead as defined in ADWS §6.1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace locus {

struct worker_stats {
  int worker = 0;
  // busy: running tasks (user code, including the spawn and join fast paths inside them);
  // idle: looking for work with an empty local queue; overhead: the rest of the scheduler loop
  // (taking a found item, stack set-up, resuming it, releasing finished stacks).
  double busy_s = 0, idle_s = 0, overhead_s = 0;
  std::uint64_t spawns = 0;          // child-first and parent-first spawns
  std::uint64_t suspensions = 0;     // joins that had to suspend the waiting task
  std::uint64_t local_resumes = 0;   // own continuations taken back by the scheduler loop
  std::uint64_t sleeps = 0;          // times the worker went to sleep
  std::uint64_t mailbox_pushes = 0;  // items sent to another worker (policies that push work)
  // Indexed by topology distance level between thief and victim (0 = same core ... depth of the
  // machine tree); steals count items taken.
  std::vector<std::uint64_t> steals_by_level;
  std::vector<std::uint64_t> failed_steals_by_level;

  // Adds the times and counters of `other` (the worker index is left as it is).
  worker_stats& operator+=(const worker_stats& other);
};

struct stats {
  std::string scheduler;
  std::vector<worker_stats> workers;
  std::uint64_t suppressed_exceptions = 0;

  worker_stats total() const;  // sums (worker = -1)
  std::string to_json() const;
  std::string to_text() const;  // the table LOCUS_STATS=1 prints at exit
};

}  // namespace locus
