// The compression function is unrolled at compile time because UTS spends most of each node in
// it: the rolled 80-step loop made locus-bench's serial UTS 1.7x slower than UTS 2.1's sequential
// program with its unrolled BRG SHA-1 (bench/README.md, "UTS serial kernel against UTS 2.1").
#include "benchmarks/sha1.hpp"

#include <cstring>
#include <utility>

namespace locus_bench::sha1 {

namespace {

constexpr std::uint32_t rotl(std::uint32_t x, int n) noexcept {
  return (x << n) | (x >> (32 - n));
}

std::uint32_t load_be32(const std::uint8_t* p) noexcept {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

// Step t of the 80. With t a template argument, its function, constant and schedule indices are
// compile-time choices, so the 80 steps compile to straight-line code: no loop counter, no
// branch, and the working variables renamed rather than moved.
template <int t>
void step(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c, std::uint32_t& d, std::uint32_t& e,
          std::uint32_t (&w)[16]) noexcept {
  if constexpr (t >= 16) {
    w[t & 15] = rotl(w[(t + 13) & 15] ^ w[(t + 8) & 15] ^ w[(t + 2) & 15] ^ w[t & 15], 1);
  }
  std::uint32_t f, k;
  // Ch and Maj in their forms with one operation fewer (Schroeppel, Plumb).
  if constexpr (t < 20) {
    f = d ^ (b & (c ^ d));
    k = 0x5A827999u;
  } else if constexpr (t < 40) {
    f = b ^ c ^ d;
    k = 0x6ED9EBA1u;
  } else if constexpr (t < 60) {
    f = (b & c) | (d & (b | c));
    k = 0x8F1BBCDCu;
  } else {
    f = b ^ c ^ d;
    k = 0xCA62C1D6u;
  }
  const std::uint32_t temp = rotl(a, 5) + f + e + k + w[t & 15];
  e = d;
  d = c;
  c = rotl(b, 30);
  b = a;
  a = temp;
}

template <int... t>
void steps(std::uint32_t (&v)[5], std::uint32_t (&w)[16],
           std::integer_sequence<int, t...>) noexcept {
  (step<t>(v[0], v[1], v[2], v[3], v[4], w), ...);
}

// Processes one 64-byte block with a 16-word rolling message schedule.
void compress(std::array<std::uint32_t, 5>& h, const std::uint8_t* block) noexcept {
  std::uint32_t w[16];
  for (int i = 0; i < 16; ++i) w[i] = load_be32(block + 4 * i);
  std::uint32_t v[5] = {h[0], h[1], h[2], h[3], h[4]};
  steps(v, w, std::make_integer_sequence<int, 80>{});
  for (int i = 0; i < 5; ++i) h[i] += v[i];
}

}  // namespace

digest hash(std::span<const std::uint8_t> data) noexcept {
  std::array<std::uint32_t, 5> h{0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
  std::size_t done = 0;
  for (; data.size() - done >= 64; done += 64) compress(h, data.data() + done);

  // Padding: the rest, 0x80, zeros, and the message length in bits as a 64-bit big-endian
  // number, filling one block, or two when the rest leaves fewer than 9 bytes.
  std::uint8_t tail[128] = {};
  const std::size_t rest = data.size() - done;
  if (rest != 0) std::memcpy(tail, data.data() + done, rest);
  tail[rest] = 0x80;
  const std::size_t tail_len = rest + 9 <= 64 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  store_be32(tail + tail_len - 8, static_cast<std::uint32_t>(bits >> 32));
  store_be32(tail + tail_len - 4, static_cast<std::uint32_t>(bits));
  compress(h, tail);
  if (tail_len == 128) compress(h, tail + 64);

  digest out;
  for (int i = 0; i < 5; ++i) store_be32(out.data() + 4 * i, h[i]);
  return out;
}

std::string to_hex(const digest& d) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string s;
  s.reserve(40);
  for (const std::uint8_t byte : d) {
    s += hex[byte >> 4];
    s += hex[byte & 15];
  }
  return s;
}

}  // namespace locus_bench::sha1
