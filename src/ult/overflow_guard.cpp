// Turns a hit on a stack guard region into a message that names the cause and the knob.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "ult/slab_registry.hpp"
#include "ult/stack.hpp"

namespace locus::ult {
namespace {

struct sigaction previous_segv;
struct sigaction previous_bus;

void write_str(const char* s) noexcept {
  std::size_t n = std::strlen(s);
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

void write_number(std::size_t v) noexcept {
  char buf[32];
  int i = 31;
  buf[i] = '\0';
  do {
    buf[--i] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && i > 0);
  write_str(buf + i);
}

void chain(int sig, siginfo_t* info, void* uctx, const struct sigaction& prev) noexcept {
  if ((prev.sa_flags & SA_SIGINFO) != 0 && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, uctx);
    return;
  }
  if (prev.sa_handler == SIG_IGN) return;
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != nullptr) {
    prev.sa_handler(sig);
    return;
  }
  // Default action: restore it and return, so the faulting instruction faults again and the
  // process dies with the original signal.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
}

void on_fault(int sig, siginfo_t* info, void* uctx) {
  slab_extent hit;
  if (find_guard_hit(reinterpret_cast<std::uintptr_t>(info->si_addr), &hit)) {
    write_str("locus: stack overflow in a task: it used more than its stack of ");
    write_number(hit.stack_bytes);
    write_str(
        " bytes and hit the guard page. Run with a larger LOCUS_STACK_SIZE (e.g. "
        "LOCUS_STACK_SIZE=");
    write_number(hit.stack_bytes * 4 / 1024);
    write_str("K) or options::stack_size.\n");
    std::abort();
  }
  chain(sig, info, uctx, sig == SIGBUS ? previous_bus : previous_segv);
}

std::once_flag installed;

}  // namespace

void install_overflow_handler() {
  std::call_once(installed, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGSEGV, &sa, &previous_segv);
    ::sigaction(SIGBUS, &sa, &previous_bus);
  });
}

void prepare_thread_for_overflow_reports() {
  // The faulting stack is exhausted, so the handler needs a stack of its own. One per thread,
  // kept for the thread's life, mapped rather than allocated so that its pages cost no memory
  // until a fault actually uses them.
  struct alt_stack_mapping {
    void* base = nullptr;
    std::size_t bytes = 0;
    ~alt_stack_mapping() {
      if (base == nullptr) return;
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      ::sigaltstack(&off, nullptr);
      ::munmap(base, bytes);
    }
  };
  thread_local alt_stack_mapping alt;
  stack_t current{};
  if (::sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0 &&
      current.ss_size >= 32 * 1024) {
    return;  // someone (e.g. a sanitizer runtime) already gave this thread a large enough one
  }
  if (alt.base != nullptr) return;
  constexpr std::size_t bytes = 64 * 1024;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // overflows then die without the message, nothing worse
  alt.base = p;
  alt.bytes = bytes;
  stack_t ss{};
  ss.ss_sp = p;
  ss.ss_size = bytes;
  ss.ss_flags = 0;
  ::sigaltstack(&ss, nullptr);
}

}  // namespace locus::ult
