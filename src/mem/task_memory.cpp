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
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
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

// A full chain of free blocks on its way through the depot: their addresses, not links through
// the blocks. A block then is never written by the thread that frees it nor read by the one that
// takes it again, so its lines stay where its last user left them: read by the worker that ran
// the task, still valid in the cache of the worker that built it. Linked through the blocks, the
// link written at the free made each reused block a load from another core's cache before the
// task could even be built, on every routed child of a flat loop.
struct block_chain {
  block_chain* next = nullptr;
  void* blocks[chain_length];
};

constexpr std::size_t block_bytes(std::size_t c) noexcept {
  return (c + 1) * granule;
}

void free_blocks(void* const* blocks, std::uint32_t n, std::size_t c) noexcept {
  for (std::uint32_t i = 0; i < n; ++i) ::operator delete(blocks[i], block_bytes(c));
}

// Full chains, per size class. Trivially destructible and constant-initialised, so that a task
// freed while the program exits still finds it.
class depot {
 public:
  // False (the chain stays the caller's) when the class holds enough chains already.
  bool put(std::size_t c, block_chain* chain) noexcept {
    const std::lock_guard hold(lock_);
    if (count_[c] == depot_chains_per_class) return false;
    chain->next = chains_[c];
    chains_[c] = chain;
    ++count_[c];
    return true;
  }

  std::size_t chains(std::size_t c) noexcept {
    const std::lock_guard hold(lock_);
    return count_[c];
  }

  block_chain* take(std::size_t c) noexcept {
    const std::lock_guard hold(lock_);
    block_chain* chain = chains_[c];
    if (chain != nullptr) {
      chains_[c] = chain->next;
      --count_[c];
    }
    return chain;
  }

 private:
  spin_lock lock_;
  block_chain* chains_[classes] = {};
  std::uint32_t count_[classes] = {};
};

constinit depot shared_depot;

// One thread's free blocks of one size class: those it keeps, newest last, and the chain it is
// filling for the depot.
struct class_cache {
  void* kept[kept_per_class];
  std::uint32_t count = 0;
  std::unique_ptr<block_chain> outgoing;
  std::uint32_t outgoing_count = 0;
  // An emptied chain, kept for the next outgoing one.
  std::unique_ptr<block_chain> spare;
};

class task_cache {
 public:
  task_cache() noexcept = default;
  task_cache(const task_cache&) = delete;
  task_cache& operator=(const task_cache&) = delete;
  ~task_cache() {
    if (classes_ != nullptr) {
      for (std::size_t c = 0; c < classes; ++c) {
        class_cache& k = classes_[c];
        free_blocks(k.kept, k.count, c);
        if (k.outgoing) free_blocks(k.outgoing->blocks, k.outgoing_count, c);
      }
      classes_.reset();
    }
    closed_ = true;
  }

  void* take(std::size_t c) {
    class_cache* kc = of(c);
    if (kc == nullptr) [[unlikely]]
      return ::operator new(block_bytes(c));
    class_cache& k = *kc;
    if (k.count != 0) return k.kept[--k.count];
    if (k.outgoing_count != 0) return k.outgoing->blocks[--k.outgoing_count];
    if (block_chain* chain = shared_depot.take(c)) {
      std::copy(std::begin(chain->blocks), std::end(chain->blocks), k.kept);
      k.count = chain_length - 1;
      k.spare.reset(chain);
      return k.kept[chain_length - 1];
    }
    return ::operator new(block_bytes(c));
  }

  void give(void* p, std::size_t c) noexcept {
    class_cache* kc = of(c);
    if (kc == nullptr) [[unlikely]] {
      ::operator delete(p, block_bytes(c));
      return;
    }
    class_cache& k = *kc;
    if (k.count < kept_per_class) {
      k.kept[k.count++] = p;
      return;
    }
    if (!k.outgoing) {
      k.outgoing = k.spare ? std::move(k.spare)
                           : std::unique_ptr<block_chain>(new (std::nothrow) block_chain);
      if (!k.outgoing) {
        ::operator delete(p, block_bytes(c));
        return;
      }
    }
    k.outgoing->blocks[k.outgoing_count++] = p;
    if (k.outgoing_count < chain_length) return;
    std::unique_ptr<block_chain> full = std::move(k.outgoing);
    k.outgoing_count = 0;
    if (shared_depot.put(c, full.get())) {
      (void)full.release();
    } else {
      free_blocks(full->blocks, chain_length, c);
      k.spare = std::move(full);
    }
  }

 private:
  // Null once the thread's cache is gone (a task freed during the thread's exit), or when the
  // cache could not be allocated: the C library serves the block then.
  class_cache* of(std::size_t c) noexcept {
    if (classes_ == nullptr) [[unlikely]] {
      if (closed_) return nullptr;
      classes_.reset(new (std::nothrow) class_cache[classes]);
      if (classes_ == nullptr) return nullptr;
    }
    return &classes_[c];
  }

  // Allocated at the first task: some 16 KB a thread, too much for static TLS.
  std::unique_ptr<class_cache[]> classes_;
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
