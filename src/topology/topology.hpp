// The machine as a tree (machine, package, NUMA node, caches, core, PU), from hwloc or from an
// hwloc synthetic description. Workers are the first N leaves in tree order, so that neighbours
// in number are neighbours in the cache tree.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

// hwloc's own types (hwloc.h), for the memory layer, without making every includer see hwloc.
struct hwloc_topology;
struct hwloc_bitmap_s;

namespace locus::topo {

enum class node_kind { machine, package, numa, cache, core, pu, group };

struct node {
  node_kind kind = node_kind::machine;
  int depth = 0;              // 0 = machine root
  int parent = -1;            // index into topology::nodes(), -1 for the root
  std::vector<int> children;  // indices into topology::nodes(), in tree order
  int cache_level = 0;        // 1, 2, 3 for caches; 0 otherwise
  std::size_t cache_bytes = 0;
  std::size_t line_bytes = 0;
  int os_index = -1;   // hwloc os_index (PU number, NUMA node number, ...); -1 when synthetic
  int first_leaf = 0;  // the leaves (PUs) under this node are [first_leaf, last_leaf)
  int last_leaf = 0;
};

class topology {
 public:
  // The real machine, restricted to the process's CPU affinity mask. The default worker count is
  // the number of allowed PUs, capped by the cgroup CPU quota rounded up (never 0).
  static topology detect();
  // An hwloc synthetic description such as "pack:2 l3:1(size=32MB) l2:4 core:1 pu:1". Throws
  // locus::config_error naming `variable` and the expected format when it is invalid.
  static topology synthetic(std::string_view description,
                            std::string_view variable = "LOCUS_TOPOLOGY");

  // `whole` with only the leaves `workers` workers use, spread evenly over its places (NUMA
  // nodes, else packages): each place keeps its first leaves in tree order, the first places one
  // more when they do not divide evenly. Unchanged when the workers use every leaf or there is
  // one place.
  static topology spread_over_places(topology whole, int workers);

  topology(topology&&) noexcept;
  topology& operator=(topology&&) noexcept;
  ~topology();

  bool is_synthetic() const noexcept;
  const std::vector<node>& nodes() const noexcept;
  int num_leaves() const noexcept;       // PUs in the (restricted) tree
  int default_workers() const noexcept;  // see detect()
  int leaf_node(int leaf) const;         // node index of the leaf-th PU in tree order
  int max_distance() const noexcept;     // distance between the two farthest leaves
  // Level of the lowest common ancestor of two leaves, counted upwards from the leaves:
  // 0 for the same leaf, 1 for siblings, ..., max_distance() for leaves that only share the root.
  int distance(int leaf_a, int leaf_b) const;
  // A name for each distance level 0 .. max_distance(): the kind of the node where two leaves
  // at that distance meet (their lowest common ancestor): "pu" for 0, then "core", "L1" .. "L5",
  // "numa", "package", "group", "machine". A tree whose leaves are not all at the same depth can
  // have different kinds meeting at one distance: their names are joined with '/' in tree order
  // ("L3/package"). A level at which no two leaves meet (a core with one PU makes level 1 one)
  // is named after the nodes that many levels above the leaves, joined the same way.
  const std::vector<std::string>& level_names() const noexcept;
  // Ancestors of a leaf from the leaf's parent to the root (node indices).
  std::vector<int> ancestors(int leaf) const;
  // Index of the NUMA node (or, without NUMA nodes, package; 0 when neither) holding the leaf,
  // numbered in tree order.
  int numa_of(int leaf) const;
  int num_numa() const noexcept;
  // Relative NUMA distances reported by the OS (row-major num_numa() x num_numa()); empty when
  // the OS gives none (and always for synthetic topologies).
  const std::vector<unsigned>& numa_distances() const noexcept;
  // Whether workers can be pinned: a real topology with at least `workers` leaves.
  bool can_pin(int workers) const noexcept;
  // Binds the calling thread to the PU of `leaf` (no-op when synthetic). Returns false if the OS
  // refused.
  bool pin_current_thread(int leaf) const;
  // The leaf whose PU the calling thread runs on right now; -1 when synthetic or unknown.
  int current_leaf() const noexcept;
  // The OS index of the leaf's PU; -1 when synthetic.
  int os_index_of_leaf(int leaf) const;
  // Binds the calling thread to every PU of place `place` (its NUMA node; no-op when synthetic).
  // Returns false if the OS refused.
  bool pin_current_thread_to_place(int place) const;
  // For the memory layer (src/mem): the hwloc topology the tree was built from (for a synthetic
  // topology a synthetic one, on which hwloc binds nothing), and the hwloc nodeset of place
  // `place` (0 .. num_numa() - 1): its NUMA node's, or the package's (the machine's) when places
  // are packages (the machine). Both live as long as this topology.
  hwloc_topology* hwloc() const noexcept;
  const hwloc_bitmap_s* place_nodeset(int place) const;
  // One line summary, e.g. "pack:1 numa:1 l3:1(32MB) l2:2(1MB) l1:2(32KB) core:2 pu:2".
  std::string describe() const;

 private:
  struct impl;
  explicit topology(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

// The CPU quota of the process's cgroup (v2 cpu.max or v1 cfs_quota/period) in CPUs, or a
// negative value when there is none. `root` is the filesystem root, for tests.
double cgroup_cpu_quota(const std::string& root = "/");

}  // namespace locus::topo
