// Tests of src/topology: synthetic and real trees, distances, places, cgroup quotas, pinning.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "locus/runtime.hpp"
#include "topology/cgroup.hpp"
#include "topology/impl.hpp"
#include "topology/topology.hpp"

namespace fs = std::filesystem;
using locus::topo::name_levels;
using locus::topo::node;
using locus::topo::node_kind;
using locus::topo::topology;

namespace {

constexpr const char* kEight = "pack:2 l3:1(size=32MB) l2:4(size=1MB) core:1 pu:1";
constexpr const char* kCascadeLake =
    "pack:2 l3:1(size=38MB) l2:28(size=1MB) l1d:1(size=32KB) core:1 pu:1";

const node& leaf(const topology& t, int i) {
  return t.nodes()[static_cast<std::size_t>(t.leaf_node(i))];
}

// The first ancestor of leaf `i` of the given kind (and cache level).
const node& ancestor_of_kind(const topology& t, int i, node_kind kind, int cache_level = 0) {
  for (int a : t.ancestors(i)) {
    const node& n = t.nodes()[static_cast<std::size_t>(a)];
    if (n.kind == kind && n.cache_level == cache_level) return n;
  }
  ADD_FAILURE() << "leaf " << i << " has no such ancestor";
  return t.nodes().front();
}

// Structural invariants every tree must satisfy, whatever the machine.
void expect_well_formed(const topology& t) {
  const auto& nodes = t.nodes();
  ASSERT_FALSE(nodes.empty());
  EXPECT_EQ(nodes[0].kind, node_kind::machine);
  EXPECT_EQ(nodes[0].parent, -1);
  EXPECT_EQ(nodes[0].depth, 0);
  EXPECT_EQ(nodes[0].first_leaf, 0);
  EXPECT_EQ(nodes[0].last_leaf, t.num_leaves());
  int pus = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const node& n = nodes[i];
    if (i > 0) {
      ASSERT_GE(n.parent, 0);
      EXPECT_LT(n.parent, static_cast<int>(i)) << "preorder: parents come first";
      const node& p = nodes[static_cast<std::size_t>(n.parent)];
      EXPECT_EQ(n.depth, p.depth + 1);
      EXPECT_LE(p.first_leaf, n.first_leaf);
      EXPECT_GE(p.last_leaf, n.last_leaf);
    }
    EXPECT_LT(n.first_leaf, n.last_leaf) << "every node holds at least one PU";
    if (n.kind == node_kind::pu) {
      EXPECT_TRUE(n.children.empty());
      EXPECT_EQ(n.first_leaf, pus);
      EXPECT_EQ(n.last_leaf, pus + 1);
      EXPECT_EQ(t.leaf_node(pus), static_cast<int>(i));
      ++pus;
    }
    if (n.kind == node_kind::cache) {
      EXPECT_GE(n.cache_level, 1);
      EXPECT_GT(n.cache_bytes, 0U);
    } else {
      EXPECT_EQ(n.cache_level, 0);
    }
    int expect_first = n.first_leaf;
    for (int c : n.children) {
      const node& child = nodes[static_cast<std::size_t>(c)];
      EXPECT_EQ(child.parent, static_cast<int>(i));
      EXPECT_EQ(child.first_leaf, expect_first) << "children cover contiguous leaf ranges";
      expect_first = child.last_leaf;
    }
    if (!n.children.empty()) {
      EXPECT_EQ(expect_first, n.last_leaf);
    }
  }
  EXPECT_EQ(pus, t.num_leaves());
  for (int a = 0; a < t.num_leaves(); ++a) {
    EXPECT_EQ(t.ancestors(a).back(), 0) << "ancestors end at the root";
    EXPECT_LT(t.numa_of(a), t.num_numa());
    EXPECT_GE(t.numa_of(a), 0);
    if (a > 0) {
      EXPECT_GE(t.numa_of(a), t.numa_of(a - 1)) << "places numbered in tree order";
    }
    for (int b = 0; b < t.num_leaves(); ++b) {
      EXPECT_EQ(t.distance(a, b), t.distance(b, a));
      EXPECT_LE(t.distance(a, b), t.max_distance());
      EXPECT_EQ(t.distance(a, b) == 0, a == b);
    }
  }
}

}  // namespace

