// Pinned workers on a shared machine. Another process may take part of a worker's PU; bound to
// that PU alone, the worker then waits for it while another of the runtime's PUs idles, and a step
// whose last part it runs waits with it (oneTBB's and OpenMP's threads are not bound, and the OS
// moves a waiting one to an idle PU). Each worker reads how long it has waited to run (the
// kernel's run delay, /proc/thread-self/schedstat) when it looks for work, at most once a window;
// while any worker waited over a quarter of one of the last three windows, every worker lets the
// OS run it on any PU of its place, and binds itself to its PU again afterwards.
#pragma once

#include <atomic>
#include <cstdint>

namespace locus::detail {

class cpu_contention_watch {
 public:
  static constexpr std::uint64_t window_ns = 10'000'000;
  static constexpr std::uint64_t memory_ns = 3 * window_ns;

  cpu_contention_watch() = default;
  cpu_contention_watch(const cpu_contention_watch&) = delete;
  cpu_contention_watch& operator=(const cpu_contention_watch&) = delete;
  ~cpu_contention_watch();

  // On the worker's thread, once it is bound to its PU. Without the kernel's schedstat the worker
  // never closes a window.
  void start(std::uint64_t now_ns) noexcept;
  bool watching() const noexcept { return fd_ >= 0; }
  // On the worker's thread: whether a window has ended (its verdict is then in contended_at).
  bool close_window(std::uint64_t now_ns) noexcept {
    if (fd_ < 0 || now_ns - checked_ns_ < window_ns) return false;
    measure(now_ns);
    return true;
  }
  // Any thread: whether this worker's PU was contended within memory_ns of `now_ns`.
  bool contended_lately(std::uint64_t now_ns) const noexcept {
    const std::uint64_t at = contended_at_.load(std::memory_order_relaxed);
    return at != 0 && now_ns - at < memory_ns;
  }
  // Any thread: records that this worker's PU was contended at `now_ns`. The watch's own verdict
  // for a window; a test stands in for another process with it.
  void note_contended(std::uint64_t now_ns) noexcept {
    contended_at_.store(now_ns, std::memory_order_relaxed);
  }
  // The worker's binding: its PU (false) or its place (true). On the worker's thread.
  bool widened = false;

 private:
  void measure(std::uint64_t now_ns) noexcept;
  bool read_run_delay(std::uint64_t& out) const noexcept;

  int fd_ = -1;
  std::uint64_t checked_ns_ = 0;
  std::uint64_t run_delay_ns_ = 0;  // at checked_ns_
  std::atomic<std::uint64_t> contended_at_{0};
};

}  // namespace locus::detail
