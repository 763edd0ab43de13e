// Stacks for user-level threads: carved from mmap'd slabs, each with a PROT_NONE guard region
// below it so that an overflow faults instead of corrupting a neighbour.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace locus::ult {

// One cache line holds the fields a spawn touches, and the first bytes of the owner data.
struct alignas(64) stack {
  std::byte* lo = nullptr;  // lowest usable address; the guard lies just below
  std::size_t size = 0;     // usable bytes
  // A finished task's context stays parked at the bottom of its entry loop, ready to run the
  // next task without building a new context (null for a fresh stack).
  void* parked = nullptr;
  // The task on this stack suspended at a join or had a continuation taken by a scheduler since
  // it started: it may be running on another worker than the one that started it.
  bool may_have_moved = false;
  stack* next_free = nullptr;
  // The note of the layer that runs tasks on this stack on the task running here (the task group
  // it is a child of), kept off its record, which is copied on every spawn, but written with it.
  // This layer never reads or writes it.
  void* owner_note = nullptr;
  // Storage for the same layer: its record of the task running here.
  static constexpr std::size_t owner_bytes = 48;
  alignas(16) std::byte owner_data[owner_bytes]{};
  // A second note of that layer (the innermost task group its task has open, while learned size
  // hints attribute work to groups), which the task's spawns do not touch.
  void* owner_scope = nullptr;
  void* sanitizer_fiber = nullptr;  // ThreadSanitizer's fiber for this stack, from its first entry
  std::byte* top() const noexcept { return lo + size; }
};

// Owns every slab of one runtime. Slabs are only unmapped when the arena is destroyed, so the
// overflow handler can check a faulting address against them without locks.
class stack_arena {
 public:
  explicit stack_arena(std::size_t stack_bytes);
  stack_arena(const stack_arena&) = delete;
  stack_arena& operator=(const stack_arena&) = delete;
  ~stack_arena();

  std::size_t stack_bytes() const noexcept { return stack_bytes_; }
  // A chain (linked through next_free) of `count` fresh stacks.
  stack* allocate_chain(std::size_t count);

  // Global pool shared by the workers' local pools: a worker returns a batch when its local
  // pool grows too large and takes one back before mapping new memory.
  void give_back(stack* chain, std::size_t count);
  stack* take_batch(std::size_t* count);

  static constexpr std::size_t guard_bytes = 64 * 1024;

 private:
  struct slab;
  std::size_t stack_bytes_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<slab>> slabs_;
  stack* pool_ = nullptr;
  std::size_t pool_count_ = 0;
};

// Per-worker cache of free stacks (owner thread only). Stacks given back clean (no context
// parked on it: a call on it returned) wait in a few spare slots, so that a spawn whose child
// returns at once takes and gives back the same stack without touching the free list or checking
// for a parked context. A few rather than one: a recursion spawns again first thing in each
// child, a chain of spawns as deep as its recursion, and the stacks of a chain come back
// together when it returns.
class stack_pool {
 public:
  explicit stack_pool(stack_arena& arena) : arena_(&arena) {}
  bool has_spare() const noexcept { return spares_ != 0; }
  // The spare stack given back last; only when has_spare().
  stack* take_spare() noexcept { return spare_[--spares_]; }
  // A stack from the free list (where a finished task's context may be parked, ready to run the
  // next one).
  stack* acquire() {
    if (free_ == nullptr) refill();
    stack* s = free_;
    free_ = s->next_free;
    --count_;
    return s;
  }
  void release(stack* s) noexcept {
    s->next_free = free_;
    free_ = s;
    if (++count_ > high_water) spill();
  }
  // A stack with no context parked on it. Usually the spare taken last, given back by the spawn
  // that took it, whose slot still holds it: only the count moves then.
  void release_clean(stack* s) noexcept {
    if (spare_[spares_] == s) [[likely]] {
      ++spares_;
      return;
    }
    if (spares_ != max_spares) {
      spare_[spares_++] = s;
      return;
    }
    release(s);
  }
  std::size_t cached() const noexcept { return count_ + spares_; }

  static constexpr std::size_t batch = 16;
  static constexpr std::size_t high_water = 4 * batch;

 private:
  void refill();
  void spill() noexcept;
  stack_arena* arena_;
  static constexpr std::size_t max_spares = 8;
  std::size_t spares_ = 0;
  // Slots at and above spares_ keep what they last held (release_clean compares with it); the
  // one past the last stays null, so that comparing with it when all are full finds no match.
  stack* spare_[max_spares + 1]{};
  stack* free_ = nullptr;
  std::size_t count_ = 0;
};

// Installs (once per process) the SIGSEGV handler that turns a guard-page hit into a clear
// message, and gives the calling thread an alternate signal stack to run it on.
void install_overflow_handler();
void prepare_thread_for_overflow_reports();

}  // namespace locus::ult
