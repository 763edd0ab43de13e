// Memory for queued tasks (task_base's class-specific allocation). A help-first scheduler
// queues a heap task per child, and a join frees it soon after, often dozens in a row: more
// than the C library's per-thread cache keeps (glibc's tcache holds 7 blocks of a size), so
// most of them went through its locked arenas. Each thread keeps its own free blocks by size
// class; a block freed on another thread than the one that took it joins that thread's lists,
// up to a bound past which it goes back to the C library. Sanitizer builds use the C library
// directly, so that a task used after its end is still caught.
#include <cstddef>
#include <cstdint>
#include <new>

#include "locus/detail/spawn.hpp"

namespace locus::detail {
namespace {

#if defined(LOCUS_ASAN) || defined(LOCUS_TSAN)
constexpr bool pooled = false;
#else
constexpr bool pooled = true;
#endif

constexpr std::size_t granule = 64;
constexpr std::size_t classes = 8;  // 64 to 512 bytes; larger tasks go to the C library
constexpr std::uint32_t kept_per_class = 256;

struct free_block {
  free_block* next;
};

class task_cache {
 public:
  task_cache() noexcept = default;
  task_cache(const task_cache&) = delete;
  task_cache& operator=(const task_cache&) = delete;
  ~task_cache() {
    for (std::size_t c = 0; c < classes; ++c) {
      while (free_block* b = head_[c]) {
        head_[c] = b->next;
        ::operator delete(b, (c + 1) * granule);
      }
    }
    closed_ = true;
  }

  void* take(std::size_t c) {
    if (free_block* b = head_[c]) {
      head_[c] = b->next;
      --count_[c];
      return b;
    }
    return ::operator new((c + 1) * granule);
  }

  void give(void* p, std::size_t c) noexcept {
    // A thread whose cache is gone (a task freed during the thread's exit) or that keeps enough.
    if (closed_ || count_[c] == kept_per_class) {
      ::operator delete(p, (c + 1) * granule);
      return;
    }
    auto* b = static_cast<free_block*>(p);
    b->next = head_[c];
    head_[c] = b;
    ++count_[c];
  }

 private:
  free_block* head_[classes] = {};
  std::uint32_t count_[classes] = {};
  bool closed_ = false;
};

[[gnu::tls_model("initial-exec")]] thread_local task_cache cache;

constexpr std::size_t class_of(std::size_t bytes) noexcept {
  return (bytes - 1) / granule;
}

}  // namespace

void* task_base::operator new(std::size_t bytes) {
  if (!pooled || bytes > classes * granule) return ::operator new(bytes);
  return cache.take(class_of(bytes));
}

void task_base::operator delete(void* p, std::size_t bytes) noexcept {
  if (!pooled || bytes > classes * granule) {
    ::operator delete(p, bytes);
    return;
  }
  cache.give(p, class_of(bytes));
}

void* task_base::operator new(std::size_t bytes, std::align_val_t align) {
  return ::operator new(bytes, align);
}

void task_base::operator delete(void* p, std::size_t bytes, std::align_val_t align) noexcept {
  ::operator delete(p, bytes, align);
}

}  // namespace locus::detail
