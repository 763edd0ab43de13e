#include "taskq/live_count.hpp"

#include <mutex>
#include <vector>

namespace locus::detail {
namespace {

struct slot_pool {
  std::mutex lock;
  std::vector<unsigned> free;
  unsigned next = 0;
};

slot_pool& pool() {
  static slot_pool p;  // never destroyed before the threads that return slots to it
  return p;
}

struct thread_slot_holder {
  thread_slot_holder() {
    slot_pool& p = pool();
    const std::lock_guard hold(p.lock);
    if (p.free.empty()) {
      slot = p.next++;
    } else {
      slot = p.free.back();
      p.free.pop_back();
    }
  }
  ~thread_slot_holder() {
    slot_pool& p = pool();
    const std::lock_guard hold(p.lock);
    p.free.push_back(slot);
  }
  thread_slot_holder(const thread_slot_holder&) = delete;
  thread_slot_holder& operator=(const thread_slot_holder&) = delete;
  unsigned slot;
};

}  // namespace

unsigned live_count::acquire_slot() {
  thread_local thread_slot_holder holder;  // gives the slot back when the thread exits
  return holder.slot;
}

}  // namespace locus::detail
