// The spin-wait hint: lets the sibling hyperthread run and saves power while a thread polls.
#pragma once

#include <thread>

namespace locus::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Polls `done` until it holds: spinning at first, then yielding the CPU, which the thread that
// will make it hold may share with this one (assembly workers on an oversubscribed machine).
template <class Done>
void spin_until(Done done) noexcept {
  for (int spins = 0; !done(); ++spins) {
    if (spins < 64) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace locus::detail
