// Blocked Z-Morton matrix layout (seed 001, NUMA-WS Sec. III-C, Fig. 6b).
//
// An n x n matrix is cut into b x b blocks; the blocks are stored along the recursive Z curve
// (top-left, top-right, bottom-left, bottom-right quadrant at every level) and each block is
// row-major inside. Every quadrant of such a matrix is then one contiguous quarter of it, so a
// divide-and-conquer algorithm recurses on plain pointers, its base case reads whole contiguous
// blocks, and a quadrant's pages can be placed on one NUMA node. The bit interleaving is paid per
// block, not per element.
//
// Header-only and independent of the runtime: a value type describing the layout and the
// conversions to and from row-major storage.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace locus {

// Position of block (row, col) along the Z curve: the bits of row and col interleaved, the row
// bit above the column bit, so that the four quadrants come in the order 00, 01, 10, 11 at every
// level and each is a contiguous quarter. Each index is spread to the even bits by halving shifts
// (five mask steps instead of a loop over 32 bits).
constexpr std::uint64_t morton(std::uint32_t row, std::uint32_t col) noexcept {
  const auto spread = [](std::uint64_t x) {
    x = (x | (x << 16)) & 0x0000ffff0000ffffull;
    x = (x | (x << 8)) & 0x00ff00ff00ff00ffull;
    x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0full;
    x = (x | (x << 2)) & 0x3333333333333333ull;
    x = (x | (x << 1)) & 0x5555555555555555ull;
    return x;
  };
  return (spread(row) << 1) | spread(col);
}

// The blocked Z-Morton layout of an order() x order() matrix with block_order() x block_order()
// blocks. Both orders are powers of two, the block order at most the order, and order()^2 fits
// in std::size_t.
class z_layout {
 public:
  // Throws std::invalid_argument naming the bad value.
  constexpr z_layout(std::size_t order, std::size_t block_order)
      : order_(order), block_order_(block_order), block_shift_(std::countr_zero(block_order)) {
    if (!std::has_single_bit(order)) {
      throw std::invalid_argument("locus::z_layout: order " + std::to_string(order) +
                                  " is not a power of two");
    }
    if (!std::has_single_bit(block_order)) {
      throw std::invalid_argument("locus::z_layout: block order " + std::to_string(block_order) +
                                  " is not a power of two");
    }
    if (block_order > order) {
      throw std::invalid_argument("locus::z_layout: block order " + std::to_string(block_order) +
                                  " exceeds order " + std::to_string(order));
    }
    if (order > max_order) {
      throw std::invalid_argument("locus::z_layout: order " + std::to_string(order) +
                                  " is too large: order^2 elements overflow std::size_t");
    }
  }

  constexpr std::size_t order() const noexcept { return order_; }
  constexpr std::size_t block_order() const noexcept { return block_order_; }
  // Blocks along one side: order / block order.
  constexpr std::size_t blocks_per_side() const noexcept { return order_ >> block_shift_; }
  constexpr std::size_t block_count() const noexcept {
    return blocks_per_side() * blocks_per_side();
  }
  // Elements of one block.
  constexpr std::size_t block_size() const noexcept { return block_order_ * block_order_; }
  // Elements of the matrix: the length of its storage.
  constexpr std::size_t size() const noexcept { return order_ * order_; }

  // Offset of the first element of block (bi, bj), bi and bj < blocks_per_side().
  constexpr std::size_t block_offset(std::size_t bi, std::size_t bj) const noexcept {
    return static_cast<std::size_t>(
               morton(static_cast<std::uint32_t>(bi), static_cast<std::uint32_t>(bj)))
           << (2 * block_shift_);
  }

  // Offset of element (i, j), i and j < order(). For whole blocks block_offset plus row-major
  // offsets inside the block is cheaper: this interleaves bits on every call.
  constexpr std::size_t index(std::size_t i, std::size_t j) const noexcept {
    const std::size_t mask = block_order_ - 1;
    return block_offset(i >> block_shift_, j >> block_shift_) + ((i & mask) << block_shift_) +
           (j & mask);
  }

