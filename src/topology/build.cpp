// Turns a loaded hwloc topology into locus's own tree: preorder nodes, PUs as leaves in hwloc
// logical order, NUMA nodes inserted as a level where hwloc attaches them.
#include <algorithm>
#include <optional>

#include "topology/impl.hpp"

namespace locus::topo {
namespace {

int to_index(unsigned os_index) {
  return os_index == HWLOC_UNKNOWN_INDEX ? -1 : static_cast<int>(os_index);
}

std::optional<node_kind> kind_of(hwloc_obj_t o) {
  switch (o->type) {
    case HWLOC_OBJ_MACHINE:
      return node_kind::machine;
    case HWLOC_OBJ_PACKAGE:
      return node_kind::package;
    case HWLOC_OBJ_GROUP:
    case HWLOC_OBJ_DIE:
      return node_kind::group;
    case HWLOC_OBJ_L1CACHE:
    case HWLOC_OBJ_L2CACHE:
    case HWLOC_OBJ_L3CACHE:
    case HWLOC_OBJ_L4CACHE:
    case HWLOC_OBJ_L5CACHE:
      return node_kind::cache;
    case HWLOC_OBJ_CORE:
      return node_kind::core;
    case HWLOC_OBJ_PU:
      return node_kind::pu;
    default:
      return std::nullopt;  // instruction caches and the like: pass through
  }
}

bool has_cpus(hwloc_obj_t o) {
  return o->cpuset != nullptr && !hwloc_bitmap_iszero(o->cpuset);
}

// The first NUMA node with CPUs among the memory children of `o` (looking through memory-side
// caches), or null. CPU-less NUMA nodes (e.g. CXL or persistent memory) are not tree levels.
hwloc_obj_t attached_numa(hwloc_obj_t o) {
  for (hwloc_obj_t m = o->memory_first_child; m != nullptr; m = m->next_sibling) {
    if (m->type == HWLOC_OBJ_NUMANODE) {
      if (has_cpus(m)) return m;
    } else if (hwloc_obj_t inner = attached_numa(m)) {
      return inner;
    }
  }
  return nullptr;
}

class builder {
 public:
  builder(hwloc_topology_t hw, topology_state& out, bool synthetic)
      : hw_(hw), out_(out), synthetic_(synthetic) {}

  std::vector<hwloc_obj_t> run() {
    hwloc_obj_t root = hwloc_get_root_obj(hw_);
    // hwloc always has at least one NUMA node; when the only one (with CPUs) hangs off the
    // machine it spans everything and adds nothing but a level, so it is left out (hwloc even
    // invents one for synthetic descriptions without NUMA nodes). Places are then packages.
    int with_cpus = 0;
    for (hwloc_obj_t n = hwloc_get_next_obj_by_type(hw_, HWLOC_OBJ_NUMANODE, nullptr); n != nullptr;
         n = hwloc_get_next_obj_by_type(hw_, HWLOC_OBJ_NUMANODE, n)) {
      with_cpus += has_cpus(n) ? 1 : 0;
    }
    if (with_cpus == 1) skipped_numa_ = attached_numa(root);

    visit(root, -1);
    finish_leaf_ranges(0);
    assign_places();
    out_.max_distance = max_distance(0);
    out_.level_names = name_levels(out_.nodes);
    return numa_objs_;
  }

 private:
  int add(node_kind kind, int parent, hwloc_obj_t o) {
    node n;
    n.kind = kind;
    n.parent = parent;
    n.depth = parent < 0 ? 0 : out_.nodes[static_cast<std::size_t>(parent)].depth + 1;
    if (kind == node_kind::cache) {
      n.cache_level = static_cast<int>(o->attr->cache.depth);
      n.cache_bytes = static_cast<std::size_t>(o->attr->cache.size);
      n.line_bytes = o->attr->cache.linesize;
    }
    n.os_index = synthetic_ ? -1 : to_index(o->os_index);
    const int index = static_cast<int>(out_.nodes.size());
    out_.nodes.push_back(std::move(n));
    objs_.push_back(o);
    if (parent >= 0) out_.nodes[static_cast<std::size_t>(parent)].children.push_back(index);
    if (kind == node_kind::pu) {
      out_.leaves.push_back(index);
      out_.leaf_os.push_back(synthetic_ ? -1 : to_index(o->os_index));
    }
    return index;
  }

