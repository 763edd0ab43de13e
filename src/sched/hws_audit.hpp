// Every steal attempt hws makes, for tests that check its victim and chunk selection (seed 004
// §3.2.1-3.2.2). Off (one relaxed load per attempt) unless an observer is installed.
#pragma once

#include <cstddef>

#include "queue/work_queue.hpp"

namespace locus::detail {

struct hws_steal_event {
  bool done = false;  // false: before the attempt (only thief, victim, level, step are set)
  int thief = 0;
  int victim = 0;
  int level = 0;  // topology distance between thief and victim
  int step = 0;   // the index of that level among the levels with other workers, nearest first
  std::size_t stealable = 0;  // the victim's public items as the thief read them (steal-half only)
  std::size_t asked = 0;      // the chunk asked for
  std::size_t taken = 0;
  queue::steal_status status = queue::steal_status::empty;
};

using hws_steal_observer = void (*)(const hws_steal_event&);

// Installs `observer` for every runtime in the process (null removes it). It runs on the thief's
// thread, before and after each attempt.
void set_hws_steal_observer(hws_steal_observer observer) noexcept;

}  // namespace locus::detail