  // Whether the matrix has Z quadrants: a single block is row-major throughout.
  constexpr bool has_quadrants() const noexcept { return order_ > block_order_; }

  // Offset of quadrant (qi, qj), each 0 or 1: the (2 qi + qj)-th quarter of the storage. Throws
  // std::out_of_range when qi or qj exceeds 1 or the matrix is a single block.
  constexpr std::size_t quadrant_offset(std::size_t qi, std::size_t qj) const {
    check_quadrants();
    if (qi > 1 || qj > 1) {
      throw std::out_of_range("locus::z_layout::quadrant_offset: quadrant (" + std::to_string(qi) +
                              ", " + std::to_string(qj) + ") does not exist, each must be 0 or 1");
    }
    return (2 * qi + qj) * (size() / 4);
  }

  // The layout of each quadrant: half the order, the same blocks. Throws std::out_of_range when
  // the matrix is a single block.
  constexpr z_layout quadrant_layout() const {
    check_quadrants();
    return z_layout(order_ / 2, block_order_);
  }

  friend constexpr bool operator==(const z_layout&, const z_layout&) = default;

 private:
  // The largest power of two whose square fits in std::size_t (its block indices then fit the
  // 32 bits morton takes).
  static constexpr std::size_t max_order = std::size_t{1}
                                           << (std::numeric_limits<std::size_t>::digits / 2 - 1);

  constexpr void check_quadrants() const {
    if (!has_quadrants()) {
      throw std::out_of_range("locus::z_layout: order " + std::to_string(order_) +
                              " is a single block, it has no Z quadrants");
    }
  }

  std::size_t order_;
  std::size_t block_order_;
  int block_shift_;
};

namespace detail {

inline void check_leading_dimension(const z_layout& layout, std::size_t ld, const char* fn) {
  if (ld < layout.order()) {
    throw std::invalid_argument(std::string("locus::") + fn + ": leading dimension " +
                                std::to_string(ld) + " is below the order " +
                                std::to_string(layout.order()));
  }
}

// Calls copy(z block pointer, row-major pointer of its top-left element) for every block.
template <class Z, class R, class F>
void for_each_z_block(const z_layout& layout, Z* z, R* row_major, std::size_t ld, F&& copy) {
  const std::size_t b = layout.block_order(), nb = layout.blocks_per_side();
  for (std::size_t bi = 0; bi < nb; ++bi) {
    for (std::size_t bj = 0; bj < nb; ++bj) {
      copy(z + layout.block_offset(bi, bj), row_major + bi * b * ld + bj * b);
    }
  }
}

}  // namespace detail

// Copies the row-major matrix (leading dimension ld >= order) into Z storage of layout.size()
// elements. Throws std::invalid_argument when ld is below the order.
template <class T>
void to_z(const z_layout& layout, const T* row_major, std::size_t ld, T* z) {
  detail::check_leading_dimension(layout, ld, "to_z");
  const std::size_t b = layout.block_order();
  detail::for_each_z_block(layout, z, row_major, ld, [b, ld](T* blk, const T* src) {
    for (std::size_t r = 0; r < b; ++r) std::copy_n(src + r * ld, b, blk + r * b);
  });
}

// Copies Z storage back into the row-major matrix (leading dimension ld >= order); the columns
// beyond the order are left alone. Throws std::invalid_argument when ld is below the order.
template <class T>
void from_z(const z_layout& layout, const T* z, T* row_major, std::size_t ld) {
  detail::check_leading_dimension(layout, ld, "from_z");
  const std::size_t b = layout.block_order();
  detail::for_each_z_block(layout, z, row_major, ld, [b, ld](const T* blk, T* dst) {
    for (std::size_t r = 0; r < b; ++r) std::copy_n(blk + r * b, b, dst + r * ld);
  });
}

}  // namespace locus
