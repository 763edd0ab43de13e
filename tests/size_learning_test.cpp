// Learned size hints (options::size_hints, LOCUS_SIZE_HINTS; sched/size_learning.hpp): the first
// iteration measures each task group's distinct footprint from what its tasks declare to the
// locality model, and later iterations give each group that size before the scheduler sees it.
// A test scheduler records the size every group begins with, by the group's work_hint, which the
// programs below use as a tag.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "locus/locality.hpp"
#include "locus/locus.hpp"
#include "sched/context.hpp"
#include "sched/policy.hpp"

namespace {

using locus::detail::context;
using locus::detail::group_state;
using locus::detail::policy_base;
using locus::detail::work_item;

constexpr const char* kTopology = "pack:2 l3:1(size=1MB) l2:2(size=64KB) core:1 pu:1";
constexpr std::size_t kLine = 64;

// Random stealing, and the size each group begins with, by its tag. With `moving`, a task goes
// on on the next worker after each of its joins.
class sizes_policy final : public policy_base<sizes_policy> {
 public:
  static inline std::mutex lock;
  static inline std::map<int, std::vector<std::size_t>> seen;  // tag -> sizes, in begin order
  static inline std::atomic<bool> moving{false};
  static inline std::atomic<int> moved{0};

  work_item* find_work(context& ctx) override {
    if (ctx.workers() < 2) return nullptr;
    return ctx.steal(ctx.random_victim(), 1).item;
  }
  void group_begin(context&, group_state& g) override {
    const std::lock_guard hold(lock);
    seen[static_cast<int>(g.work_hint)].push_back(g.size_bytes);
    g.policy_data = nullptr;
  }
  std::optional<int> group_end(context& ctx, group_state& g) override {
    if (!moving.load(std::memory_order_relaxed) || g.policy_data != nullptr) return std::nullopt;
    g.policy_data = &g;  // moved once
    moved.fetch_add(1, std::memory_order_relaxed);
    return (ctx.self() + 1) % ctx.workers();
  }
};

const bool registered = locus::detail::register_policy(
    {"test-sizes", "test: records the size each group begins with",
     [] { return std::unique_ptr<locus::detail::policy>(std::make_unique<sizes_policy>()); }});

struct alignas(64) line_t {
  std::byte bytes[kLine];
};

void touch(const std::vector<line_t>& buffer, std::size_t first, std::size_t lines) {
  locus::locality::touch_read(buffer.data() + first, lines * kLine);
}

// Two groups of the root (tags 1 and 2), four children each, every child with a group of its
// own (tags 10 + c and 20 + c). The first children of the root's two groups have one spawn path:
// their groups differ in size, so naming them by the path alone would learn one size for both.
struct two_level_program {
  std::vector<line_t> a = std::vector<line_t>(64), s = std::vector<line_t>(8),
                      b = std::vector<line_t>(256), c = std::vector<line_t>(128),
                      d = std::vector<line_t>(64), between = std::vector<line_t>(100);
  std::size_t outer_given = 0;  // the size_hint of tag 1, if any

