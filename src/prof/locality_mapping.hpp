// Mapping stability of the locality model: the share of leaf tasks that ran on the same worker as
// in the previous iteration.
#pragma once

#include <cstdint>
#include <vector>

namespace locus::prof {

struct leaf_record {
  std::uint64_t seq = 0;  // global declaration order (the first declaration of an id counts)
  std::uint64_t iteration = 0;
  std::uint64_t id = 0;
  int worker = 0;
};

struct mapping_result {
  std::uint64_t compared = 0;  // ids declared in iteration i and in iteration i - 1, over all i
  std::uint64_t same = 0;      // of those, on the same worker both times
};

// Compares every iteration with the one numbered just before it; ids missing from either side
// and iterations without a predecessor are not compared. Sorts `leaves`.
mapping_result mapping_stability(std::vector<leaf_record>& leaves);

}  // namespace locus::prof
