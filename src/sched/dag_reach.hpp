// Whether a directed graph has a path between two nodes: the cycle check of the DAGs users
// build edge by edge (dependence_assembly, flow_graph), before an edge is added.
#pragma once

#include <cstddef>
#include <vector>

namespace locus::detail {

// Nodes are 0 .. count - 1; successors(n) is a range of the nodes n has edges to.
template <class Successors>
bool reaches(std::size_t count, std::size_t from, std::size_t to, Successors successors) {
  std::vector<bool> seen(count, false);
  std::vector<std::size_t> pending{from};
  while (!pending.empty()) {
    const std::size_t n = pending.back();
    pending.pop_back();
    if (n == to) return true;
    if (seen[n]) continue;
    seen[n] = true;
    for (const auto s : successors(n)) pending.push_back(static_cast<std::size_t>(s));
  }
  return false;
}

}  // namespace locus::detail
