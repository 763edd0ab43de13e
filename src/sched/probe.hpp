// Task boundaries as the trace (LOCUS_TRACE) and the work/span meter (LOCUS_WORKSPAN) see them.
// Called only where worker::probed is set: the plain spawn path never reaches them.
#pragma once

#include "prof/trace.hpp"
#include "prof/workspan.hpp"
#include "sched/gang.hpp"
#include "sched/worker.hpp"

namespace locus::detail {

inline void probe_task_begin(worker& w, const char* label, void (*site)(spawn_record*) = nullptr) {
  if (w.trace != nullptr) w.trace->begin_task(label, site);
  if (w.workspan != nullptr) w.workspan->task_begin();
}

// `group`: the group the task is a child of (nullptr for a root).
inline void probe_task_end(worker& w, const group_state* group) {
  if (w.workspan != nullptr) w.workspan->task_end(group);
  if (w.trace != nullptr) w.trace->end();
}

// The worker whose queue held `item`, or that sent it, before this worker took it; or -1.
inline int origin_of(const work_item* item) noexcept {
  switch (item->kind) {
    case item_kind::continuation:
      return static_cast<const spawn_record*>(item)->spawner->index;
    case item_kind::task:
      return static_cast<const task_base*>(item)->origin;
    case item_kind::resume:
      return static_cast<const resume_item*>(item)->origin;
    case item_kind::gang_member:
      return static_cast<const gang_member*>(item)->origin;
  }
  return -1;
}

}  // namespace locus::detail
