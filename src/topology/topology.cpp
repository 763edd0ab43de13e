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
const std::vector<std::string>& topology::level_names() const noexcept {
  return impl_->level_names;
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

hwloc_topology* topology::hwloc() const noexcept {
  return impl_->hw.get();
}

const hwloc_bitmap_s* topology::place_nodeset(int place) const {
  if (place < 0 || place >= impl_->num_places) {
    throw std::out_of_range("locus::topo: place " + std::to_string(place) + " is not in [0, " +
                            std::to_string(impl_->num_places) + ")");
  }
  return impl_->place_objs[static_cast<std::size_t>(place)]->nodeset;
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

// The name of a node's kind in level names (describe() uses hwloc's synthetic spelling).
std::string level_name(const node& n) {
  switch (n.kind) {
    case node_kind::package:
      return "package";
    case node_kind::cache:
      return "L" + std::to_string(n.cache_level);
    default:
      return kind_name(n);
  }
}

// The distinct names of `indices`, in tree order (nodes are stored in preorder), joined by '/'.
std::string joined_names(const std::vector<node>& nodes, std::vector<int> indices) {
  std::sort(indices.begin(), indices.end());
  std::vector<std::string> names;
  for (int i : indices) {
    std::string name = level_name(nodes[static_cast<std::size_t>(i)]);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : "/") + name;
  return out;
}

}  // namespace

std::vector<std::string> name_levels(const std::vector<node>& nodes) {
  // meets[d]: the nodes that are the lowest common ancestor of some pair of leaves at distance
  // d, i.e. of a leaf in one child's subtree and one in another's, d being the deeper leaf's
  // depth minus the node's. Children come after their parents in preorder, so a backward walk
  // knows every child's leaf depths (a handful of distinct values) before it reaches the parent.
  std::vector<std::vector<int>> meets(1);
  std::vector<std::vector<int>> leaf_depths(nodes.size());
  std::vector<int> leaves;
  for (std::size_t i = nodes.size(); i-- > 0;) {
    const node& n = nodes[i];
    std::vector<int>& mine = leaf_depths[i];
    if (n.children.empty()) {
      mine.push_back(n.depth);
      leaves.push_back(static_cast<int>(i));
      continue;
    }
    for (std::size_t a = 0; a < n.children.size(); ++a) {
      const auto& under_a = leaf_depths[static_cast<std::size_t>(n.children[a])];
      for (std::size_t b = a + 1; b < n.children.size(); ++b) {
        for (int da : under_a) {
          for (int db : leaf_depths[static_cast<std::size_t>(n.children[b])]) {
            const auto d = static_cast<std::size_t>(std::max(da, db) - n.depth);
            if (meets.size() <= d) meets.resize(d + 1);
            if (meets[d].empty() || meets[d].back() != static_cast<int>(i)) {
              meets[d].push_back(static_cast<int>(i));
            }
          }
        }
      }
      for (int d : under_a) {
        if (std::find(mine.begin(), mine.end(), d) == mine.end()) mine.push_back(d);
      }
    }
  }
  std::vector<std::string> names;
  for (std::size_t d = 0; d < meets.size(); ++d) {
    std::vector<int> named_by = meets[d];
    if (named_by.empty()) {
      for (int leaf : leaves) {
        int up = leaf;
        for (std::size_t k = 0; k < d && up >= 0; ++k) {
          up = nodes[static_cast<std::size_t>(up)].parent;
        }
        if (up >= 0) named_by.push_back(up);
      }
    }
    names.push_back(joined_names(nodes, std::move(named_by)));
  }
  return names;
}

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
