#include "harness/run_order.hpp"

namespace locus_bench {

std::size_t configuration_at(std::size_t round, std::size_t slot, std::size_t configs) noexcept {
  if (configs < 2) return 0;
  // An odd count needs the rows a second time, reversed, for its pairs to balance.
  const bool odd = configs % 2 == 1;
  const std::size_t row = round % (odd ? 2 * configs : configs);
  const bool reversed = row >= configs;
  const std::size_t shift = reversed ? row - configs : row;
  const std::size_t j = reversed ? configs - 1 - slot : slot;
  // The first row: 0, 1, n - 1, 2, n - 2, ...; each later row adds one to every entry.
  const std::size_t first = j == 0 ? 0 : j % 2 == 1 ? (j + 1) / 2 : configs - j / 2;
  return (first + shift) % configs;
}

}  // namespace locus_bench
