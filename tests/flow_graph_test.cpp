// Flow graphs of assemblies (locus/flow_graph.hpp): edges respected, placement, failures.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "locus/locus.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;

constexpr const char* kSixteen = "pack:2 l3:2(size=4MB) l2:2(size=512KB) core:2 pu:1";

// When each node started and ended, on one clock of events, and on which workers it ran.
struct timeline {
  explicit timeline(std::size_t nodes)
      : started(nodes), ended(nodes), lowest(nodes), highest(nodes) {
    for (auto& x : lowest) x = 1 << 20;
    for (auto& x : highest) x = -1;
  }
  std::atomic<int> clock{0};
  std::vector<std::atomic<int>> started, ended, lowest, highest;
};

class timed final : public locus::assembly {
 public:
  timed(timeline& t, std::size_t node, int width, locus::assembly_entry entry)
      : assembly(width, entry), t_(t), node_(node) {}
  void execute(int) override {
    int expected = 0;
    t_.started[node_].compare_exchange_strong(expected, t_.clock.fetch_add(1) + 1);
    const int w = locus::this_worker();
    for (int lo = t_.lowest[node_].load();
         w < lo && !t_.lowest[node_].compare_exchange_weak(lo, w);) {
    }
    for (int hi = t_.highest[node_].load();
         w > hi && !t_.highest[node_].compare_exchange_weak(hi, w);) {
    }
  }
  void cleanup() override { t_.ended[node_] = t_.clock.fetch_add(1) + 1; }

 private:
  timeline& t_;
  std::size_t node_;
};

// A random DAG of 300 assemblies of widths 1 to 8 under tao and ws, with and without
// stealing: no node starts before every predecessor has ended, and every node runs.
TEST(FlowGraph, NoNodeStartsBeforeItsPredecessorsEnd) {
  for (const char* sched : {"tao", "ws"}) {
    SCOPED_TRACE(sched);
    locus::runtime rt{locus::options{.sched = sched, .workers = 16, .topology = kSixteen}};
    constexpr std::size_t n = 300;
    timeline t(n);
    locus::flow_graph g;
    std::mt19937 rng(11);
    for (std::size_t i = 0; i < n; ++i) {
      const int width = 1 << (rng() % 4);
      const auto entry =
          rng() % 2 ? locus::assembly_entry::synchronous : locus::assembly_entry::asynchronous;
      ASSERT_EQ(g.add(std::make_unique<timed>(t, i, width, entry)), i);
    }
    std::vector<std::pair<std::size_t, std::size_t>> edges;
    for (std::size_t to = 1; to < n; ++to) {
      for (unsigned e = rng() % 4; e > 0; --e) {
        const std::size_t from = rng() % to;
        g.make_edge(from, to);
        edges.emplace_back(from, to);
      }
    }
    rt.exec([&] { g.run(); });
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_GT(t.started[i].load(), 0) << "node " << i << " never ran";
      EXPECT_GT(t.ended[i].load(), t.started[i].load()) << "node " << i;
    }
    for (const auto& [from, to] : edges) {
      EXPECT_LT(t.ended[from].load(), t.started[to].load()) << from << " -> " << to;
    }
  }
}

// Initial placement: a node placed on a worker runs on the workers around it.
TEST(FlowGraph, PlacedNodesRunWhereTheyArePlaced) {
  locus::runtime rt{locus::options{.sched = "tao", .workers = 16, .topology = kSixteen}};
  timeline t(4);
  locus::flow_graph g;
  for (std::size_t i = 0; i < 4; ++i) {
    auto a = std::make_unique<timed>(t, i, 4, locus::assembly_entry::asynchronous);
    a->place_on(static_cast<int>(4 * i + 1));
    g.add(std::move(a));
  }
  g.make_edge(0, 3);
  rt.exec([&] { g.run(); });
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(t.lowest[i].load(), static_cast<int>(4 * i)) << i;
    EXPECT_EQ(t.highest[i].load(), static_cast<int>(4 * i + 3)) << i;
  }
}

// Tables whose workers meet at barriers between steps, entered asynchronously, many ready at
// once: the flow graph's wrapper must say that its workers wait for each other, or two workers
// each start one table and wait at its barrier for the other forever. A watchdog turns that into
// a failure.
TEST(FlowGraph, TablesWithBarriersNeverDeadlock) {
  locus::runtime rt{locus::options{.sched = "tao", .workers = 4, .topology = kSixteen}};
  std::optional<locus_test::watchdog> guard;
  guard.emplace("FlowGraph.TablesWithBarriersNeverDeadlock", 120s);
  std::atomic<int> cells{0};
  locus::flow_graph g;
  std::vector<locus::flow_graph::node> first;
  for (int i = 0; i < 64; ++i) {
    auto table = std::make_unique<locus::table_assembly>(2, 3);
    for (int step = 0; step < 3; ++step) {
      for (int index = 0; index < 2; ++index) table->set(step, index, [&cells] { ++cells; });
    }
    const auto n = g.add(std::move(table));
    if (i < 32) {
      first.push_back(n);
    } else {
      g.make_edge(first[static_cast<std::size_t>(i - 32)], n);
    }
  }
  rt.exec([&] { g.run(); });
  guard.reset();
  EXPECT_EQ(cells.load(), 64 * 6);
}

// A node that throws: run() rethrows, the nodes after it (directly or not) do not run, the
// others do; a graph runs once; cycles and unknown nodes are refused.
TEST(FlowGraph, AFailedNodeStopsWhatDependsOnIt) {
  locus::runtime rt{locus::options{.sched = "tao", .workers = 4, .topology = kSixteen}};
  struct step final : locus::assembly {
    step(std::vector<std::atomic<int>>& r, std::size_t i, bool fails)
        : assembly(2), ran(r), index(i), fail(fails) {}
    void execute(int member) override {
      ran[index] = 1;
      if (fail && member == 0) throw std::runtime_error("node " + std::to_string(index));
    }
    std::vector<std::atomic<int>>& ran;
    std::size_t index;
    bool fail;
  };
  std::vector<std::atomic<int>> ran(5);
  locus::flow_graph g;
  for (std::size_t i = 0; i < 5; ++i) g.add(std::make_unique<step>(ran, i, i == 1));
  g.make_edge(0, 1);
  g.make_edge(1, 2);
  g.make_edge(2, 3);
  g.make_edge(0, 4);
  EXPECT_THROW(g.make_edge(3, 0), std::invalid_argument);
  EXPECT_THROW(g.make_edge(2, 2), std::invalid_argument);
  EXPECT_THROW(g.make_edge(0, 5), std::out_of_range);
  std::string caught;
  rt.exec([&] {
    try {
      g.run();
    } catch (const std::runtime_error& e) {
      caught = e.what();
    }
  });
  EXPECT_EQ(caught, "node 1");
  EXPECT_EQ(ran[0].load(), 1);
  EXPECT_EQ(ran[1].load(), 1);
  EXPECT_EQ(ran[2].load(), 0);
  EXPECT_EQ(ran[3].load(), 0);
  EXPECT_EQ(ran[4].load(), 1);
  EXPECT_THROW(g.run(), std::logic_error);
  EXPECT_THROW(g.add(std::make_unique<step>(ran, 0, false)), std::logic_error);
}

}  // namespace
