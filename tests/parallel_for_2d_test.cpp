// The two-dimensional parallel_for: coverage, the quadrant decomposition and its order, grains,
// the halves a thief takes, and the hints its groups and children carry.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "locus/locus.hpp"
#include "sched/context.hpp"
#include "sched/policy.hpp"

namespace {

constexpr const char* synthetic16 = "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1";

using block = std::tuple<int, int, int, int>;  // row_begin, row_end, col_begin, col_end

// The decomposition written out serially: what heat2d's own recursion visits, in its order.
void serial_quadrants(int r0, int r1, int c0, int c1, int gr, int gc, std::vector<block>& out) {
  const bool rows = r1 - r0 > gr, cols = c1 - c0 > gc;
  if (!rows && !cols) {
    out.emplace_back(r0, r1, c0, c1);
    return;
  }
  const int rm = rows ? r0 + (r1 - r0) / 2 : r1;
  const int cm = cols ? c0 + (c1 - c0) / 2 : c1;
  serial_quadrants(r0, rm, c0, cm, gr, gc, out);
  if (cols) serial_quadrants(r0, rm, cm, c1, gr, gc, out);
  if (rows) serial_quadrants(rm, r1, c0, cm, gr, gc, out);
  if (rows && cols) serial_quadrants(rm, r1, cm, c1, gr, gc, out);
}

TEST(ParallelFor2d, OneWorkerVisitsTheQuadrantsInTheSerialOrder) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 1}};
  for (auto [r0, r1, c0, c1, gr, gc] :
       {std::tuple{0, 16, 0, 16, 4, 4}, std::tuple{1, 359, 1, 359, 64, 64},
        std::tuple{3, 10, 0, 100, 2, 7}, std::tuple{0, 1, 0, 33, 1, 4},
        std::tuple{0, 50, 5, 6, 8, 8}}) {
    std::vector<block> expected;
    serial_quadrants(r0, r1, c0, c1, gr, gc, expected);
    std::vector<block> got;
    rt.exec([&] {
      locus::parallel_for(
          locus::range2d{r0, r1, c0, c1},
          [&](const locus::range2d<int>& b) {
            got.emplace_back(b.row_begin, b.row_end, b.col_begin, b.col_end);
          },
          locus::grain2d{static_cast<std::size_t>(gr), static_cast<std::size_t>(gc)});
    });
    EXPECT_EQ(got, expected) << r0 << ".." << r1 << " x " << c0 << ".." << c1;
  }
}

// Every cell exactly once, every block within the grain, under every scheduler and with stealing.
TEST(ParallelFor2d, EveryCellOnceOnEveryScheduler) {
  for (const char* sched : {"ws", "adws", "ml-adws", "ml-ws", "numa-ws", "hws", "cats", "tao"}) {
    for (int workers : {2, 16}) {
      SCOPED_TRACE(std::string(sched) + " x" + std::to_string(workers));
      locus::options o{.sched = sched, .workers = workers};
      if (workers > 2) o.topology = synthetic16;
      locus::runtime rt{o};
      constexpr int rows = 97, cols = 131;
      std::vector<std::atomic<int>> seen(rows * cols);
      std::atomic<int> oversized{0};
      rt.exec([&] {
        locus::parallel_for(
            locus::range2d{0, rows, 0, cols},
            [&](const locus::range2d<int>& b) {
              if (b.rows() > 8 || b.cols() > 5) oversized.fetch_add(1);
              for (int i = b.row_begin; i < b.row_end; ++i) {
                for (int j = b.col_begin; j < b.col_end; ++j) seen[i * cols + j].fetch_add(1);
              }
            },
            locus::grain2d{8, 5}, locus::item_size{16});
        // The element form, with one grain for both dimensions.
        locus::parallel_for(
            locus::range2d{0, rows, 0, cols},
            [&](int i, int j) { seen[i * cols + j].fetch_add(10); }, locus::grain{16});
      });
      EXPECT_EQ(oversized.load(), 0);
      for (int k = 0; k < rows * cols; ++k) ASSERT_EQ(seen[k].load(), 11) << "cell " << k;
    }
  }
}