  void operator()() const {
    locus::task_group outer{locus::work_hint{1}, locus::size_hint{outer_given}};
    for (std::size_t k = 0; k < 4; ++k) {
      outer.run([this, k] {
        touch(a, 16 * k, 16);
        touch(s, 0, 8);  // every child reads all of s
        locus::task_group inner{locus::work_hint{10.0 + static_cast<double>(k)}};
        // Two children overlapping by 4 lines: 20 distinct lines.
        for (std::size_t j = 0; j < 2; ++j)
          inner.run([this, k, j] { touch(b, 64 * k + 8 * j, 12); });
        inner.wait();
      });
    }
    outer.wait();
    touch(between, 0, 100);  // the root's own: in no group
    locus::task_group second{locus::work_hint{2}};
    for (std::size_t k = 0; k < 4; ++k) {
      second.run([this, k] {
        touch(c, 32 * k, 32);
        locus::task_group inner{locus::work_hint{20.0 + static_cast<double>(k)}};
        for (std::size_t j = 0; j < 3; ++j)
          inner.run([this, k, j] { touch(d, 16 * k + 5 * j, 5); });
        inner.wait();
      });
    }
    second.wait();
  }
};

// The distinct bytes of each tag's subtree.
std::map<int, std::size_t> expected_sizes() {
  std::map<int, std::size_t> e;
  for (int k = 0; k < 4; ++k) {
    e[10 + k] = 20 * kLine;
    e[20 + k] = 15 * kLine;
  }
  e[1] = (4 * (16 + 20) + 8) * kLine;
  e[2] = 4 * (32 + 15) * kLine;
  return e;
}

locus::options options_for(locus::size_hint_source source, const char* sched = "test-sizes") {
  return locus::options{.sched = sched, .workers = 4, .topology = kTopology, .size_hints = source};
}

void clear_seen() {
  const std::lock_guard hold(sizes_policy::lock);
  sizes_policy::seen.clear();
}

std::map<int, std::vector<std::size_t>> take_seen() {
  const std::lock_guard hold(sizes_policy::lock);
  return std::exchange(sizes_policy::seen, {});
}

double figure(const locus::stats& s, const std::string& name) {
  for (const auto& f : s.policy) {
    if (f.name == name) return f.value;
  }
  ADD_FAILURE() << "no figure " << name;
  return -1;
}

TEST(SizeLearning, LaterRootsGetEachGroupsDistinctFootprint) {
  ASSERT_TRUE(registered);
  clear_seen();
  locus::runtime rt{options_for(locus::size_hint_source::learn_all)};
  const two_level_program program;
  for (int root = 0; root < 3; ++root) rt.exec([&] { program(); });
  const auto seen = take_seen();
  const auto expected = expected_sizes();
  ASSERT_EQ(seen.size(), expected.size());
  for (const auto& [tag, size] : expected) {
    const auto& sizes = seen.at(tag);
    ASSERT_EQ(sizes.size(), 3u) << "tag " << tag;
    EXPECT_EQ(sizes[0], 0u) << "tag " << tag << ": the profiled root has no sizes";
    EXPECT_EQ(sizes[1], size) << "tag " << tag;
    EXPECT_EQ(sizes[2], size) << "tag " << tag;
  }
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "size_hint_profiles"), 1);
  EXPECT_EQ(figure(s, "size_hint_groups_profiled"), 10);
  EXPECT_EQ(figure(s, "size_hints_applied"), 20);
  EXPECT_EQ(figure(s, "size_hints_unknown"), 0);
  EXPECT_EQ(figure(s, "size_hint_sample_every"), 1);
}

TEST(SizeLearning, LearnKeepsTheProgramsHintsAndNoneDropsThem) {
  ASSERT_TRUE(registered);
  two_level_program program;
  program.outer_given = 12345;
  const auto expected = expected_sizes();
  {
    clear_seen();
    locus::runtime rt{options_for(locus::size_hint_source::learn)};
    for (int root = 0; root < 2; ++root) rt.exec([&] { program(); });
    const auto seen = take_seen();
    EXPECT_EQ(seen.at(1), (std::vector<std::size_t>{12345, 12345}));
    EXPECT_EQ(seen.at(2), (std::vector<std::size_t>{0, expected.at(2)}));
    EXPECT_EQ(seen.at(12), (std::vector<std::size_t>{0, expected.at(12)}));
  }
  {
    clear_seen();
    locus::runtime rt{options_for(locus::size_hint_source::none)};
    for (int root = 0; root < 2; ++root) rt.exec([&] { program(); });
    const auto seen = take_seen();
    for (const auto& [tag, sizes] : seen) {
      EXPECT_EQ(sizes, (std::vector<std::size_t>{0, 0})) << "tag " << tag;
    }
  }
  {
    clear_seen();
    locus::runtime rt{options_for(locus::size_hint_source::given)};
    rt.exec([&] { program(); });
    const auto seen = take_seen();
    EXPECT_EQ(seen.at(1), std::vector<std::size_t>{12345});
    EXPECT_EQ(seen.at(2), std::vector<std::size_t>{0});
  }
}

