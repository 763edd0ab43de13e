// Between two runs of an interleaved invocation, the threads of the implementation that ran last
// may still be running: libgomp's spin for about 7 ms after a parallel region (GOMP_SPINCOUNT's
// default), locus's and oneTBB's for well under a millisecond. Whatever runs next shares the CPUs
// with them: on Heat2D (8-25 ms runs), locus ws took 1.3-2x longer when it followed OpenMP than
// when it did not. The harness therefore waits, untimed, until every other thread of the process
// is asleep before it starts a run. It looks at the threads' scheduler states rather than at the
// process's CPU time, which the kernel brings up to date for threads running on other CPUs only
// at its ticks.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

namespace locus_bench {

// The scheduler state of every thread of this process but the caller ('R' running or runnable,
// 'S' or 'D' asleep, ...), as /proc/self/task/*/stat gives it.
std::vector<char> other_thread_states();

struct quiesce_result {
  bool asleep = false;  // false: some thread was still running at the limit
  int looks = 0;        // times the states were read
};

// Reads `states` every `poll` until no thread is running or runnable, or `limit` has passed.
quiesce_result wait_for_other_threads_to_sleep(
    const std::function<std::vector<char>()>& states = other_thread_states,
    std::chrono::microseconds poll = std::chrono::microseconds(200),
    std::chrono::milliseconds limit = std::chrono::milliseconds(50));

}  // namespace locus_bench