// Under child-first stealing the thief of the loop's first continuation takes the whole bottom
// half and runs it in the serial order. The first block holds its worker until the thief has run
// two blocks: they are bottom-left, then bottom-right. With one four-way group per block, ml-ws's
// thief ran top-right and then bottom-left (with the owner free, it would have taken bottom-left
// and the two parts met down a column), and ws's and numa-ws's queued the other quadrants and ran
// bottom-right first, leaving top-right for another steal.
TEST(ParallelFor2d, TheFirstThiefTakesTheBottomHalf) {
  for (const char* sched : {"ws", "ml-ws", "numa-ws"}) {
    SCOPED_TRACE(sched);
    locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
    std::mutex lock;
    std::vector<block> thief_blocks;
    std::atomic<int> thief_ran{0};
    bool thief_arrived = true;
    rt.exec([&] {
      const int owner = locus::this_worker();
      locus::parallel_for(
          locus::range2d{0, 16, 0, 16},
          [&](const locus::range2d<int>& b) {
            if (b.row_begin == 0 && b.col_begin == 0) {
              const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
              while (thief_ran.load() < 2) {
                if (std::chrono::steady_clock::now() > give_up) {
                  thief_arrived = false;
                  return;
                }
                std::this_thread::yield();
              }
              return;
            }
            if (locus::this_worker() == owner) return;
            const std::lock_guard hold(lock);
            thief_blocks.emplace_back(b.row_begin, b.row_end, b.col_begin, b.col_end);
            thief_ran.fetch_add(1);
          },
          locus::grain2d{8, 8});
    });
    ASSERT_TRUE(thief_arrived) << "no other worker ran two blocks within 10 s";
    ASSERT_GE(thief_blocks.size(), 2u);
    EXPECT_EQ(thief_blocks[0], (block{8, 16, 0, 8}));
    EXPECT_EQ(thief_blocks[1], (block{8, 16, 8, 16}));
  }
}

TEST(ParallelFor2d, EmptyRangesCallNothing) {
  int calls = 0;
  locus::root_exec([&] {
    locus::parallel_for(locus::range2d{5, 5, 0, 10}, [&](int, int) { ++calls; });
    locus::parallel_for(locus::range2d{0, 10, 7, 3}, [&](const locus::range2d<int>&) { ++calls; });
  });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ((locus::range2d{0, 10, 7, 3}.size()), 0u);
  EXPECT_EQ((locus::range2d{2, 5, 1, 5}.size()), 12u);
}

// Records the hints of every group and child: the loop's groups carry their blocks' iterations as
// work hints and iterations x item_size as size hints, its children their own iterations.
struct recorded_hints {
  std::mutex lock;
  std::vector<std::pair<double, std::size_t>> groups;  // work_hint, size bytes
  std::vector<double> children;
};
recorded_hints hints_seen;

class hint_recorder final : public locus::detail::policy_base<hint_recorder> {
 public:
  locus::detail::work_item* find_work(locus::detail::context&) override { return nullptr; }
  void group_begin(locus::detail::context&, locus::detail::group_state& g) override {
    const std::lock_guard hold(hints_seen.lock);
    hints_seen.groups.emplace_back(g.work_hint, g.size_bytes);
  }
  locus::detail::spawn_decision on_spawn(locus::detail::context&,
                                         locus::detail::spawn_request& spawn) override {
    const std::lock_guard hold(hints_seen.lock);
    hints_seen.children.push_back(spawn.hints.work);
    return spawn.queued ? locus::detail::spawn_decision::parent_first
                        : locus::detail::spawn_decision::child_first;
  }
};

const bool hint_recorder_registered = [] {
  locus::detail::register_policy({"test-hint-recorder", "test: records group and spawn hints",
                                  []() -> std::unique_ptr<locus::detail::policy> {
                                    return std::make_unique<hint_recorder>();
                                  }});
  return true;
}();

TEST(ParallelFor2d, GroupsAndChildrenCarryAreaAndSizeHints) {
  ASSERT_TRUE(hint_recorder_registered);
  hints_seen.groups.clear();
  hints_seen.children.clear();
  locus::runtime rt{locus::options{.sched = "test-hint-recorder", .workers = 1}};
  rt.exec([] {
    // 8 x 8 cut at 4 x 4: the rows halved (the top half spawned), then each half's columns.
    locus::parallel_for(
        locus::range2d{0, 8, 0, 8}, [](int, int) {}, locus::grain2d{4, 4}, locus::item_size{16});
  });
  ASSERT_EQ(hints_seen.groups.size(), 3u);
  EXPECT_EQ(hints_seen.groups[0], (std::pair<double, std::size_t>{64.0, 64u * 16u}));
  EXPECT_EQ(hints_seen.groups[1], (std::pair<double, std::size_t>{32.0, 32u * 16u}));
  EXPECT_EQ(hints_seen.groups[2], (std::pair<double, std::size_t>{32.0, 32u * 16u}));
  EXPECT_EQ(hints_seen.children, (std::vector<double>{32.0, 16.0, 16.0}));

  hints_seen.groups.clear();
  hints_seen.children.clear();
  rt.exec([] {
    // 6 x 3 with a 2 x 4 grain: halves of the rows only (3 + 3 rows), then 1 + 2 rows of each.
    locus::parallel_for(
        locus::range2d{0, 6, 0, 3}, [](const locus::range2d<int>&) {}, locus::grain2d{2, 4});
  });
  ASSERT_EQ(hints_seen.groups.size(), 3u);
  EXPECT_EQ(hints_seen.groups[0], (std::pair<double, std::size_t>{18.0, 0}));  // no item_size
  EXPECT_EQ(hints_seen.children, (std::vector<double>{9.0, 3.0, 3.0}));
}

}  // namespace
