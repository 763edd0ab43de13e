// The lock of the schedulers' shared queues (inboxes, ADWS's and ml-ws's queues by level, CATS's
// package pools). Their critical sections are a few loads and stores, but an idle worker polls
// its own queue under the lock while others push into it: a std::mutex sends the pusher that
// finds it held to sleep in the kernel and the holder through a futex wake, several
// microseconds against the fraction of one the holder keeps it. This one spins, then yields the
// CPU, which the holder may share with it (more workers than CPUs, or a busy neighbour). It has
// a cache line of its own, so that waiters reading it do not slow the holder's writes to what
// it guards (spin_flag where the guarded data the holder touches first fits on the line).
#pragma once

#include <atomic>

#include "sched/cpu_relax.hpp"

namespace locus::detail {

// The lock word alone, for a structure that keeps what its holders touch first on the lock's own
// line (so that taking the lock and updating that data moves one line between CPUs, not two).
class spin_flag {
 public:
  bool try_lock() noexcept { return !held_.exchange(true, std::memory_order_acquire); }

  void lock() noexcept {
    while (!try_lock()) {
      // Reads, not exchanges, while it is held: waiters share the line instead of moving it.
      spin_until([this] { return !held_.load(std::memory_order_relaxed); });
    }
  }

  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

class alignas(64) spin_lock : public spin_flag {};

}  // namespace locus::detail
