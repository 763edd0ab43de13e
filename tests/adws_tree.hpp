// Binary task trees for the ADWS tests: balanced, or cut at random points, with each subtree's
// leaf count as its work hint.
#pragma once

#include <cstdint>
#include <memory>

namespace locus_test {

// A binary task tree: a leaf, or two subtrees whose work hints are their leaf counts.
struct node {
  int leaf_id = -1;
  int leaves = 1;
  std::unique_ptr<node> left, right;
};

inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ULL;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dULL;
  return x ^ (x >> 33);
}

// `leaves` leaves; balanced halves, or a random cut when `seed` is non-zero.
inline std::unique_ptr<node> build(int leaves, std::uint64_t seed, int& next_id) {
  auto n = std::make_unique<node>();
  n->leaves = leaves;
  if (leaves == 1) {
    n->leaf_id = next_id++;
    return n;
  }
  int left = leaves / 2;
  if (seed != 0) left = 1 + static_cast<int>(mix(seed) % static_cast<std::uint64_t>(leaves - 1));
  n->left = build(left, seed == 0 ? 0 : mix(seed + 1), next_id);
  n->right = build(leaves - left, seed == 0 ? 0 : mix(seed + 2), next_id);
  return n;
}

}  // namespace locus_test
