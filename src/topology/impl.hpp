// Private to src/topology: the state behind topology's pimpl and the helpers that fill it.
#pragma once

#include <hwloc.h>

#include <memory>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace locus::topo {

struct hwloc_deleter {
  void operator()(hwloc_topology_t t) const noexcept { hwloc_topology_destroy(t); }
};
using hwloc_handle = std::unique_ptr<hwloc_topology, hwloc_deleter>;

// Everything behind topology::impl (a struct of its own so that the helpers below can name it).
struct topology_state {
  bool synthetic = false;
  hwloc_handle hw;              // pinning on the real machine, restriction (spread_over_places)
  std::vector<node> nodes;      // preorder, nodes[0] is the machine
  std::vector<int> leaves;      // node index of each PU, in tree order
  std::vector<int> leaf_os;     // OS index of each PU (for pinning); -1 when synthetic
  std::vector<int> leaf_place;  // NUMA node (or package) of each leaf
  int num_places = 1;
  std::vector<hwloc_obj_t> place_objs;  // the hwloc object of each place (objects of `hw`)
  std::vector<unsigned> numa_distances;
  int max_distance = 0;
  std::vector<std::string> level_names;  // see topology::level_names()
  int default_workers = 1;
};

struct topology::impl : topology_state {};

// Names the distance levels 0 .. max distance of a tree (as topology::level_names() describes);
// uses only the kind, cache level, depth and children of each node.
std::vector<std::string> name_levels(const std::vector<node>& nodes);

// Fills nodes, leaves, leaf_os, leaf_place, num_places, place_objs, max_distance and level_names
// from a loaded hwloc topology (see build.cpp). Returns, for each place, the hwloc NUMA object it
// stands for, or an empty vector when places are packages (or the whole machine).
std::vector<hwloc_obj_t> build_tree(hwloc_topology_t hw, topology_state& out);

// Fills numa_distances from the OS-provided NUMA latency matrix, if any.
void read_numa_distances(hwloc_topology_t hw, const std::vector<hwloc_obj_t>& numa_places,
                         topology_state& out);

}  // namespace locus::topo
