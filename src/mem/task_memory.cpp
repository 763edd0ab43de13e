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

// A full chain of free blocks on its way through the depot: their addresses, not links through
// the blocks. A block that travels so (freed by a worker that runs more tasks than it builds,
// taken by one that builds more than it runs) is never written by the thread that frees it nor
// read by the one that takes it again, so its lines stay where its last user left them: read by
// the worker that ran the task, still valid in the cache of the worker that built it. Linked
// through the blocks, each such block would be a load from another core's cache before its task
// could be built, on every routed child of a flat loop. A thread's own list, of blocks it has just
// used itself, is linked through them.
struct free_block {
  free_block* next;
};

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

void free_list(free_block* b, std::size_t c) noexcept {
  while (b != nullptr) {
    free_block* next = b->next;
    ::operator delete(b, block_bytes(c));
    b = next;
  }
}

// Full chains, per size class, and emptied chains for the threads that fill them: a thread that
// takes a full chain hands in its emptied one in the same locked step, and a thread that hands in
// a full one gets an emptied one back, so that a chain is not allocated per trip. Trivially
// destructible and constant-initialised, so that a task freed while the program exits still finds
// it.
class depot {
 public:
  // False (the chain stays the caller's) when the class holds enough chains already. Accepted,
  // the caller gets an emptied chain for its next one, or null.
  bool put(std::size_t c, block_chain* chain, block_chain*& empty) noexcept {
    const std::lock_guard hold(lock_);
    if (count_[c] == depot_chains_per_class) return false;
    chain->next = chains_[c];
    chains_[c] = chain;
    ++count_[c];
    empty = empties_;
    if (empty != nullptr) {
      empties_ = empty->next;
      --empty_count_;
    }
    return true;
  }

  std::size_t chains(std::size_t c) noexcept {
    const std::lock_guard hold(lock_);
    return count_[c];
  }

  // A full chain, or null. With one, `emptied` (null or the caller's used-up chain) is kept for a
  // thread that fills chains, or left to the caller to free when enough are kept already.
  block_chain* take(std::size_t c, block_chain*& emptied) noexcept {
    const std::lock_guard hold(lock_);
    block_chain* chain = chains_[c];
    if (chain == nullptr) return nullptr;
    chains_[c] = chain->next;
    --count_[c];
    if (emptied != nullptr && empty_count_ < depot_chains_per_class) {
      emptied->next = empties_;
      empties_ = std::exchange(emptied, nullptr);
      ++empty_count_;
    }
    return chain;
  }

 private:
  spin_lock lock_;
  block_chain* chains_[classes] = {};
  std::uint32_t count_[classes] = {};
  block_chain* empties_ = nullptr;
  std::uint32_t empty_count_ = 0;
};

constinit depot shared_depot;

class task_cache {
 public:
  task_cache() noexcept = default;
  task_cache(const task_cache&) = delete;
  task_cache& operator=(const task_cache&) = delete;
  ~task_cache() {
    for (std::size_t c = 0; c < classes; ++c) {
      free_list(std::exchange(head_[c], nullptr), c);
      if (incoming_[c] != nullptr) free_blocks(incoming_[c]->blocks, incoming_count_[c], c);
      if (outgoing_[c] != nullptr) free_blocks(outgoing_[c]->blocks, outgoing_count_[c], c);
      delete std::exchange(incoming_[c], nullptr);
      delete std::exchange(outgoing_[c], nullptr);
    }
    delete std::exchange(next_chain_, nullptr);
    closed_ = true;
  }

  void* take(std::size_t c) {
    if (free_block* b = head_[c]) {
      head_[c] = b->next;
      --count_[c];
      return b;
    }
    return take_elsewhere(c);
  }

  void give(void* p, std::size_t c) noexcept {
    // A thread whose cache is gone: a task freed during the thread's exit.
    if (closed_) [[unlikely]] {
      ::operator delete(p, block_bytes(c));
      return;
    }
    if (count_[c] < kept_per_class) {
      auto* b = static_cast<free_block*>(p);
      b->next = head_[c];
      head_[c] = b;
      ++count_[c];
      return;
    }
    give_elsewhere(p, c);
  }

 private:
  // The chains, out of line: the common case above then keeps few registers.
  [[gnu::noinline]] void* take_elsewhere(std::size_t c) {
    if (incoming_count_[c] != 0) return incoming_[c]->blocks[--incoming_count_[c]];
    if (outgoing_count_[c] != 0) return outgoing_[c]->blocks[--outgoing_count_[c]];
    block_chain* emptied = incoming_[c];
    if (block_chain* chain = shared_depot.take(c, emptied)) {
      delete emptied;  // null unless the depot keeps enough emptied chains
      incoming_[c] = chain;
      incoming_count_[c] = chain_length - 1;
      return chain->blocks[chain_length - 1];
    }
    return ::operator new(block_bytes(c));
  }

  [[gnu::noinline]] void give_elsewhere(void* p, std::size_t c) noexcept {
    if (outgoing_[c] == nullptr) {
      outgoing_[c] = next_chain_ != nullptr ? std::exchange(next_chain_, nullptr)
                                            : new (std::nothrow) block_chain;
      if (outgoing_[c] == nullptr) {
        ::operator delete(p, block_bytes(c));
        return;
      }
    }
    outgoing_[c]->blocks[outgoing_count_[c]++] = p;
    if (outgoing_count_[c] < chain_length) return;
    block_chain* full = std::exchange(outgoing_[c], nullptr);
    outgoing_count_[c] = 0;
    block_chain* empty = nullptr;
    if (!shared_depot.put(c, full, empty)) {
      free_blocks(full->blocks, chain_length, c);
      empty = full;  // its array serves the next chain
    }
    // One chain in hand for the next outgoing one, of whatever class.
    if (next_chain_ == nullptr) {
      next_chain_ = empty;
    } else {
      delete empty;
    }
  }

  free_block* head_[classes] = {};  // the blocks this thread keeps, newest first
  std::uint32_t count_[classes] = {};
  block_chain* incoming_[classes] = {};  // the chain it took from the depot, being used up
  std::uint32_t incoming_count_[classes] = {};
  block_chain* outgoing_[classes] = {};  // the chain being filled for the depot
  std::uint32_t outgoing_count_[classes] = {};
  block_chain* next_chain_ = nullptr;  // an emptied chain, for the next outgoing one
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
