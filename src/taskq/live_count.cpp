#include "taskq/live_count.hpp"

#include <bit>

namespace locus::detail {
namespace {

static_assert(live_count::shards <= 64, "the taken slots are one 64-bit word");

// Bit i: a live thread holds slot i. Constant-initialised and trivially destroyed, so that a
// thread that exits during static destruction (a runtime's worker joined at exit) still gives
// its slot back to something that exists. The release of a slot's bit orders the old owner's
// counter writes before the new owner's (acquire) take of it.
constinit std::atomic<std::uint64_t> taken_slots{0};

unsigned take_slot() noexcept {
  std::uint64_t taken = taken_slots.load(std::memory_order_relaxed);
  for (;;) {
    const unsigned slot = static_cast<unsigned>(std::countr_one(taken));
    if (slot >= live_count::shards) return live_count::shards;  // the shared overflow shard
    if (taken_slots.compare_exchange_weak(taken, taken | (std::uint64_t{1} << slot),
                                          std::memory_order_acquire, std::memory_order_relaxed)) {
      return slot;
    }
  }
}

struct thread_slot_holder {
  thread_slot_holder() noexcept : slot(take_slot()) {}
  ~thread_slot_holder() {
    if (slot < live_count::shards) {
      taken_slots.fetch_and(~(std::uint64_t{1} << slot), std::memory_order_release);
    }
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
