// A 64-bit finalizer (splitmix64's): every input bit reaches every output bit, so that keys built
// by adding or xoring small numbers (lines, ordinals, paths) spread over all 64 bits.
#pragma once

#include <cstdint>

namespace locus::prof {

constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace locus::prof
