// Queries on the machine tree: leaves, distances, ancestors, places, and the one-line summary.
#include "topology/topology.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "topology/impl.hpp"

namespace locus::topo {

topology::topology(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
topology::topology(topology&&) noexcept = default;
topology& topology::operator=(topology&&) noexcept = default;
topology::~topology() = default;

bool topology::is_synthetic() const noexcept {
  return impl_->synthetic;
}
const std::vector<node>& topology::nodes() const noexcept {
  return impl_->nodes;
}
int topology::num_leaves() const noexcept {
  return static_cast<int>(impl_->leaves.size());
}
int topology::default_workers() const noexcept {
  return impl_->default_workers;
}
int topology::max_distance() const noexcept {
  return impl_->max_distance;
}
int topology::num_numa() const noexcept {
  return impl_->num_places;
}
const std::vector<unsigned>& topology::numa_distances() const noexcept {
  return impl_->numa_distances;
}

int topology::leaf_node(int leaf) const {
  if (leaf < 0 || leaf >= num_leaves()) {
    throw std::out_of_range("locus::topo: leaf " + std::to_string(leaf) + " is not in [0, " +
                            std::to_string(num_leaves()) + ")");
  }
  return impl_->leaves[static_cast<std::size_t>(leaf)];
}

int topology::distance(int leaf_a, int leaf_b) const {
  const int a = leaf_node(leaf_a);
  const int b = leaf_node(leaf_b);
  if (a == b) return 0;
  const auto& nodes = impl_->nodes;
  int lca = a;
  while (nodes[static_cast<std::size_t>(lca)].first_leaf > leaf_b ||
         nodes[static_cast<std::size_t>(lca)].last_leaf <= leaf_b) {
    lca = nodes[static_cast<std::size_t>(lca)].parent;
  }
  const int deeper =
      std::max(nodes[static_cast<std::size_t>(a)].depth, nodes[static_cast<std::size_t>(b)].depth);
  return deeper - nodes[static_cast<std::size_t>(lca)].depth;
}

std::vector<int> topology::ancestors(int leaf) const {
  std::vector<int> out;
  for (int n = impl_->nodes[static_cast<std::size_t>(leaf_node(leaf))].parent; n >= 0;
       n = impl_->nodes[static_cast<std::size_t>(n)].parent) {
    out.push_back(n);
  }
  return out;
}

int topology::numa_of(int leaf) const {
  leaf_node(leaf);  // range check
  return impl_->leaf_place[static_cast<std::size_t>(leaf)];
}

namespace {

std::string kind_name(const node& n) {
  switch (n.kind) {
    case node_kind::machine:
      return "machine";
    case node_kind::package:
      return "pack";
    case node_kind::numa:
      return "numa";
    case node_kind::cache:
      return "l" + std::to_string(n.cache_level);
    case node_kind::core:
      return "core";
    case node_kind::pu:
      return "pu";
    case node_kind::group:
      return "group";
  }
  return "?";
}

// Binary units, as caches are sized: 32KB, 1MB, 38.5MB.
std::string format_bytes(std::size_t bytes) {
  static constexpr std::pair<std::size_t, const char*> units[] = {{std::size_t{1} << 40, "TB"},
                                                                  {std::size_t{1} << 30, "GB"},
                                                                  {std::size_t{1} << 20, "MB"},
                                                                  {std::size_t{1} << 10, "KB"}};
  for (const auto& [size, name] : units) {
    if (bytes < size) continue;
    if (bytes % size == 0) return std::to_string(bytes / size) + name;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%s", static_cast<double>(bytes) / static_cast<double>(size),
                  name);
    return buf;
  }
  return std::to_string(bytes) + "B";
}

}  // namespace

std::string topology::describe() const {
  // Levels in order of first appearance in preorder (the leftmost path from the root), each with
  // its node count and the distinct cache sizes.
  struct level {
    std::string name;
    int count = 0;
    std::vector<std::size_t> sizes;
  };
  std::vector<level> levels;
  for (const node& n : impl_->nodes) {
    if (n.kind == node_kind::machine) continue;
    const std::string name = kind_name(n);
    auto it =
        std::find_if(levels.begin(), levels.end(), [&](const level& l) { return l.name == name; });
    if (it == levels.end()) it = levels.insert(levels.end(), level{name, 0, {}});
    ++it->count;
    if (n.cache_bytes != 0 &&
        std::find(it->sizes.begin(), it->sizes.end(), n.cache_bytes) == it->sizes.end()) {
      it->sizes.push_back(n.cache_bytes);
    }
  }
  std::string out;
  for (const level& l : levels) {
    if (!out.empty()) out += ' ';
    out += l.name + ':' + std::to_string(l.count);
    for (std::size_t i = 0; i < l.sizes.size(); ++i) {
      out += i == 0 ? '(' : '/';
      out += format_bytes(l.sizes[i]);
    }
    if (!l.sizes.empty()) out += ')';
  }
  return out;
}

}  // namespace locus::topo
