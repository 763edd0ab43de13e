// locus::z_layout (blocked Z-Morton layout) against the recursive definition of the layout: the
// quadrants top-left, top-right, bottom-left, bottom-right one after the other, each a Z matrix
// itself, down to one row-major block.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "locus/zmatrix.hpp"

namespace {

// Offset of (i, j) by the recursive definition, not by bit interleaving.
std::size_t reference_index(std::size_t n, std::size_t b, std::size_t i, std::size_t j) {
  if (n == b) return i * b + j;
  const std::size_t h = n / 2;
  const std::size_t q = 2 * (i >= h ? 1 : 0) + (j >= h ? 1 : 0);
  return q * h * h + reference_index(h, b, i % h, j % h);
}

// (order, block order): single elements, a single block, and the cases in between.
const std::vector<std::pair<std::size_t, std::size_t>> shapes = {
    {1, 1}, {2, 1}, {8, 1}, {8, 2}, {16, 4}, {32, 32}, {64, 8}, {128, 16}, {256, 64}};

TEST(ZMatrix, MortonInterleavesRowAboveColumn) {
  EXPECT_EQ(locus::morton(0, 0), 0u);
  EXPECT_EQ(locus::morton(0, 1), 1u);
  EXPECT_EQ(locus::morton(1, 0), 2u);
  EXPECT_EQ(locus::morton(1, 1), 3u);
  EXPECT_EQ(locus::morton(2, 0), 8u);
  EXPECT_EQ(locus::morton(0, 0xffffffffu), 0x5555555555555555u);
  EXPECT_EQ(locus::morton(0xffffffffu, 0), 0xaaaaaaaaaaaaaaaau);
  // Against a bit-by-bit interleave on scattered values.
  std::uint32_t r = 12345, c = 678;
  for (int k = 0; k < 1000; ++k) {
    r = r * 1664525u + 1013904223u;
    c = c * 22695477u + 1u;
    std::uint64_t expected = 0;
    for (int bit = 0; bit < 32; ++bit) {
      expected |= std::uint64_t{(c >> bit) & 1u} << (2 * bit);
      expected |= std::uint64_t{(r >> bit) & 1u} << (2 * bit + 1);
    }
    ASSERT_EQ(locus::morton(r, c), expected) << "row " << r << " col " << c;
  }
}

TEST(ZMatrix, IndexMatchesTheRecursiveDefinition) {
  for (const auto& [n, b] : shapes) {
    const locus::z_layout layout(n, b);
    EXPECT_EQ(layout.order(), n);
    EXPECT_EQ(layout.block_order(), b);
    EXPECT_EQ(layout.size(), n * n);
    EXPECT_EQ(layout.blocks_per_side(), n / b);
    EXPECT_EQ(layout.block_count(), (n / b) * (n / b));
    EXPECT_EQ(layout.block_size(), b * b);
    std::vector<int> hits(n * n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t k = layout.index(i, j);
        ASSERT_EQ(k, reference_index(n, b, i, j))
            << "n " << n << " b " << b << " (" << i << ", " << j << ")";
        ++hits[k];
      }
    }
    // A permutation of the storage: every offset taken exactly once.
    for (std::size_t k = 0; k < n * n; ++k) ASSERT_EQ(hits[k], 1) << "offset " << k;
  }
}

TEST(ZMatrix, BlocksAreRowMajorInside) {
  for (const auto& [n, b] : shapes) {
    const locus::z_layout layout(n, b);
    for (std::size_t bi = 0; bi < n / b; ++bi) {
      for (std::size_t bj = 0; bj < n / b; ++bj) {
        const std::size_t base = layout.block_offset(bi, bj);
        EXPECT_EQ(base % (b * b), 0u);
        EXPECT_EQ(base, reference_index(n, b, bi * b, bj * b));
        for (std::size_t r = 0; r < b; ++r) {
          for (std::size_t c = 0; c < b; ++c) {
            ASSERT_EQ(layout.index(bi * b + r, bj * b + c), base + r * b + c)
                << "n " << n << " b " << b << " block (" << bi << ", " << bj << ")";
          }
        }
      }
    }
  }
}

