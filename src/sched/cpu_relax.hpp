// The spin-wait hint: lets the sibling hyperthread run and saves power while a thread polls.
#pragma once

namespace locus::detail {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace locus::detail
