// Address ranges of every live stack slab, readable from a signal handler (lock-free, no
// allocation) so a fault can be attributed to a guard region.
#pragma once

#include <cstddef>
#include <cstdint>

namespace locus::ult {

struct slab_extent {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;
  std::size_t stride = 0;       // guard + stack
  std::size_t guard = 0;        // guard bytes at the start of each stride
  std::size_t stack_bytes = 0;  // usable bytes per stack
};

void register_slab(const slab_extent& e) noexcept;
void unregister_slab(std::uintptr_t begin) noexcept;
// Async-signal-safe. Returns true and fills `hit` if `addr` lies in a guard region.
bool find_guard_hit(std::uintptr_t addr, slab_extent* hit) noexcept;

}  // namespace locus::ult
