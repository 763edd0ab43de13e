#include "ult/slab_registry.hpp"

#include <array>
#include <atomic>

namespace locus::ult {
namespace {

// Each runtime maps a handful of slabs; 4096 live slabs is far beyond any real use (it is over
// 65,000 live stacks). A slot is claimed by CAS on `begin`, published by storing `end` last.
constexpr std::size_t max_slabs = 4096;

struct slot {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<std::size_t> stride{0};
  std::atomic<std::size_t> guard{0};
  std::atomic<std::size_t> stack_bytes{0};
};

std::array<slot, max_slabs> slots;

}  // namespace

void register_slab(const slab_extent& e) noexcept {
  for (auto& s : slots) {
    std::uintptr_t expected = 0;
    if (s.begin.compare_exchange_strong(expected, e.begin, std::memory_order_acq_rel)) {
      s.stride.store(e.stride, std::memory_order_relaxed);
      s.guard.store(e.guard, std::memory_order_relaxed);
      s.stack_bytes.store(e.stack_bytes, std::memory_order_relaxed);
      s.end.store(e.end, std::memory_order_release);
      return;
    }
  }
  // Registry full: overflows in this slab still fault, only without the friendly message.
}

void unregister_slab(std::uintptr_t begin) noexcept {
  for (auto& s : slots) {
    if (s.begin.load(std::memory_order_acquire) == begin) {
      s.end.store(0, std::memory_order_release);
      s.begin.store(0, std::memory_order_release);
      return;
    }
  }
}

bool find_guard_hit(std::uintptr_t addr, slab_extent* hit) noexcept {
  for (auto& s : slots) {
    const std::uintptr_t end = s.end.load(std::memory_order_acquire);
    const std::uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (end == 0 || addr < begin || addr >= end) continue;
    const std::size_t stride = s.stride.load(std::memory_order_relaxed);
    const std::size_t guard = s.guard.load(std::memory_order_relaxed);
    if ((addr - begin) % stride >= guard) return false;
    *hit = {begin, end, stride, guard, s.stack_bytes.load(std::memory_order_relaxed)};
    return true;
  }
  return false;
}

}  // namespace locus::ult
