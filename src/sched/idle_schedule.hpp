// What a worker that found no work does before its next round of looking: spin for a few rounds
// (in fine-grained code the next task often appears within microseconds), then give its CPU to
// the OS with a yield for some more, then sleep until work is posted.
//
// While another process takes part of the runtime's PUs (cpu_contention.hpp: the workers' binding
// is widened to their place), the worker the others wait for is often the one the OS has put
// aside, and a worker spinning on the other PU holds the one CPU the OS could run it on. The OS
// moves a waiting thread to a CPU that yields or goes idle, so a worker on a shared machine spins
// only briefly before it yields.
//
// The spin step between two rounds is short: a few pauses, about as long as a round's own look
// at the queues. Work that appears (the next step's continuation, a join handed back) is seen
// at the next round, on average half a round after it was published, and an iterative program
// of short steps pays that wait at every step (bench/README, "Where locus is behind a peer").
// There are correspondingly more rounds, so that a worker spins for about as long (some 35 us)
// before it yields.
#pragma once

#include "sched/cpu_relax.hpp"

namespace locus::detail {

enum class idle_step { spin, yield, sleep };

struct idle_schedule {
  static constexpr unsigned spin_rounds = 192;
  static constexpr unsigned shared_spin_rounds = 24;
  // Rounds, spinning and yielding, before the worker sleeps.
  static constexpr unsigned rounds_before_sleep = 224;

  // After `failed_rounds` rounds of looking in vain (1 after the first), with the binding
  // widened or not.
  static constexpr idle_step after(unsigned failed_rounds, bool pu_shared) noexcept {
    if (failed_rounds < (pu_shared ? shared_spin_rounds : spin_rounds)) return idle_step::spin;
    if (failed_rounds < rounds_before_sleep) return idle_step::yield;
    return idle_step::sleep;
  }

  // One spin step between two rounds.
  static void spin() noexcept {
    for (int i = 0; i < 4; ++i) cpu_relax();
  }
};

}  // namespace locus::detail