TEST(TopologySynthetic, EightLeavesTwoPackages) {
  const topology t = topology::synthetic(kEight);
  expect_well_formed(t);
  EXPECT_TRUE(t.is_synthetic());
  EXPECT_EQ(t.num_leaves(), 8);
  EXPECT_EQ(t.default_workers(), 8);
  // machine, 2 packages, 2 L3, 8 L2, 8 cores, 8 PUs; hwloc's invented whole-machine NUMA node is
  // not a level.
  EXPECT_EQ(t.nodes().size(), 29U);
  // Leaf 0: pu (5) <- core (4) <- l2 (3) <- l3 (2) <- pack (1) <- machine (0).
  EXPECT_EQ(t.distance(0, 0), 0);
  EXPECT_EQ(t.distance(0, 1), 3);  // they share the L3, three levels up
  EXPECT_EQ(t.distance(0, 3), 3);
  EXPECT_EQ(t.distance(0, 4), 5);  // only the root is common
  EXPECT_EQ(t.distance(3, 4), 5);
  EXPECT_EQ(t.max_distance(), 5);
  const auto anc = t.ancestors(5);
  ASSERT_EQ(anc.size(), 5U);
  EXPECT_EQ(t.nodes()[static_cast<std::size_t>(anc[0])].kind, node_kind::core);
  EXPECT_EQ(t.nodes()[static_cast<std::size_t>(anc[1])].kind, node_kind::cache);
  EXPECT_EQ(t.nodes()[static_cast<std::size_t>(anc[3])].kind, node_kind::package);
  EXPECT_EQ(anc[4], 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(leaf(t, i).os_index, -1) << "synthetic";
}

TEST(TopologySynthetic, CacheSizesAreBinary) {
  const topology t = topology::synthetic(kEight);
  const node& l3 = ancestor_of_kind(t, 6, node_kind::cache, 3);
  const node& l2 = ancestor_of_kind(t, 6, node_kind::cache, 2);
  EXPECT_EQ(l3.cache_bytes, 32U << 20);
  EXPECT_EQ(l2.cache_bytes, 1U << 20);
  EXPECT_GT(l3.line_bytes, 0U);
  EXPECT_EQ(l3.first_leaf, 4);
  EXPECT_EQ(l3.last_leaf, 8);
  EXPECT_EQ(l2.first_leaf, 6);
  EXPECT_EQ(l2.last_leaf, 7);
  // hwloc's own binary units and plain byte counts are taken as they are.
  const topology mib = topology::synthetic("pack:1 l3:1(size=32MiB) l2:2(size=524288) core:1 pu:1");
  EXPECT_EQ(ancestor_of_kind(mib, 0, node_kind::cache, 3).cache_bytes, 32U << 20);
  EXPECT_EQ(ancestor_of_kind(mib, 1, node_kind::cache, 2).cache_bytes, 512U << 10);
  const topology lower = topology::synthetic("pack:1 l3:1(size=8mb) core:2 pu:1");
  EXPECT_EQ(ancestor_of_kind(lower, 0, node_kind::cache, 3).cache_bytes, 8U << 20);
}

TEST(TopologySynthetic, PlacesArePackagesWithoutNumaNodes) {
  const topology t = topology::synthetic(kEight);
  EXPECT_EQ(t.num_numa(), 2);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(t.numa_of(i), i / 4);
  EXPECT_TRUE(t.numa_distances().empty());
  const topology flat = topology::synthetic("core:4 pu:1");
  EXPECT_EQ(flat.num_numa(), 1);
  EXPECT_EQ(flat.numa_of(3), 0);
}

TEST(TopologySynthetic, NumaNodesAreLevels) {
  const topology t =
      topology::synthetic("pack:2 [numa(memory=1GB)] l3:1(size=16MB) l2:4(size=1MB) core:1 pu:1");
  expect_well_formed(t);
  EXPECT_EQ(t.num_leaves(), 8);
  EXPECT_EQ(t.num_numa(), 2);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(t.numa_of(i), i / 4);
  // pu (6) <- core <- l2 <- l3 <- numa (2) <- pack (1) <- machine.
  EXPECT_EQ(t.distance(0, 1), 3);
  EXPECT_EQ(t.distance(0, 4), 6);
  EXPECT_EQ(t.max_distance(), 6);
  const node& numa = ancestor_of_kind(t, 5, node_kind::numa);
  EXPECT_EQ(numa.first_leaf, 4);
  EXPECT_EQ(numa.last_leaf, 8);
  EXPECT_EQ(t.nodes()[static_cast<std::size_t>(numa.parent)].kind, node_kind::package);
  EXPECT_EQ(ancestor_of_kind(t, 0, node_kind::cache, 3).cache_bytes, 16U << 20);

  // Sub-NUMA clustering: one NUMA node per L3, two per package.
  const topology snc = topology::synthetic("pack:2 l3:2 [numa] core:2 pu:1");
  expect_well_formed(snc);
  EXPECT_EQ(snc.num_numa(), 4);
  EXPECT_EQ(snc.numa_of(1), 0);
  EXPECT_EQ(snc.numa_of(2), 1);
  EXPECT_EQ(snc.numa_of(7), 3);
  EXPECT_EQ(snc.nodes()[static_cast<std::size_t>(ancestor_of_kind(snc, 2, node_kind::numa).parent)]
                .cache_level,
            3);

  // One NUMA node in a single package is still a level (it is not the whole-machine filler).
  const topology one = topology::synthetic("pack:1 [numa] core:2 pu:1");
  EXPECT_EQ(one.num_numa(), 1);
  EXPECT_EQ(ancestor_of_kind(one, 1, node_kind::numa).last_leaf, 2);
}

TEST(TopologySynthetic, SixteenLeavesWithSmt) {
  const topology t = topology::synthetic("pack:2 l3:1(size=16MB) l2:4(size=1MB) core:1 pu:2");
  expect_well_formed(t);
  EXPECT_EQ(t.num_leaves(), 16);
  EXPECT_EQ(t.distance(0, 1), 1);  // hyperthreads of one core
  EXPECT_EQ(t.distance(0, 2), 3);  // next core: they share the L3
  EXPECT_EQ(t.distance(7, 8), 5);  // across packages
  EXPECT_EQ(t.max_distance(), 5);
  EXPECT_EQ(t.numa_of(7), 0);
  EXPECT_EQ(t.numa_of(8), 1);
  EXPECT_EQ(ancestor_of_kind(t, 9, node_kind::core).first_leaf, 8);
}

TEST(TopologySynthetic, CascadeLakeFiftySixLeaves) {
  const topology t = topology::synthetic(kCascadeLake);
  expect_well_formed(t);
  EXPECT_EQ(t.num_leaves(), 56);
  EXPECT_EQ(t.distance(0, 1), 4);  // pu <- core <- l1 <- l2 <- l3
  EXPECT_EQ(t.distance(0, 27), 4);
  EXPECT_EQ(t.distance(27, 28), 6);
  EXPECT_EQ(t.distance(0, 55), 6);
  EXPECT_EQ(t.max_distance(), 6);
  EXPECT_EQ(t.num_numa(), 2);
  EXPECT_EQ(t.numa_of(27), 0);
  EXPECT_EQ(t.numa_of(28), 1);
  const node& l1 = ancestor_of_kind(t, 30, node_kind::cache, 1);
  EXPECT_EQ(l1.cache_bytes, 32U << 10);
  const node& l3 = ancestor_of_kind(t, 30, node_kind::cache, 3);
  EXPECT_EQ(l3.cache_bytes, 38U << 20);
  EXPECT_EQ(l3.first_leaf, 28);
  EXPECT_EQ(l3.last_leaf, 56);
  EXPECT_EQ(t.describe(), "pack:2 l3:2(38MB) l2:56(1MB) l1:56(32KB) core:56 pu:56");
}

TEST(TopologySynthetic, MaxDistanceOfUnevenTrees) {
  // Packages of one core each: the deepest pair only shares the root.
  const topology t = topology::synthetic("pack:2 core:1 pu:1");
  EXPECT_EQ(t.max_distance(), 3);
  EXPECT_EQ(t.distance(0, 1), 3);
  const topology single = topology::synthetic("pack:1 core:1 pu:1");
  EXPECT_EQ(single.num_leaves(), 1);
  EXPECT_EQ(single.max_distance(), 0);
}

TEST(TopologySynthetic, LevelNamesAreTheKindsWhereLeavesMeet) {
  using names = std::vector<std::string>;
  const auto expect_names = [](const char* description, const names& expected) {
    SCOPED_TRACE(description);
    const topology t = topology::synthetic(description);
    EXPECT_EQ(t.level_names(), expected);
    EXPECT_EQ(t.level_names().size(), static_cast<std::size_t>(t.max_distance()) + 1);
  };
  expect_names(kEight, {"pu", "core", "L2", "L3", "package", "machine"});
  expect_names("pack:2 l3:1(size=16MB) l2:4(size=1MB) core:1 pu:2",
               {"pu", "core", "L2", "L3", "package", "machine"});
  expect_names("pack:2 [numa(memory=1GB)] l3:1(size=16MB) l2:4(size=1MB) core:1 pu:1",
               {"pu", "core", "L2", "L3", "numa", "package", "machine"});
  expect_names(kCascadeLake, {"pu", "core", "L1", "L2", "L3", "package", "machine"});
  expect_names("core:4 pu:1", {"pu", "core", "machine"});
  expect_names("pack:1 core:1 pu:1", {"pu"});
}

// Builds a tree by hand (synthetic descriptions are always uniform): node_kind, cache level and
// parent for each node, in preorder.
std::vector<node> hand_built(const std::vector<std::tuple<node_kind, int, int>>& spec) {
  std::vector<node> nodes;
  for (const auto& [kind, cache_level, parent] : spec) {
    node n;
    n.kind = kind;
    n.cache_level = cache_level;
    n.parent = parent;
    n.depth = parent < 0 ? 0 : nodes[static_cast<std::size_t>(parent)].depth + 1;
    if (parent >= 0) {
      nodes[static_cast<std::size_t>(parent)].children.push_back(static_cast<int>(nodes.size()));
    }
    nodes.push_back(n);
  }
  return nodes;
}

TEST(TopologyLevelNames, UnevenTreesJoinTheKindsOfALevel) {
  using k = node_kind;
  // Package 1 has an L3 over its two cores, package 2 none: its PUs are one level shallower.
  const std::vector<node> nodes = hand_built({
      {k::machine, 0, -1},  // 0
      {k::package, 0, 0},   // 1
      {k::cache, 3, 1},     // 2
      {k::core, 0, 2},      // 3
      {k::pu, 0, 3},        // 4: depth 4
      {k::core, 0, 2},      // 5
      {k::pu, 0, 5},        // 6
      {k::package, 0, 0},   // 7
      {k::core, 0, 7},      // 8
      {k::pu, 0, 8},        // 9: depth 3
      {k::core, 0, 7},      // 10
      {k::pu, 0, 10},       // 11
  });
  // 4 and 6 meet at the L3 two levels above them, 9 and 11 at their package two levels above
  // them; across packages leaves meet at the machine, 4 levels above the deeper one. Nobody meets
  // at distance 1 or 3: named after the nodes that many levels above the leaves (cores; package 1
  // above 4 and 6, the machine above 9 and 11).
  EXPECT_EQ(name_levels(nodes),
            (std::vector<std::string>{"pu", "core", "L3/package", "machine/package", "machine"}));
}

TEST(TopologySynthetic, Describe) {
  EXPECT_EQ(topology::synthetic(kEight).describe(), "pack:2 l3:2(32MB) l2:8(1MB) core:8 pu:8");
  EXPECT_EQ(topology::synthetic("pack:2 [numa] l3:1(size=16MB) core:2 pu:1").describe(),
            "pack:2 numa:2 l3:2(16MB) core:4 pu:4");
}

TEST(TopologySynthetic, BadDescriptionsNameTheVariable) {
  for (const char* bad :
       {"garbage", "", "   ", "pack:2 core:2", "pack:0 pu:1", "pack:2 l3:1(size=abc) pu:1",
        "pack:1024 core:1024 pu:1024", "pack:2 l3:1(size=1.5MB) pu:1"}) {
    try {
      (void)topology::synthetic(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const locus::config_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("LOCUS_TOPOLOGY"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string("\"") + bad + "\""), std::string::npos) << what;
      EXPECT_NE(what.find("pu:1"), std::string::npos) << "an example: " << what;
    }
  }
  try {
    (void)topology::synthetic("nonsense", "options::topology");
    ADD_FAILURE() << "accepted nonsense";
  } catch (const locus::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("options::topology"), std::string::npos) << e.what();
  }
}