  void visit(hwloc_obj_t o, int parent) {
    int self = parent;
    if (auto kind = kind_of(o)) self = add(*kind, parent, o);
    if (o->type == HWLOC_OBJ_PU) return;
    int under = self;
    if (hwloc_obj_t numa = attached_numa(o); numa != nullptr && numa != skipped_numa_) {
      under = add(node_kind::numa, self, numa);
      numa_objs_.push_back(numa);
    }
    for (hwloc_obj_t c = o->first_child; c != nullptr; c = c->next_sibling) visit(c, under);
  }

  // Leaves were added in preorder, so a preorder walk numbers them again.
  void finish_leaf_ranges(int index) {
    auto& n = out_.nodes[static_cast<std::size_t>(index)];
    n.first_leaf = next_leaf_;
    if (n.kind == node_kind::pu) ++next_leaf_;
    for (int c : n.children) finish_leaf_ranges(c);
    out_.nodes[static_cast<std::size_t>(index)].last_leaf = next_leaf_;
  }

  // Places are NUMA nodes in tree order, else packages, else the whole machine.
  void assign_places() {
    node_kind place_kind = node_kind::numa;
    if (numa_objs_.empty()) {
      place_kind = node_kind::package;
      const bool any = std::any_of(out_.nodes.begin(), out_.nodes.end(),
                                   [](const node& n) { return n.kind == node_kind::package; });
      if (!any) place_kind = node_kind::machine;
    }
    out_.leaf_place.assign(out_.leaves.size(), 0);
    out_.place_objs.clear();
    int count = 0;
    for (std::size_t i = 0; i < out_.nodes.size(); ++i) {
      const node& n = out_.nodes[i];
      if (n.kind != place_kind) continue;
      for (int leaf = n.first_leaf; leaf < n.last_leaf; ++leaf) {
        out_.leaf_place[static_cast<std::size_t>(leaf)] = count;
      }
      out_.place_objs.push_back(objs_[i]);
      ++count;
    }
    if (count == 0) out_.place_objs.push_back(hwloc_get_root_obj(hw_));
    out_.num_places = std::max(count, 1);
  }

  // The largest distance between two leaves: over the nodes with at least two subtrees holding
  // leaves, the depth of the deepest leaf below minus the node's depth.
  int max_distance(int index) {
    best_ = 0;
    deepest_leaf(index);
    return best_;
  }

  // Depth of the deepest node below `index`; updates best_.
  int deepest_leaf(int index) {
    const auto& n = out_.nodes[static_cast<std::size_t>(index)];
    int deepest = n.depth;
    int subtrees = 0;
    for (int c : n.children) {
      deepest = std::max(deepest, deepest_leaf(c));
      const auto& child = out_.nodes[static_cast<std::size_t>(c)];
      subtrees += child.last_leaf > child.first_leaf ? 1 : 0;
    }
    if (subtrees >= 2) best_ = std::max(best_, deepest - n.depth);
    return deepest;
  }

  hwloc_topology_t hw_;
  topology_state& out_;
  bool synthetic_;
  hwloc_obj_t skipped_numa_ = nullptr;
  std::vector<hwloc_obj_t> numa_objs_;
  std::vector<hwloc_obj_t> objs_;  // the hwloc object of each node of out_.nodes
  int best_ = 0;
  int next_leaf_ = 0;
};

}  // namespace

std::vector<hwloc_obj_t> build_tree(hwloc_topology_t hw, topology_state& out) {
  return builder(hw, out, out.synthetic).run();
}

}  // namespace locus::topo