TEST(SizeLearning, NextIterationEndsTheProfiledIterationInsideOneRoot) {
  ASSERT_TRUE(registered);
  clear_seen();
  locus::runtime rt{options_for(locus::size_hint_source::learn_all)};
  const two_level_program program;
  rt.exec([&] {
    for (int step = 0; step < 3; ++step) {
      program();
      locus::next_iteration();
    }
  });
  const auto seen = take_seen();
  for (const auto& [tag, size] : expected_sizes()) {
    EXPECT_EQ(seen.at(tag), (std::vector<std::size_t>{0, size, size})) << "tag " << tag;
  }
}

// Halving with the second half run inline, as split_rows and fork2 do: a group's size is its
// whole range, the creator's own half included, and the groups one task opens inside each
// other (a half, a quarter, ...) each have their own name and size.
void halves(const std::vector<line_t>& buffer, std::size_t first, std::size_t lines, int depth) {
  if (lines <= 8) {
    touch(buffer, first, lines);
    return;
  }
  locus::task_group tg{locus::work_hint{100.0 + depth}};
  tg.run([&buffer, first, lines, depth] { halves(buffer, first, lines / 2, depth + 1); });
  halves(buffer, first + lines / 2, lines / 2, depth + 1);
  tg.wait();
}

TEST(SizeLearning, TheCreatorsOwnPartCountsTowardsItsOpenGroup) {
  ASSERT_TRUE(registered);
  clear_seen();
  locus::runtime rt{options_for(locus::size_hint_source::learn_all)};
  const std::vector<line_t> buffer(64);
  for (int root = 0; root < 2; ++root) rt.exec([&] { halves(buffer, 0, 64, 0); });
  auto seen = take_seen();
  for (auto& [tag, sizes] : seen) std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(seen.at(100), (std::vector<std::size_t>{0, 64 * kLine}));
  EXPECT_EQ(seen.at(101), (std::vector<std::size_t>{0, 0, 32 * kLine, 32 * kLine}));
  EXPECT_EQ(seen.at(102),
            (std::vector<std::size_t>{0, 0, 0, 0, 16 * kLine, 16 * kLine, 16 * kLine, 16 * kLine}));
}

// A task that goes on on another worker after a join (ml-adws moves a tied group's continuation
// to the unit's server) leaves that group there: its later work is not the group's, and its
// later groups keep their names.
TEST(SizeLearning, ATaskMovedAtAJoinLeavesTheGroupBehind) {
  ASSERT_TRUE(registered);
  clear_seen();
  sizes_policy::moving = true;
  sizes_policy::moved = 0;
  locus::runtime rt{options_for(locus::size_hint_source::learn_all)};
  const two_level_program program;
  for (int root = 0; root < 3; ++root) rt.exec([&] { program(); });
  sizes_policy::moving = false;
  EXPECT_GE(sizes_policy::moved.load(), 30);
  const auto seen = take_seen();
  for (const auto& [tag, size] : expected_sizes()) {
    EXPECT_EQ(seen.at(tag), (std::vector<std::size_t>{0, size, size})) << "tag " << tag;
  }
  EXPECT_EQ(figure(rt.stats(), "size_hints_unknown"), 0);
}

