// The child-first spawn primitive: a call on another stack that leaves the caller resumable
// through Boost.Context. The assembly version must build its frame exactly as jump_fcontext
// does, or a stolen continuation resumes with wrong registers; these tests resume the caller
// from the child the way a thief does and check what it finds.
#include <gtest/gtest.h>

#include <cfenv>
#include <cstdint>

#include "ult/call_on_stack.hpp"
#include "ult/context.hpp"
#include "ult/stack.hpp"

namespace {

using locus::ult::fcontext;
using locus::ult::stack;
using locus::ult::transfer;

struct probe {
  stack* own = nullptr;
  stack* caller_stack = nullptr;
  int arg_seen = 0;
  bool ran_on_own_stack = false;
  int marker = 0;
  int second = 0;
  int third = 0;
  bool resumed_with_second = false;
};

bool on_stack(const void* p, const stack& s) {
  const auto* b = static_cast<const std::byte*>(p);
  return b >= s.lo && b < s.top();
}

void record_and_return(void* arg, fcontext) noexcept {
  locus::ult::entered();
  auto* p = static_cast<probe*>(arg);
  int local = 0;
  p->ran_on_own_stack = on_stack(&local, *p->own);
  ++p->arg_seen;
}

void resume_caller_like_a_thief(void* arg, fcontext caller) noexcept {
  locus::ult::entered();
  auto* p = static_cast<probe*>(arg);
  std::fesetround(FE_UPWARD);  // the caller must get its own rounding mode back
  const transfer back = locus::ult::switch_to(caller, *p->caller_stack, &p->marker);
  p->resumed_with_second = back.data == &p->second;
  // Somebody resumed the caller, so this function must never return: leave for good.
  locus::ult::switch_to(back.fctx, *p->caller_stack, &p->third, true);
  __builtin_unreachable();
}

class CallOnStack : public ::testing::Test {
 protected:
  CallOnStack() : arena_(64 * 1024), child_(arena_.allocate_chain(1)) {
    native_ = locus::ult::describe_native_stack();
    p_.own = child_;
    p_.caller_stack = &native_;
  }
  locus::ult::stack_arena arena_;
  stack* child_;
  stack native_;
  probe p_;
};

TEST_F(CallOnStack, ReturningChildRanOnItsStackAndComesBackWithNoTransfer) {
  for (int i = 0; i < 3; ++i) {
    const transfer t = locus::ult::call_on_stack(&p_, *child_, native_, &record_and_return);
    EXPECT_EQ(t.fctx, nullptr);
    EXPECT_EQ(t.data, nullptr);
  }
  EXPECT_EQ(p_.arg_seen, 3);
  EXPECT_TRUE(p_.ran_on_own_stack);
}

// SSE rounding (MXCSR bits 13-14); std::fegetround reads the x87 control word only.
int sse_rounding() {
#if defined(__x86_64__)
  return static_cast<int>((__builtin_ia32_stmxcsr() >> 13) & 3);
#else
  return -1;
#endif
}
#if defined(__x86_64__)
constexpr int sse_round_down = 1;
#else
constexpr int sse_round_down = -1;
#endif

#if defined(__x86_64__)
// Every callee-saved register holds a known value across the call; a frame laid out
// differently from Boost's hands them back scrambled when the caller is resumed by a jump.
[[gnu::noinline]] bool callee_saved_registers_survive(probe& p, stack& child, stack& native) {
  register std::uint64_t b asm("rbx") = 0x1111;
  register std::uint64_t r12 asm("r12") = 0x2222;
  register std::uint64_t r13 asm("r13") = 0x3333;
  register std::uint64_t r14 asm("r14") = 0x4444;
  register std::uint64_t r15 asm("r15") = 0x5555;
  asm volatile("" : "+r"(b), "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15));
  const transfer t = locus::ult::call_on_stack(&p, child, native, &resume_caller_like_a_thief);
  asm volatile("" : "+r"(b), "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15));
  const bool kept = b == 0x1111 && r12 == 0x2222 && r13 == 0x3333 && r14 == 0x4444 && r15 == 0x5555;
  locus::ult::switch_to(t.fctx, child, &p.second);  // let the child leave
  return kept;
}

TEST_F(CallOnStack, CallerResumedThroughItsContextKeepsItsCalleeSavedRegisters) {
  EXPECT_TRUE(callee_saved_registers_survive(p_, *child_, native_));
  EXPECT_TRUE(p_.resumed_with_second);
}
#endif

TEST_F(CallOnStack, CallerResumedThroughItsContextSeesItsRoundingMode) {
  ASSERT_EQ(std::fesetround(FE_DOWNWARD), 0);
  const transfer t = locus::ult::call_on_stack(&p_, *child_, native_, &resume_caller_like_a_thief);
  const int rounding = std::fegetround();
  const int sse = sse_rounding();
  std::fesetround(FE_TONEAREST);
  EXPECT_EQ(rounding, FE_DOWNWARD);
  EXPECT_EQ(sse, sse_round_down);
  ASSERT_NE(t.fctx, nullptr);
  EXPECT_EQ(t.data, &p_.marker);
  // Let the child go on, as the scheduler would resume a suspended child elsewhere.
  const transfer last = locus::ult::switch_to(t.fctx, *child_, &p_.second);
  EXPECT_TRUE(p_.resumed_with_second);
  EXPECT_EQ(last.data, &p_.third);
}

#if !defined(LOCUS_TSAN) && !defined(LOCUS_ASAN)
// The Boost.Context-only version (other architectures) behaves the same; without sanitizer
// annotations, so release builds only.
TEST_F(CallOnStack, PortableVersionReturnsAndResumesTheSameWay) {
  EXPECT_EQ(locus::ult::call_on_stack_portable(&p_, *child_, &record_and_return).fctx, nullptr);
  EXPECT_EQ(p_.arg_seen, 1);
  EXPECT_TRUE(p_.ran_on_own_stack);
  ASSERT_EQ(std::fesetround(FE_DOWNWARD), 0);
  const transfer t = locus::ult::call_on_stack_portable(&p_, *child_, &resume_caller_like_a_thief);
  const int rounding = std::fegetround();
  const int sse = sse_rounding();
  std::fesetround(FE_TONEAREST);
  EXPECT_EQ(rounding, FE_DOWNWARD);
  EXPECT_EQ(sse, sse_round_down);
  ASSERT_NE(t.fctx, nullptr);
  EXPECT_EQ(t.data, &p_.marker);
  EXPECT_EQ(locus::ult::switch_to(t.fctx, *child_, &p_.second).data, &p_.third);
  EXPECT_TRUE(p_.resumed_with_second);
}
#endif

}  // namespace
