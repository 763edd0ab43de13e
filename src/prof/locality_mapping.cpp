#include "prof/locality_mapping.hpp"

#include <algorithm>
#include <tuple>

namespace locus::prof {

mapping_result mapping_stability(std::vector<leaf_record>& leaves) {
  std::sort(leaves.begin(), leaves.end(), [](const leaf_record& a, const leaf_record& b) {
    return std::tie(a.iteration, a.id, a.seq) < std::tie(b.iteration, b.id, b.seq);
  });
  // Keep the first declaration of each (iteration, id).
  leaves.erase(std::unique(leaves.begin(), leaves.end(),
                           [](const leaf_record& a, const leaf_record& b) {
                             return a.iteration == b.iteration && a.id == b.id;
                           }),
               leaves.end());
  mapping_result r;
  // Walk the iterations in order, merge-joining each with its predecessor on id.
  std::size_t prev_begin = 0, prev_end = 0;
  std::size_t begin = 0;
  while (begin < leaves.size()) {
    std::size_t end = begin;
    while (end < leaves.size() && leaves[end].iteration == leaves[begin].iteration) ++end;
    if (prev_end > prev_begin && leaves[prev_begin].iteration + 1 == leaves[begin].iteration) {
      std::size_t i = prev_begin, j = begin;
      while (i < prev_end && j < end) {
        if (leaves[i].id < leaves[j].id) {
          ++i;
        } else if (leaves[j].id < leaves[i].id) {
          ++j;
        } else {
          ++r.compared;
          r.same += leaves[i].worker == leaves[j].worker ? 1 : 0;
          ++i;
          ++j;
        }
      }
    }
    prev_begin = begin;
    prev_end = end;
    begin = end;
  }
  return r;
}

}  // namespace locus::prof
