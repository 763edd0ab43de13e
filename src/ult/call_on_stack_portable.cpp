// call_on_stack with Boost.Context switches only: for architectures without an assembly
// version, and as the reference the assembly version is tested against.
#include "ult/call_on_stack.hpp"

namespace locus::ult {
namespace {

struct pending_call {
  void* arg;
  child_fn fn;
};

void call_entry(transfer t) {
  const auto* call = static_cast<const pending_call*>(t.data);
  call->fn(call->arg, t.fctx);
  // fn returned, so nobody resumed the caller through t.fctx: go back to it with no data. This
  // context is abandoned; its stack is reused from the top.
  boost::context::detail::jump_fcontext(t.fctx, nullptr);
  __builtin_unreachable();
}

}  // namespace

transfer call_on_stack_portable(void* arg, stack& to, child_fn fn) noexcept {
  pending_call call{arg, fn};
  const transfer t = boost::context::detail::jump_fcontext(
      boost::context::detail::make_fcontext(to.top(), to.size, &call_entry), &call);
  if (t.data == nullptr) return {nullptr, nullptr};
  return t;
}

}  // namespace locus::ult
