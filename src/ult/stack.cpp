#include "ult/stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <string>
#include <system_error>

#include "ult/slab_registry.hpp"

#if defined(LOCUS_TSAN)
#include <sanitizer/tsan_interface.h>
#endif
#if defined(LOCUS_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace locus::ult {
namespace {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

// Stacks lie a whole number of pages apart, so without an offset the top of every stack, where a
// spawned child's frames are, falls in the same few sets of the L1 and L2 caches: a recursion
// that spawns at every level keeps one such region per level hot, as many as the cache has ways
// before they evict each other. Tops staggered over a page spread them over all the sets.
constexpr std::size_t colours = 8;
constexpr std::size_t colour_bytes = 512;
std::size_t colour_offset(std::size_t index, std::size_t stack_bytes) {
  // Small stacks (LOCUS_STACK_SIZE down to 16 KiB) keep all their room.
  if (stack_bytes < 16 * colours * colour_bytes) return 0;
  return (index % colours) * colour_bytes;
}

}  // namespace

struct stack_arena::slab {
  slab(std::size_t stack_bytes, std::size_t count)
      : stride(guard_bytes + stack_bytes), bytes(stride * count), stacks(count) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      throw std::system_error(errno, std::generic_category(),
                              "locus: cannot map task stacks (" + std::to_string(count) + " x " +
                                  std::to_string(stride) + " bytes)");
    }
    base = static_cast<std::byte*>(p);
#if defined(LOCUS_ASAN)
    // Parked contexts never return, so their frames' redzones stay poisoned in the shadow; a new
    // mapping at a recycled address must start clean.
    __asan_unpoison_memory_region(base, bytes);
#endif
    for (std::size_t i = 0; i < count; ++i) {
      std::byte* guard = base + i * stride;
      if (::mprotect(guard, guard_bytes, PROT_NONE) != 0) {
        const int err = errno;
        ::munmap(base, bytes);
        // ENOMEM here means vm.max_map_count: every guard region splits the mapping, so the
        // number of task stacks alive at once is limited to about half of it.
        throw std::system_error(err, std::generic_category(),
                                "locus: cannot protect a task stack's guard region (too many "
                                "stacks alive at once? each takes two of vm.max_map_count's "
                                "memory mappings)");
      }
      stacks[i].lo = guard + guard_bytes;
      stacks[i].size = stack_bytes - colour_offset(i, stack_bytes);
      stacks[i].next_free = i + 1 < count ? &stacks[i + 1] : nullptr;
    }
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    register_slab({b, b + bytes, stride, guard_bytes, stack_bytes});
  }
  ~slab() {
    unregister_slab(reinterpret_cast<std::uintptr_t>(base));
#if defined(LOCUS_TSAN)
    for (auto& s : stacks) {
      if (s.sanitizer_fiber != nullptr) __tsan_destroy_fiber(s.sanitizer_fiber);
    }
#endif
#if defined(LOCUS_ASAN)
    __asan_unpoison_memory_region(base, bytes);
#endif
    ::munmap(base, bytes);
  }
  slab(const slab&) = delete;
  slab& operator=(const slab&) = delete;

  std::size_t stride;
  std::size_t bytes;
  std::byte* base = nullptr;
  std::vector<stack> stacks;
};

stack_arena::stack_arena(std::size_t stack_bytes)
    : stack_bytes_(round_up(stack_bytes, page_size())) {}

stack_arena::~stack_arena() = default;

stack* stack_arena::allocate_chain(std::size_t count) {
  std::lock_guard lock(mutex_);
  slabs_.push_back(std::make_unique<slab>(stack_bytes_, count));
  return slabs_.back()->stacks.data();
}

void stack_arena::give_back(stack* chain, std::size_t count) {
  stack* last = chain;
  while (last->next_free != nullptr) last = last->next_free;
  std::lock_guard lock(mutex_);
  last->next_free = pool_;
  pool_ = chain;
  pool_count_ += count;
}

stack* stack_arena::take_batch(std::size_t* count) {
  std::lock_guard lock(mutex_);
  if (pool_ == nullptr) return nullptr;
  stack* head = pool_;
  stack* last = head;
  std::size_t n = 1;
  while (n < stack_pool::batch && last->next_free != nullptr) {
    last = last->next_free;
    ++n;
  }
  pool_ = last->next_free;
  pool_count_ -= n;
  last->next_free = nullptr;
  *count = n;
  return head;
}

void stack_pool::refill() {
  std::size_t n = 0;
  stack* chain = arena_->take_batch(&n);
  if (chain == nullptr) {
    chain = arena_->allocate_chain(batch);
    n = batch;
  }
  free_ = chain;
  count_ = n;
}

void stack_pool::spill() noexcept {
  // Keep `batch` stacks for the next spawns; hand the rest to the arena so that stacks freed
  // here after migrating from other workers do not pile up.
  stack* keep_last = free_;
  for (std::size_t i = 1; i < batch; ++i) keep_last = keep_last->next_free;
  stack* rest = keep_last->next_free;
  keep_last->next_free = nullptr;
  const std::size_t spilled = count_ - batch;
  count_ = batch;
  arena_->give_back(rest, spilled);
}

}  // namespace locus::ult
