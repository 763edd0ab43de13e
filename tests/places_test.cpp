// Places (seed 001 §III-A): the NUMA nodes of the topology (packages when there is one NUMA
// node), workers spread evenly over them, place hints on spawns, parallel_for and
// parallel_invoke, and hints naming a place the runtime does not have rejected.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "locus/locus.hpp"
#include "topology/topology.hpp"

namespace {

using locus::topo::topology;

constexpr const char* two_numa = "pack:2 [numa] l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1";

TEST(Places, WorkersSpreadEvenlyOverPlacesKeepingTreeOrderInEach) {
  const topology whole = topology::synthetic(two_numa);
  ASSERT_EQ(whole.num_leaves(), 8);
  ASSERT_EQ(whole.num_numa(), 2);
  const topology four = topology::spread_over_places(topology::synthetic(two_numa), 4);
  ASSERT_EQ(four.num_leaves(), 4);
  EXPECT_EQ(four.num_numa(), 2);
  for (int leaf = 0; leaf < 4; ++leaf) EXPECT_EQ(four.numa_of(leaf), leaf / 2) << leaf;
  // Caches keep their sizes; each L3 now holds two of the workers.
  int l3s = 0;
  for (const auto& n : four.nodes()) {
    if (n.kind == locus::topo::node_kind::cache && n.cache_level == 3) {
      ++l3s;
      EXPECT_EQ(n.cache_bytes, std::size_t{8} << 20);
      EXPECT_EQ(n.last_leaf - n.first_leaf, 2);
    }
  }
  EXPECT_EQ(l3s, 2);
  EXPECT_EQ(four.distance(0, 1), whole.distance(0, 1));  // neighbours in number stay neighbours
  EXPECT_EQ(four.distance(1, 2), whole.distance(0, 4));

  const topology three = topology::spread_over_places(topology::synthetic(two_numa), 3);
  ASSERT_EQ(three.num_leaves(), 3);
  EXPECT_EQ(three.numa_of(1), 0);  // the first place takes the one left over
  EXPECT_EQ(three.numa_of(2), 1);

  EXPECT_EQ(topology::spread_over_places(topology::synthetic(two_numa), 8).num_leaves(), 8);
  const topology one_place = topology::spread_over_places(
      topology::synthetic("pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1"), 2);
  EXPECT_EQ(one_place.num_leaves(), 4);  // nothing to spread over: the workers take the first
}

TEST(Places, RuntimePlacesAreNumaNodesElsePackagesAndWorkersKnowTheirs) {
  {
    locus::runtime rt{locus::options{.workers = 4, .topology = two_numa}};
    EXPECT_EQ(rt.num_places(), 2);
    std::vector<int> expected{0, 0, 1, 1};
    for (int w = 0; w < 4; ++w)
      EXPECT_EQ(rt.place_of_worker(w), expected[static_cast<std::size_t>(w)]);
    EXPECT_THROW(rt.place_of_worker(4), std::out_of_range);
    // Every task sees its worker's place.
    std::atomic<int> mismatches{0}, seen{0};
    rt.exec([&] {
      locus::parallel_for(0, 64, [&](int) {
        ++seen;
        if (locus::current_place() != rt.place_of_worker(locus::this_worker())) ++mismatches;
      });
      EXPECT_EQ(locus::num_places(), 2);
    });
    EXPECT_EQ(seen.load(), 64);
    EXPECT_EQ(mismatches.load(), 0);
  }
  locus::runtime packages{
      locus::options{.workers = 8, .topology = "pack:2 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1"}};
  EXPECT_EQ(packages.num_places(), 2);
  EXPECT_EQ(packages.place_of_worker(5), 1);
  locus::runtime flat{locus::options{.workers = 2, .topology = "pack:1 l2:2(size=1MB) pu:1"}};
  EXPECT_EQ(flat.num_places(), 1);
  EXPECT_EQ(locus::current_place(), -1);
}

TEST(Places, HintsNamingAPlaceTheRuntimeLacksAreRejected) {
  for (const char* sched : {"ws", "adws", "ml-ws"}) {
    locus::runtime rt{locus::options{.sched = sched, .workers = 4, .topology = two_numa}};
    rt.exec([&] {
      locus::task_group tg;
      try {
        tg.run([] {}, locus::place{2});
        ADD_FAILURE() << sched << ": a spawn at place 2 of 2 was accepted";
      } catch (const std::out_of_range& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("place 2"), std::string::npos) << what;
        EXPECT_NE(what.find("2 places"), std::string::npos) << what;
        EXPECT_NE(what.find("any_place"), std::string::npos) << what;
      }
      EXPECT_THROW(tg.run([] {}, locus::place{-5}, locus::parent_first), std::out_of_range);
      EXPECT_THROW(tg.run([] {}, locus::place{7}, locus::parent_first), std::out_of_range);
      tg.run([] {}, locus::place{1});
      tg.run([] {}, locus::any_place, locus::parent_first);
      tg.wait();
      EXPECT_THROW(locus::parallel_for(
                       0, 4, [](int) {}, locus::place{9}),
                   std::out_of_range);
    });
  }
}

TEST(Places, ParallelForAndParallelInvokeCarryTheirPlaces) {
  locus::runtime rt{locus::options{.workers = 4, .topology = two_numa}};
  std::atomic<int> wrong{0};
  int a = -9, b = -9, c = -9;
  rt.exec([&] {
    locus::parallel_for(
        0, 100,
        [&](int) {
          if (locus::this_task_place() != 1) ++wrong;
        },
        locus::place{1});
    locus::parallel_for(
        0, 10,
        [&](int lo, int hi) {
          if (hi - lo > 2 || locus::this_task_place() != -1) ++wrong;
        },
        locus::grain{2});
    locus::parallel_invoke(
        locus::on_place(locus::place{1}, [&] { a = locus::this_task_place(); }),
        [&] { b = locus::this_task_place(); },
        locus::on_place(locus::place{0}, [&] { c = locus::this_task_place(); }));
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, -1);
  EXPECT_EQ(c, 0);
}

}  // namespace