// Another program is given the sizes of the groups it has in the same places as the first one
// (the names are places in the fork tree), no size elsewhere; a root in which most names are
// unknown makes the next one profiled again, and relearn() does so at once.
TEST(SizeLearning, AProgramOfAnotherShapeIsProfiledAgain) {
  ASSERT_TRUE(registered);
  clear_seen();
  locus::runtime rt{options_for(locus::size_hint_source::learn_all)};
  const two_level_program program;
  std::vector<line_t> e(512);
  // 16 children where the first program has 4, each with a group of two children reading 8
  // lines each.
  const auto other = [&] {
    locus::task_group g{locus::work_hint{6}};
    for (std::size_t k = 0; k < 16; ++k) {
      g.run([&, k] {
        locus::task_group inner{locus::work_hint{7}};
        for (std::size_t j = 0; j < 2; ++j) inner.run([&, k, j] { touch(e, 32 * k + 8 * j, 8); });
        inner.wait();
      });
    }
    g.wait();
  };
  rt.exec([&] { program(); });
  rt.exec([&] { other(); });  // 12 of its 17 groups unknown
  rt.exec([&] { other(); });  // profiled again
  rt.exec([&] { other(); });  // learned
  const auto seen = take_seen();
  const std::vector<std::size_t>& inner = seen.at(7);
  ASSERT_EQ(inner.size(), 48u);
  const auto in_root = [&](int root, std::size_t size) {
    return std::count(inner.begin() + 16 * root, inner.begin() + 16 * (root + 1), size);
  };
  EXPECT_EQ(in_root(0, 0), 12);
  EXPECT_EQ(in_root(0, 20 * kLine), 4);  // the places of the first program's inner groups
  EXPECT_EQ(in_root(1, 0), 16);
  EXPECT_EQ(in_root(2, 16 * kLine), 16);
  EXPECT_EQ(seen.at(6), (std::vector<std::size_t>{expected_sizes().at(1), 0, 256 * kLine}));
  EXPECT_EQ(figure(rt.stats(), "size_hint_profiles"), 2);

  rt.relearn();
  rt.exec([&] { program(); });  // profiled
  rt.exec([&] { program(); });
  const auto again = take_seen();
  EXPECT_EQ(again.at(1), (std::vector<std::size_t>{0, expected_sizes().at(1)}));
  EXPECT_EQ(figure(rt.stats(), "size_hint_profiles"), 3);
}

// Past the budget of recorded lines, lines are sampled by address, each standing for
// `size_hint_sample_every` lines. A contiguous range is sampled evenly at every scale, so it is
// counted exactly but for a sample at each of its ends, at rates past one line in a block of 64
// too (blocks drawn at random would leave 4 MB at one line in 1024 a standard error of 12%).
TEST(SizeLearning, SampledFootprintsOfAContiguousRangeMissOnlyItsEnds) {
  ASSERT_TRUE(registered);
  clear_seen();
  locus::options o = options_for(locus::size_hint_source::learn_all);
  o.size_hint_samples = 1024;
  locus::runtime rt{o};
  std::vector<line_t> big(1 << 16);  // 4 MB
  const auto program = [&] {
    locus::task_group g{locus::work_hint{3}};
    for (std::size_t k = 0; k < 16; ++k) {
      // Each child reads its sixteenth twice over and the first 1024 lines, which all share.
      g.run([&, k] {
        touch(big, 4096 * k, 4096);
        touch(big, 4096 * k, 4096);
        touch(big, 0, 1024);
      });
    }
    g.wait();
  };
  rt.exec(program);
  rt.exec(program);
  const auto seen = take_seen();
  const double truth = static_cast<double>(big.size() * kLine);
  const double every = figure(rt.stats(), "size_hint_sample_every");
  EXPECT_GE(every, 256);  // past one line in a block of 64
  EXPECT_LE(figure(rt.stats(), "size_hint_records"), 1024);
  ASSERT_EQ(seen.at(3).size(), 2u);
  EXPECT_NEAR(static_cast<double>(seen.at(3)[1]), truth, 2 * every * kLine);
}

// The multi-level schedulers take learned sizes: every group they see begin in the later roots
// gets one (at least the root's two; those below a worker's own range need no hooks).
TEST(SizeLearning, MultiLevelSchedulersTakeLearnedSizes) {
  const two_level_program program;
  for (const char* sched : {"ml-adws", "ml-ws"}) {
    locus::runtime rt{options_for(locus::size_hint_source::learn_all, sched)};
    for (int root = 0; root < 3; ++root) rt.exec([&] { program(); });
    const locus::stats s = rt.stats();
    EXPECT_EQ(figure(s, "size_hint_profiles"), 1) << sched;
    EXPECT_GE(figure(s, "size_hints_applied"), 4) << sched;
    EXPECT_EQ(figure(s, "size_hints_unknown"), 0) << sched;
  }
}

TEST(SizeLearning, SchedulersThatReadNoSizesSaySo) {
  locus::runtime rt{options_for(locus::size_hint_source::learn, "ws")};
  EXPECT_NE(rt.describe().find("LOCUS_SIZE_HINTS   = learn (unused: ws reads no size hints)"),
            std::string::npos)
      << rt.describe();
  for (const auto& f : rt.stats().policy)
    EXPECT_EQ(f.name.rfind("size_hint", 0), std::string::npos);
}

}  // namespace
