// SHA-1 (FIPS 180-4), written for UTS's splittable random number generator, which hashes one
// 20- or 24-byte message per tree node. Not for security.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace locus_bench::sha1 {

using digest = std::array<std::uint8_t, 20>;

// The digest of `data`.
digest hash(std::span<const std::uint8_t> data) noexcept;

// Lower-case hex, for tests and messages.
std::string to_hex(const digest& d);

}  // namespace locus_bench::sha1
