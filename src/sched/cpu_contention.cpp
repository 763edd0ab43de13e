#include "sched/cpu_contention.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace locus::detail {

cpu_contention_watch::~cpu_contention_watch() {
  if (fd_ >= 0) ::close(fd_);
}

void cpu_contention_watch::start(std::uint64_t now_ns) noexcept {
  fd_ = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return;
  checked_ns_ = now_ns;
  if (!read_run_delay(run_delay_ns_)) {
    ::close(fd_);
    fd_ = -1;
  }
}

// The file holds three numbers: time on the CPU, time waiting on a run queue (both ns), and the
// number of time slices.
bool cpu_contention_watch::read_run_delay(std::uint64_t& out) const noexcept {
  char text[96];
  const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
  if (n <= 0) return false;
  text[n] = '\0';
  unsigned long long on_cpu = 0, waited = 0;
  if (std::sscanf(text, "%llu %llu", &on_cpu, &waited) != 2) return false;
  out = waited;
  return true;
}

void cpu_contention_watch::measure(std::uint64_t now_ns) noexcept {
  std::uint64_t delay = 0;
  if (!read_run_delay(delay)) return;
  const std::uint64_t waited = delay - run_delay_ns_;
  const std::uint64_t elapsed = now_ns - checked_ns_;
  run_delay_ns_ = delay;
  checked_ns_ = now_ns;
  if (waited * 4 > elapsed) note_contended(now_ns);
}

}  // namespace locus::detail
