// The Linux futex calls the core sleeps and wakes with (private to the process), and their
// process-shared forms for words in memory that several processes map (src/dist's bells).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace locus::detail {

// Sleeps while *word == expected (returns at once otherwise), at most `timeout` when not null.
inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                       const timespec* timeout) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected,
            timeout, nullptr, 0);
}

inline void futex_wake(std::atomic<std::uint32_t>* word, int count) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr,
            nullptr, 0);
}

inline void futex_wake_all(std::atomic<std::uint32_t>* word) noexcept {
  futex_wake(word, INT_MAX);
}

inline void futex_wait_shared(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                              const timespec* timeout) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, timeout,
            nullptr, 0);
}

inline void futex_wake_all_shared(std::atomic<std::uint32_t>* word) noexcept {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr,
            nullptr, 0);
}

}  // namespace locus::detail