TEST(TopologySynthetic, LeafIndicesAreChecked) {
  const topology t = topology::synthetic(kEight);
  EXPECT_THROW((void)t.leaf_node(8), std::out_of_range);
  EXPECT_THROW((void)t.leaf_node(-1), std::out_of_range);
  EXPECT_THROW((void)t.distance(0, 8), std::out_of_range);
  EXPECT_THROW((void)t.numa_of(9), std::out_of_range);
  EXPECT_THROW((void)t.ancestors(-2), std::out_of_range);
}

TEST(TopologySynthetic, MovableAndNeverPinned) {
  topology a = topology::synthetic(kEight);
  topology b = std::move(a);
  EXPECT_EQ(b.num_leaves(), 8);
  topology c = topology::synthetic(kCascadeLake);
  c = std::move(b);
  EXPECT_EQ(c.num_leaves(), 8);
  EXPECT_FALSE(c.can_pin(1));
  EXPECT_TRUE(c.pin_current_thread(3));  // a no-op
}

TEST(TopologyDetect, RealMachine) {
  const topology t = topology::detect();
  expect_well_formed(t);
  EXPECT_FALSE(t.is_synthetic());
  ASSERT_GE(t.num_leaves(), 1);
  EXPECT_GE(t.default_workers(), 1);
  EXPECT_LE(t.default_workers(), t.num_leaves());
  // The leaves are exactly the CPUs this process may run on.
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  EXPECT_EQ(t.num_leaves(), CPU_COUNT(&mask));
  for (int i = 0; i < t.num_leaves(); ++i) {
    ASSERT_GE(leaf(t, i).os_index, 0);
    EXPECT_TRUE(CPU_ISSET(leaf(t, i).os_index, &mask));
  }
  EXPECT_TRUE(t.can_pin(t.num_leaves()));
  EXPECT_FALSE(t.can_pin(t.num_leaves() + 1));
  const auto& d = t.numa_distances();
  if (!d.empty()) {
    ASSERT_EQ(d.size(), static_cast<std::size_t>(t.num_numa() * t.num_numa()));
    for (int i = 0; i < t.num_numa(); ++i) {
      for (int j = 0; j < t.num_numa(); ++j) {
        EXPECT_LE(d[static_cast<std::size_t>(i * t.num_numa() + i)],
                  d[static_cast<std::size_t>(i * t.num_numa() + j)]);
      }
    }
  }
  EXPECT_NE(t.describe().find("pu:" + std::to_string(t.num_leaves())), std::string::npos)
      << t.describe();
  const double quota = locus::topo::cgroup_cpu_quota();
  EXPECT_EQ(t.default_workers(), locus::topo::cap_workers(t.num_leaves(), quota));
  std::printf("[ info ] this machine: %s; cgroup CPU quota %g; default workers %d\n",
              t.describe().c_str(), quota, t.default_workers());
}

