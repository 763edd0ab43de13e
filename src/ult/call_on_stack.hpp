// Running a function on another user-level thread's stack as a plain call, leaving the caller
// resumable through Boost.Context: the child-first spawn path. A spawn used to be two
// jump_fcontext switches (into the child, back to the parent), each saving and restoring the
// floating-point control state and each throwing the return-stack predictor out of step; this
// is one call and one return on the common path, where nobody steals the parent.
#pragma once

#include "ult/context.hpp"

namespace locus::ult {

// `caller` is a Boost.Context context of the code that called call_on_stack: jumping to it
// (jump_fcontext, or switch_to) resumes that code, and call_on_stack then returns what the jump
// passed. Once anyone has jumped to `caller`, fn must never return.
using child_fn = void (*)(void* arg, fcontext caller) noexcept;

// Calls fn(arg, caller) on `to`, starting at its top. Returns {nullptr, nullptr} when fn
// returned, or the transfer of whoever resumed the caller through `caller`.
transfer call_on_stack_portable(void* arg, stack& to, child_fn fn) noexcept;

#if defined(__x86_64__) && defined(__ELF__)
extern "C" transfer locus_call_on_stack(void* arg, void* stack_top, child_fn fn) noexcept;
#endif

// A call starts at the top of `s`, so a context parked on it is dropped; under ASan the
// redzones its frames left poisoned (they never returned) are cleared too.
inline void prepare_for_call(stack& s) noexcept {
  if (s.parked == nullptr) return;
  s.parked = nullptr;
#if defined(LOCUS_ASAN)
  __asan_unpoison_memory_region(s.lo, s.size);
#endif
}

// The sanitizer annotations bracket the call here, in the caller: the child is a new fiber
// (it starts with entered()), and a child that returns is left for good.
inline transfer call_on_stack(void* arg, stack& to, const stack& from, child_fn fn) noexcept {
#if defined(LOCUS_TSAN)
  ensure_sanitizer_fiber(to);
  __tsan_switch_to_fiber(to.sanitizer_fiber, 0);
#endif
#if defined(LOCUS_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, to.lo, to.size);
#endif
#if defined(__x86_64__) && defined(__ELF__)
  const transfer t = locus_call_on_stack(arg, to.top(), fn);
#else
  const transfer t = call_on_stack_portable(arg, to, fn);
#endif
  if (t.fctx == nullptr) {
    // fn returned on its own stack: tell the sanitizers we are back (after the child's own
    // function-exit hooks, which belong to its fiber).
#if defined(LOCUS_TSAN)
    __tsan_switch_to_fiber(from.sanitizer_fiber, 0);
#endif
#if defined(LOCUS_ASAN)
    __sanitizer_start_switch_fiber(nullptr, from.lo, from.size);
#endif
  }
#if defined(LOCUS_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  (void)from;
  return t;
}

}  // namespace locus::ult