TEST(ZMatrix, EveryQuadrantIsItsContiguousQuarter) {
  for (const auto& [n, b] : shapes) {
    const locus::z_layout layout(n, b);
    if (!layout.has_quadrants()) {
      EXPECT_EQ(n, b);
      EXPECT_THROW(static_cast<void>(layout.quadrant_layout()), std::out_of_range);
      EXPECT_THROW(static_cast<void>(layout.quadrant_offset(0, 0)), std::out_of_range);
      continue;
    }
    const std::size_t h = n / 2, quarter = n * n / 4;
    const locus::z_layout sub = layout.quadrant_layout();
    EXPECT_EQ(sub, locus::z_layout(h, b));
    for (std::size_t qi = 0; qi < 2; ++qi) {
      for (std::size_t qj = 0; qj < 2; ++qj) {
        const std::size_t offset = layout.quadrant_offset(qi, qj);
        EXPECT_EQ(offset, (2 * qi + qj) * quarter);
        for (std::size_t i = 0; i < h; ++i) {
          for (std::size_t j = 0; j < h; ++j) {
            const std::size_t k = layout.index(qi * h + i, qj * h + j);
            ASSERT_GE(k, offset);
            ASSERT_LT(k, offset + quarter);
            ASSERT_EQ(k, offset + sub.index(i, j));
          }
        }
      }
    }
    EXPECT_THROW(static_cast<void>(layout.quadrant_offset(2, 0)), std::out_of_range);
    EXPECT_THROW(static_cast<void>(layout.quadrant_offset(0, 2)), std::out_of_range);
  }
}

template <class T>
class ZMatrixRoundTrip : public ::testing::Test {};
using element_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ZMatrixRoundTrip, element_types);

TYPED_TEST(ZMatrixRoundTrip, ToZAndBackWithALeadingDimensionAboveTheOrder) {
  using T = TypeParam;
  const T pad = T(-1);
  for (const auto& [n, b] : shapes) {
    const locus::z_layout layout(n, b);
    const std::size_t ld = n + 3;
    std::vector<T> row_major(n * ld, pad);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) row_major[i * ld + j] = static_cast<T>(i * 1000 + j);
    }
    std::vector<T> z(layout.size(), pad);
    locus::to_z(layout, row_major.data(), ld, z.data());
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        ASSERT_EQ(z[layout.index(i, j)], row_major[i * ld + j])
            << "n " << n << " b " << b << " (" << i << ", " << j << ")";
      }
    }
    std::vector<T> back(n * ld, pad);
    locus::from_z(layout, z.data(), back.data(), ld);
    // The n x n part comes back, the columns beyond the order stay untouched.
    EXPECT_EQ(back, row_major) << "n " << n << " b " << b;
  }
}

// The message of the std::invalid_argument f throws, or a note that it threw none.
template <class F>
std::string invalid_argument_message(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument thrown)";
}

void expect_rejected(std::size_t n, std::size_t b, const std::string& names) {
  const std::string message =
      invalid_argument_message([&] { static_cast<void>(locus::z_layout(n, b)); });
  EXPECT_NE(message.find(names), std::string::npos)
      << "z_layout(" << n << ", " << b << "): \"" << message << "\" should name \"" << names
      << "\"";
}

TEST(ZMatrix, RejectsOrdersThatAreNotPowersOfTwoOrBlocksAboveTheOrder) {
  expect_rejected(12, 4, "order 12 ");
  expect_rejected(0, 1, "order 0 ");
  expect_rejected(16, 3, "block order 3 ");
  expect_rejected(16, 0, "block order 0 ");
  expect_rejected(16, 32, "block order 32 exceeds order 16");
  // order^2 elements would not fit in std::size_t.
  const std::size_t too_large = std::size_t{1} << (std::numeric_limits<std::size_t>::digits / 2);
  expect_rejected(too_large, 1, "order " + std::to_string(too_large) + " ");
  EXPECT_NO_THROW(static_cast<void>(locus::z_layout(too_large / 2, 1)));
}

TEST(ZMatrix, ConversionsRejectALeadingDimensionBelowTheOrder) {
  const locus::z_layout layout(8, 2);
  std::vector<float> row_major(8 * 8), z(layout.size());
  const std::string to =
      invalid_argument_message([&] { locus::to_z(layout, row_major.data(), 7, z.data()); });
  EXPECT_NE(to.find("leading dimension 7"), std::string::npos) << to;
  const std::string from =
      invalid_argument_message([&] { locus::from_z(layout, z.data(), row_major.data(), 7); });
  EXPECT_NE(from.find("leading dimension 7"), std::string::npos) << from;
}

}  // namespace
