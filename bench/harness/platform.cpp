#include "harness/platform.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

namespace locus_bench {

int available_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(hc);
}

std::vector<int> cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
  }
  return cpus;
}

bool bind_this_thread(int cpu) noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

std::size_t l2_cache_bytes() noexcept {
  const long bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return bytes > 0 ? static_cast<std::size_t>(bytes) : 0;
}

namespace {

struct stack_job {
  const std::function<int()>* body = nullptr;
  int result = 0;
  std::exception_ptr error;
};

void* stack_entry(void* arg) {
  auto* job = static_cast<stack_job*>(arg);
  try {
    job->result = (*job->body)();
  } catch (...) {
    job->error = std::current_exception();
  }
  return nullptr;
}

}  // namespace

int run_on_stack(std::size_t stack_bytes, const std::function<int()>& body) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) throw std::runtime_error("pthread_attr_init failed");
  stack_job job;
  job.body = &body;
  int rc = pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  if (rc == 0) rc = pthread_create(&thread, &attr, &stack_entry, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    // No big stack to be had: run here rather than not at all, and say so.
    std::fprintf(stderr,
                 "locus-bench: warning: no %zu-byte stack thread (%s); running on the "
                 "main thread's stack\n",
                 stack_bytes, std::strerror(rc));
    return body();
  }
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
  return job.result;
}

bool set_default_thread_stack(std::size_t stack_bytes) noexcept {
  pthread_attr_t attr;
  if (pthread_getattr_default_np(&attr) != 0) return false;
  bool ok =
      pthread_attr_setstacksize(&attr, stack_bytes) == 0 && pthread_setattr_default_np(&attr) == 0;
  pthread_attr_destroy(&attr);
  return ok;
}

}  // namespace locus_bench
