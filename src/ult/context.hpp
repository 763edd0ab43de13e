// Context switches between user-level threads (Boost.Context's fcontext), with the annotations
// ThreadSanitizer and AddressSanitizer need to follow execution across stacks.
#pragma once

#include <boost/context/detail/fcontext.hpp>

#include "ult/stack.hpp"

#if defined(LOCUS_TSAN)
#include <sanitizer/tsan_interface.h>
#endif
#if defined(LOCUS_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace locus::ult {

using fcontext = boost::context::detail::fcontext_t;
using transfer = boost::context::detail::transfer_t;
using entry_fn = void (*)(transfer);

// Under ThreadSanitizer a stack runs as a fiber of its own, made when the stack is first
// entered: a fiber costs TSan a thread's state (milliseconds to clear), and most stacks a pool
// holds never run.
inline void ensure_sanitizer_fiber(stack& s) noexcept {
#if defined(LOCUS_TSAN)
  if (s.sanitizer_fiber == nullptr) s.sanitizer_fiber = __tsan_create_fiber(0);
#else
  (void)s;
#endif
}

inline fcontext make_context(stack& s, entry_fn entry) noexcept {
  ensure_sanitizer_fiber(s);
  return boost::context::detail::make_fcontext(s.top(), s.size, entry);
}

// Switches to `to`, which runs on `to_stack`, handing it `data`. Returns when something switches
// back to this context. `leaving_for_good` tells the sanitizers that this context will never be
// resumed (a finished task), so its bookkeeping can be dropped.
inline transfer switch_to(fcontext to, const stack& to_stack, void* data,
                          bool leaving_for_good = false) noexcept {
#if defined(LOCUS_TSAN)
  __tsan_switch_to_fiber(to_stack.sanitizer_fiber, 0);
#endif
#if defined(LOCUS_ASAN)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(leaving_for_good ? nullptr : &fake_stack, to_stack.lo,
                                 to_stack.size);
#else
  (void)to_stack;
  (void)leaving_for_good;
#endif
  transfer t = boost::context::detail::jump_fcontext(to, data);
#if defined(LOCUS_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  return t;
}

// First statement of every entry function of a fresh context.
inline void entered() noexcept {
#if defined(LOCUS_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

// Describes the calling OS thread's own stack (the scheduler context of a worker).
stack describe_native_stack() noexcept;

}  // namespace locus::ult
