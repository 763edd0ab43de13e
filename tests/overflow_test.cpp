// Death tests of the stack-overflow report (src/ult/overflow_guard.cpp): a task that runs past
// its user-level stack hits the guard region and the process dies with a message that names the
// cause and LOCUS_STACK_SIZE; any other segfault still dies of SIGSEGV, without that message.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdlib>

#include "locus/locus.hpp"

namespace {

constexpr const char* kTopology = "pack:1 l3:1 l2:2 core:1 pu:1";

// Never reached; read through a volatile so that the compiler sees a bounded recursion.
volatile int recursion_limit = INT_MAX;

// Each frame holds a 4 KiB array and touches all of it, so that the recursion walks down the
// stack page by page and must hit the guard region below it.
[[gnu::noinline]] int recurse(int depth) {
  volatile char frame[4096];
  for (std::size_t i = 0; i < sizeof frame; i += 256) frame[i] = static_cast<char>(depth);
  if (depth >= recursion_limit) return frame[0];
  return recurse(depth + 1) + frame[depth % 4096];
}

// The death statements: one function each, because braced initializers in a macro argument
// would be split at their commas.
void overflow_with_option_stack_size() {
  locus::runtime rt{locus::options{.workers = 1, .topology = kTopology, .stack_size = 64 * 1024}};
  rt.exec([] { return recurse(0); });
}

void overflow_with_environment_stack_size() {
  ::setenv("LOCUS_STACK_SIZE", "64K", 1);
  ::setenv("LOCUS_TOPOLOGY", kTopology, 1);
  ::setenv("LOCUS_WORKERS", "1", 1);
  locus::runtime rt;
  rt.exec([] { return recurse(0); });
}

void overflow_in_child_task() {
  locus::runtime rt{locus::options{.workers = 2, .topology = kTopology, .stack_size = 64 * 1024}};
  rt.exec([] {
    std::atomic<int> sink{0};
    locus::task_group g;
    g.run([&sink] { sink.fetch_add(1); });
    g.run([&sink] { sink.fetch_add(recurse(0)); });
    g.wait();
    return sink.load();
  });
}

// An invalid write that is not near any task stack. Normally a write to address 0; under
// AddressSanitizer (built with UBSan, whose null check would end the process before the fault)
// a write to a PROT_NONE page of its own.
volatile int* invalid_address() {
#if defined(LOCUS_ASAN)
  void* p = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) std::abort();
  return static_cast<volatile int*>(p);
#else
  return nullptr;
#endif
}

void invalid_write_in_task() {
  locus::runtime rt{locus::options{.workers = 1, .topology = kTopology, .stack_size = 64 * 1024}};
  volatile int* volatile target = invalid_address();
  rt.exec([&target] {
    // A volatile pointer to volatile: neither the load of the address nor the store may be
    // optimized away (GCC drops a plain store through `int* volatile`).
    *target = 42;
    return 0;
  });
}

class OverflowDeathTest : public testing::Test {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // The child re-runs this binary: keep the environment from changing its configuration.
    for (const char* v : {"LOCUS_STACK_SIZE", "LOCUS_SCHED", "LOCUS_WORKERS", "LOCUS_TOPOLOGY",
                          "LOCUS_PRINT_CONFIG", "LOCUS_STATS"}) {
      ::unsetenv(v);
    }
  }
};

TEST_F(OverflowDeathTest, DeepRecursionReportsStackOverflow) {
  EXPECT_DEATH(overflow_with_option_stack_size(), "stack overflow.*65536 bytes.*LOCUS_STACK_SIZE");
}

TEST_F(OverflowDeathTest, StackSizeFromTheEnvironment) {
  EXPECT_DEATH(overflow_with_environment_stack_size(),
               "stack overflow.*65536 bytes.*LOCUS_STACK_SIZE");
}

// The overflow happens in a child task of a task_group (on its own user-level stack), with two
// workers, so the fault may be taken on either worker thread.
TEST_F(OverflowDeathTest, OverflowInAChildTask) {
  EXPECT_DEATH(overflow_in_child_task(), "stack overflow.*LOCUS_STACK_SIZE");
}

// An invalid write is not an overflow: the handler must chain to the previous SIGSEGV action.
// Without a sanitizer that is the default action, so the process dies of SIGSEGV (the overflow
// report ends with abort(), i.e. SIGABRT). Under ThreadSanitizer or AddressSanitizer the previous
// action is the sanitizer's own handler, which reports the SEGV itself.
TEST_F(OverflowDeathTest, OrdinarySegfaultIsNotReportedAsOverflow) {
#if defined(LOCUS_TSAN) || defined(LOCUS_ASAN)
  EXPECT_DEATH(invalid_write_in_task(), "Sanitizer: SEGV on unknown address");
#else
  EXPECT_EXIT(invalid_write_in_task(), testing::KilledBySignal(SIGSEGV), "");
#endif
}

}  // namespace
