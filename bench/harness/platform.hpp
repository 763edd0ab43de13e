// Machine facts and process set-up for locus-bench.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace locus_bench {

// CPUs this process may run on (sched_getaffinity), or hardware_concurrency when that fails.
int available_cpus() noexcept;

// The CPUs this process may run on (sched_getaffinity), in increasing order; empty when unknown.
std::vector<int> cpus_allowed();

// Binds the calling thread to `cpu` alone (pthread_setaffinity_np); false when the OS refuses.
bool bind_this_thread(int cpu) noexcept;

// The L2 cache of one core in bytes (the C library's sysconf), 0 when it does not say.
std::size_t l2_cache_bytes() noexcept;

// Runs body on a fresh thread with a `stack_bytes` stack and returns its result; the calling
// thread waits. The serial elision, the oneTBB arena's calling thread and the OpenMP master
// thread all recurse on this stack, which must hold the deepest tree (UTS T3L: 17844 levels).
// Exceptions thrown by body are rethrown here.
int run_on_stack(std::size_t stack_bytes, const std::function<int()>& body);

// Sets the stack size of threads created from now on without an explicit one
// (pthread_setattr_default_np). That is how OpenMP (libgomp) creates its workers unless
// OMP_STACKSIZE or GOMP_STACKSIZE is set, and their default (the 8 MiB stack rlimit) overflows
// in UTS binomial trees about 20000 levels deep. Returns false when the C library refuses.
bool set_default_thread_stack(std::size_t stack_bytes) noexcept;

}  // namespace locus_bench