// Where the kernel shows no caches in sysfs (some virtual machines), hwloc finds them only with
// CPUID on each PU, which its default load (allowed to bind the loading thread) does.
TEST(TopologyDetect, HasTheCachesHwlocFinds) {
  int hwloc_caches = 0;
  std::thread probe([&hwloc_caches] {
    hwloc_topology_t hw = nullptr;
    if (hwloc_topology_init(&hw) != 0) return;
    hwloc_topology_set_flags(hw, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
    if (hwloc_topology_load(hw) == 0) {
      for (const hwloc_obj_type_t type :
           {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE}) {
        hwloc_caches += hwloc_get_nbobjs_by_type(hw, type);
      }
    }
    hwloc_topology_destroy(hw);
  });
  probe.join();
  if (hwloc_caches == 0) GTEST_SKIP() << "hwloc finds no cache on this machine";
  const topology t = topology::detect();
  int caches = 0;
  for (const node& n : t.nodes()) caches += n.kind == node_kind::cache && n.cache_bytes > 0;
  EXPECT_GT(caches, 0) << t.describe();
}

TEST(TopologyDetectDeathTest, HonoursTheAffinityMask) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  if (CPU_COUNT(&mask) < 2) GTEST_SKIP() << "needs two allowed CPUs";
  int last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) last = cpu;
  }
  // In a child process: restrict ourselves to one CPU, then detect.
  EXPECT_EXIT(
      {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(last, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) std::exit(2);
        const topology t = topology::detect();
        if (t.num_leaves() != 1) std::exit(3);
        if (t.nodes()[static_cast<std::size_t>(t.leaf_node(0))].os_index != last) std::exit(4);
        if (t.default_workers() != 1) std::exit(5);
        // Detection never moves the calling thread, also where finding the caches binds a
        // thread to each PU in turn.
        cpu_set_t after;
        CPU_ZERO(&after);
        if (sched_getaffinity(0, sizeof after, &after) != 0 || !CPU_EQUAL(&after, &one)) {
          std::exit(6);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(TopologyDetect, PinsAThreadToLeafZero) {
  const topology t = topology::detect();
  const int cpu = leaf(t, 0).os_index;
  bool pinned = false;
  int allowed = 0;
  bool only_that_cpu = false;
  std::thread worker([&] {
    pinned = t.pin_current_thread(0);
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
      allowed = CPU_COUNT(&mask);
      only_that_cpu = CPU_ISSET(cpu, &mask);
    }
  });
  worker.join();
  EXPECT_TRUE(pinned);
  EXPECT_EQ(allowed, 1);
  EXPECT_TRUE(only_that_cpu);
}

// --- cgroup quotas on fake file-system trees ------------------------------------------------

namespace {

class FakeRoot {
 public:
  FakeRoot() {
    dir_ = fs::temp_directory_path() /
           ("locus_topo_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~FakeRoot() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    const fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string root() const { return dir_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

}  // namespace

TEST(TopologyCgroup, V2QuotaOfOurCgroup) {
  FakeRoot r;
  r.write("proc/self/cgroup", "0::/user.slice/job\n");
  r.write("sys/fs/cgroup/user.slice/job/cpu.max", "150000 100000\n");
  EXPECT_DOUBLE_EQ(locus::topo::cgroup_cpu_quota(r.root()), 1.5);
}

TEST(TopologyCgroup, V2MaxMeansNone) {
  FakeRoot r;
  r.write("proc/self/cgroup", "0::/job\n");
  r.write("sys/fs/cgroup/job/cpu.max", "max 100000\n");
  EXPECT_LT(locus::topo::cgroup_cpu_quota(r.root()), 0);
}

TEST(TopologyCgroup, V2SmallestQuotaUpTheChainWins) {
  FakeRoot r;
  r.write("proc/self/cgroup", "0::/a/b/c\n");
  r.write("sys/fs/cgroup/a/b/c/cpu.max", "max 100000\n");
  r.write("sys/fs/cgroup/a/b/cpu.max", "400000 100000\n");
  r.write("sys/fs/cgroup/a/cpu.max", "50000 100000\n");
  EXPECT_DOUBLE_EQ(locus::topo::cgroup_cpu_quota(r.root()), 0.5);
}

TEST(TopologyCgroup, V2FallsBackToTheMountRoot) {
  // Inside a container the host path of /proc/self/cgroup does not exist under the mount.
  FakeRoot r;
  r.write("proc/self/cgroup", "0::/system.slice/docker-abc.scope\n");
  r.write("sys/fs/cgroup/cpu.max", "200000 100000\n");
  EXPECT_DOUBLE_EQ(locus::topo::cgroup_cpu_quota(r.root()), 2.0);
}

TEST(TopologyCgroup, V1CfsQuota) {
  FakeRoot r;
  r.write("proc/self/cgroup", "5:memory:/x\n4:cpu,cpuacct:/x\n0::/\n");
  r.write("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_quota_us", "250000\n");
  r.write("sys/fs/cgroup/cpu,cpuacct/x/cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(locus::topo::cgroup_cpu_quota(r.root()), 2.5);

  FakeRoot alone;
  alone.write("proc/self/cgroup", "3:cpu:/\n");
  alone.write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "50000\n");
  alone.write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_DOUBLE_EQ(locus::topo::cgroup_cpu_quota(alone.root()), 0.5);
}

TEST(TopologyCgroup, V1UnlimitedAndMissing) {
  FakeRoot r;
  r.write("proc/self/cgroup", "3:cpu:/\n");
  r.write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  r.write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_LT(locus::topo::cgroup_cpu_quota(r.root()), 0);

  FakeRoot empty;
  empty.write("proc/self/cgroup", "0::/\n");
  EXPECT_LT(locus::topo::cgroup_cpu_quota(empty.root()), 0);
}

TEST(TopologyCgroup, QuotaCapsWorkers) {
  using locus::topo::cap_workers;
  EXPECT_EQ(cap_workers(8, 1.5), 2);
  EXPECT_EQ(cap_workers(2, 1.5), 2);
  EXPECT_EQ(cap_workers(8, 0.2), 1);
  EXPECT_EQ(cap_workers(8, 2.0), 2);
  EXPECT_EQ(cap_workers(8, 2.5), 3);
  EXPECT_EQ(cap_workers(4, 16.0), 4);
  EXPECT_EQ(cap_workers(8, -1.0), 8);
  EXPECT_EQ(cap_workers(0, -1.0), 1);
  EXPECT_EQ(cap_workers(3, 1e300), 3);
}
