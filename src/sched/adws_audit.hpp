// Every steal adws and ml-adws make, for tests that check each one against the thief's steal
// range (seed 000 §3.2: a worker steals only inside its topmost dominant task group). Off (one
// relaxed load per successful steal) unless an observer is installed.
#pragma once

#include <cstddef>

namespace locus::detail {

struct adws_steal_event {
  int thief = 0;
  int victim = 0;              // the worker whose queue the item came from
  int level = 0;               // of the tree of caches the steal was made at
  double lo = 0, hi = 0;       // the stolen task's distribution range, in units of `level`
  int depth = 0;               // and its depth
  double x = 0, y = 0;         // the thief's steal range then
  int range_depth = 0;         // the depth of the group that gave it
  bool waited = false;         // whether the thief held back its first steal in that group
  std::size_t part_bytes = 0;  // the data its wait in that group was sized by (0: no wait)
};

using adws_steal_observer = void (*)(const adws_steal_event&);

// Installs `observer` for every runtime in the process (null removes it). It runs on the thief's
// thread, during the steal.
void set_adws_steal_observer(adws_steal_observer observer) noexcept;

}  // namespace locus::detail
