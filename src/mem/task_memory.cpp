// Memory for queued tasks (task_base's class-specific allocation). A help-first scheduler
// queues a heap task per child, and a join frees it soon after, often dozens in a row: more
// than the C library's per-thread cache keeps (glibc's tcache holds 7 blocks of a size), so
// most of them went through its locked arenas. Each thread keeps its own free blocks by size
// class; a block freed on another thread than the one that took it joins that thread's lists.
// Past a bound, a thread's further free blocks are gathered into chains and handed to a depot
// shared by all threads, from which a thread whose lists are empty takes a whole chain: where
// one worker queues the tasks of a loop and another runs them (a stolen loop), blocks flow from
// the second back to the first a chain at a time, one lock per chain, instead of through the C
// library block by block. Sanitizer builds use the C library directly, so that a task used
// after its end is still caught.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <utility>

#include "mem/task_memory.hpp"
#include "sched/spin_lock.hpp"

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
constexpr std::uint32_t kept_per_class = task_blocks_kept_per_thread;
constexpr std::uint32_t chain_length = task_depot_chain_length;
constexpr std::uint32_t depot_chains_per_class = task_depot_max_chains;  // beyond: the C library

struct free_block {
  free_block* next;
  free_block* next_chain;  // in the depot, on a chain's first block
};

void free_chain(free_block* b, std::size_t c) noexcept {
  while (b != nullptr) {
    free_block* next = b->next;
    ::operator delete(b, (c + 1) * granule);
    b = next;
  }
}

// Full chains of free blocks, per size class. Trivially destructible and constant-initialised,
// so that a task freed while the program exits still finds it.
class depot {
 public:
  // False (the chain stays the caller's) when the class holds enough chains already.
  bool put(std::size_t c, free_block* chain) noexcept {
    const std::lock_guard hold(lock_);
    if (count_[c] == depot_chains_per_class) return false;
    chain->next_chain = chains_[c];
    chains_[c] = chain;
    ++count_[c];
    return true;
  }

  std::size_t chains(std::size_t c) noexcept {
    const std::lock_guard hold(lock_);
    return count_[c];
  }

  free_block* take(std::size_t c) noexcept {
    const std::lock_guard hold(lock_);
    free_block* chain = chains_[c];
    if (chain != nullptr) {
      chains_[c] = chain->next_chain;
      --count_[c];
    }
    return chain;
  }

 private:
  spin_lock lock_;
  free_block* chains_[classes] = {};
  std::uint32_t count_[classes] = {};
};

constinit depot shared_depot;

class task_cache {
 public:
  task_cache() noexcept = default;
  task_cache(const task_cache&) = delete;
  task_cache& operator=(const task_cache&) = delete;
  ~task_cache() {
    for (std::size_t c = 0; c < classes; ++c) {
      free_chain(std::exchange(head_[c], nullptr), c);
      free_chain(std::exchange(outgoing_[c], nullptr), c);
    }
    closed_ = true;
  }

  void* take(std::size_t c) {
    if (free_block* b = head_[c]) {
      head_[c] = b->next;
      --count_[c];
      return b;
    }
    if (free_block* b = outgoing_[c]) {
      outgoing_[c] = b->next;
      --outgoing_count_[c];
      return b;
    }
    if (free_block* chain = shared_depot.take(c)) {
      head_[c] = chain->next;
      count_[c] = chain_length - 1;
      return chain;
    }
    return ::operator new((c + 1) * granule);
  }

  void give(void* p, std::size_t c) noexcept {
    // A thread whose cache is gone: a task freed during the thread's exit.
    if (closed_) {
      ::operator delete(p, (c + 1) * granule);
      return;
    }
    auto* b = static_cast<free_block*>(p);
    if (count_[c] < kept_per_class) {
      b->next = head_[c];
      head_[c] = b;
      ++count_[c];
      return;
    }
    b->next = outgoing_[c];
    outgoing_[c] = b;
    if (++outgoing_count_[c] < chain_length) return;
    free_block* chain = std::exchange(outgoing_[c], nullptr);
    outgoing_count_[c] = 0;
    if (!shared_depot.put(c, chain)) free_chain(chain, c);
  }

 private:
  free_block* head_[classes] = {};
  std::uint32_t count_[classes] = {};
  free_block* outgoing_[classes] = {};  // the chain being filled for the depot
  std::uint32_t outgoing_count_[classes] = {};
  bool closed_ = false;
};

[[gnu::tls_model("initial-exec")]] thread_local task_cache cache;

constexpr std::size_t class_of(std::size_t bytes) noexcept {
  return (bytes - 1) / granule;
}

}  // namespace

std::size_t task_depot_chains(std::size_t task_bytes) noexcept {
  if (!pooled || task_bytes > classes * granule) return 0;
  return shared_depot.chains(class_of(task_bytes));
}

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
