// Tests of the locality model (locus/locality.hpp, src/prof/locality_*): the LRU cache against a
// reference, the replay engine against hand-computed miss counts on small synthetic topologies
// (sequential, strided, two workers sharing an L3, capacity thrash), NUMA first touch, mapping
// stability (by hand, then 1.0 on one worker and far below 1 for ws on 16 synthetic workers), the
// recorder end to end, and LOCUS_LOCALITY / LOCUS_LOCALITY_LINE.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config/config.hpp"
#include "fake_env.hpp"
#include "harness/cli.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "locality_fixture.hpp"
#include "locus/locality.hpp"
#include "locus/locus.hpp"
#include "prof/locality_lru.hpp"
#include "prof/locality_mapping.hpp"
#include "prof/locality_replay.hpp"
#include "text_lines.hpp"
#include "topology/topology.hpp"

namespace {

using locus::locality_report;
using locus::prof::locality_replay;
using locus::prof::lru_cache;
using locus::topo::topology;

constexpr std::size_t line = 64;

// One package: a 16-line L3 shared by two cores, each with an 8-line L2 and a 4-line L1.
constexpr const char* kShared = "pack:1 l3:1(size=1024) l2:2(size=512) l1:1(size=256) core:1 pu:1";
// The same caches, but each core alone in its package (own L3, own NUMA place).
constexpr const char* kSplit = "pack:2 l3:1(size=1024) l2:1(size=512) l1:1(size=256) core:1 pu:1";

std::uintptr_t at_line(std::uint64_t l) {
  return static_cast<std::uintptr_t>(l * line);
}

struct counts {
  std::uint64_t accesses, misses;
  bool operator==(const counts&) const = default;
};
std::ostream& operator<<(std::ostream& os, const counts& c) {
  return os << "{accesses " << c.accesses << ", misses " << c.misses << "}";
}

counts level(const locality_report& r, int level) {
  for (const auto& l : r.levels) {
    if (l.level == level) return {l.accesses, l.misses};
  }
  ADD_FAILURE() << "no level " << level << " in the report";
  return {0, 0};
}

// Reads lines [first, first + n) one line at a time.
void read_lines(locality_replay& m, int w, std::uint64_t first, std::uint64_t n) {
  for (std::uint64_t l = first; l < first + n; ++l) m.access(w, at_line(l), 8);
}

// ---- the LRU cache --------------------------------------------------------------------------

TEST(LocalityLru, EvictsTheLeastRecentlyUsedLine) {
  lru_cache c(2);
  EXPECT_FALSE(c.access(1));
  EXPECT_FALSE(c.access(2));
  EXPECT_TRUE(c.access(1));   // 1 is now the most recent
  EXPECT_FALSE(c.access(3));  // evicts 2, not 1 (FIFO would evict 1)
  EXPECT_TRUE(c.access(1));
  EXPECT_FALSE(c.contains(2));
  EXPECT_TRUE(c.contains(3));
  EXPECT_EQ(c.size(), 2u);
}

// The obvious LRU, to check lru_cache against: a list, most recent first.
struct reference_lru {
  std::size_t capacity;
  std::list<std::uint64_t> lines;

  bool access(std::uint64_t l) {
    const bool hit = erase(l);
    lines.push_front(l);
    if (lines.size() > capacity) lines.pop_back();
    return hit;
  }
  bool erase(std::uint64_t l) {
    const auto it = std::find(lines.begin(), lines.end(), l);
    if (it == lines.end()) return false;
    lines.erase(it);
    return true;
  }
};

// Random streams against the reference: exercises the index's deletions and probe chains.
TEST(LocalityLru, MatchesAReferenceModelOnRandomStreams) {
  for (std::size_t capacity : {1u, 3u, 16u, 100u}) {
    lru_cache c(capacity);
    reference_lru ref{capacity, {}};
    std::mt19937_64 rng(capacity);
    std::uniform_int_distribution<std::uint64_t> pick(0, 3 * capacity);
    for (int i = 0; i < 20000; ++i) {
      // Mostly near lines, sometimes far ones with equal hash neighbourhoods.
      const std::uint64_t l = (i % 7 == 0) ? pick(rng) << 20 : pick(rng);
      ASSERT_EQ(c.access(l), ref.access(l))
          << "capacity " << capacity << " step " << i << " line " << l;
    }
    EXPECT_EQ(c.size(), ref.lines.size());
  }
}

// Erasing (coherence) frees the line's slot for the next miss and keeps the recency order of the
// rest; random streams of accesses and erasures against the same std::list reference.
TEST(LocalityLru, EraseFreesTheLineAndItsSlot) {
  lru_cache c(3);
  for (std::uint64_t l : {1, 2, 3}) EXPECT_FALSE(c.access(l));
  EXPECT_TRUE(c.erase(2));
  EXPECT_FALSE(c.erase(2));
  EXPECT_FALSE(c.contains(2));
  EXPECT_EQ(c.size(), 2u);
  EXPECT_FALSE(c.access(4));  // takes the freed slot: nothing evicted
  EXPECT_TRUE(c.contains(1));
  EXPECT_FALSE(c.access(5));  // full again: evicts 1, the least recent
  EXPECT_FALSE(c.contains(1));
  EXPECT_EQ(c.size(), 3u);

  for (std::size_t capacity : {1u, 4u, 50u}) {
    lru_cache m(capacity);
    reference_lru ref{capacity, {}};
    std::mt19937_64 rng(capacity + 7);
    std::uniform_int_distribution<std::uint64_t> pick(0, 2 * capacity + 1);
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t l = pick(rng);
      if (i % 3 == 0) {
        ASSERT_EQ(m.erase(l), ref.erase(l)) << "capacity " << capacity << " step " << i;
        continue;
      }
      ASSERT_EQ(m.access(l), ref.access(l))
          << "capacity " << capacity << " step " << i << " line " << l;
      ASSERT_EQ(m.size(), ref.lines.size());
    }
  }
}

// ---- hand-computed streams through the hierarchy ----------------------------------------------

TEST(LocalityReplay, TopologyGivesOneModelPerCacheInstance) {
  const topology t = topology::synthetic(kShared);
  const locality_replay m(t, 2, line);
  const locality_report r = m.report();
  ASSERT_EQ(r.levels.size(), 3u);
  EXPECT_EQ(r.levels[0].level, 1);
  EXPECT_EQ(r.levels[0].instances, 2);
  EXPECT_EQ(r.levels[0].cache_bytes, 256u);
  EXPECT_EQ(r.levels[1].instances, 2);
  EXPECT_EQ(r.levels[2].level, 3);
  EXPECT_EQ(r.levels[2].instances, 1);
  EXPECT_EQ(r.line_bytes, line);
  // Only the workers' caches count: one worker sees one cache per level.
  const locality_report one = locality_replay(t, 1, line).report();
  EXPECT_EQ(one.levels[0].instances, 1);
  EXPECT_THROW(locality_replay(t, 3, line), std::invalid_argument);
  EXPECT_THROW(locality_replay(t, 1, 48), std::invalid_argument);
}

// Sequential 8-byte reads: only the first touch of each line misses (spatial locality).
TEST(LocalityReplay, SequentialStreamMissesOncePerLine) {
  const topology t = topology::synthetic(kShared);
  locality_replay m(t, 1, line);
  for (std::uintptr_t a = 0; a < 32 * line; a += 8) m.access(0, a, 8);
  const locality_report r = m.report();
  EXPECT_EQ(level(r, 1), (counts{256, 32}));
  EXPECT_EQ(level(r, 2), (counts{32, 32}));
  EXPECT_EQ(level(r, 3), (counts{32, 32}));
  EXPECT_EQ(r.memory_accesses, 32u);
  EXPECT_EQ(r.line_accesses, 256u);
}

// One declaration covering a range counts every line it overlaps, partial ones included.
TEST(LocalityReplay, RangeCoversEveryOverlappedLine) {
  const topology t = topology::synthetic(kShared);
  locality_replay m(t, 1, line);
  m.access(0, 8, 4 * line);  // lines 0..4
  m.access(0, 64, 64);       // line 1: hit
  m.access(0, 0, 0);         // nothing
  const locality_report r = m.report();
  EXPECT_EQ(level(r, 1), (counts{6, 5}));
}

// 8 lines read twice: too many for the 4-line L1 (LRU on a cyclic stream misses every time),
// they fit the 8-line L2, so the second pass hits there and never reaches L3.
TEST(LocalityReplay, WorkingSetBetweenL1AndL2) {
  const topology t = topology::synthetic(kShared);
  locality_replay m(t, 1, line);
  read_lines(m, 0, 0, 8);
  read_lines(m, 0, 0, 8);
  const locality_report r = m.report();
  EXPECT_EQ(level(r, 1), (counts{16, 16}));
  EXPECT_EQ(level(r, 2), (counts{16, 8}));
  EXPECT_EQ(level(r, 3), (counts{8, 8}));
}

// Every other line (stride 128 bytes), 16 lines, twice: the 16 lines exactly fill L3 and hit
// there the second time; L1 and L2 thrash. The strided declaration replays the same stream.
TEST(LocalityReplay, StridedStream) {
  const topology t = topology::synthetic(kShared);
  locality_replay by_hand(t, 1, line), strided(t, 1, line);
  for (int pass = 0; pass < 2; ++pass) {
    for (std::uintptr_t i = 0; i < 16; ++i) by_hand.access(0, i * 2 * line, 8);
    strided.access_rows(0, 0, 8, 16, 2 * line);
  }
  for (const locality_replay* m : {&by_hand, &strided}) {
    const locality_report r = m->report();
    EXPECT_EQ(level(r, 1), (counts{32, 32}));
    EXPECT_EQ(level(r, 2), (counts{32, 32}));
    EXPECT_EQ(level(r, 3), (counts{32, 16}));
  }
}

// Worker 0 reads 8 lines, then worker 1 reads them: its own L1 and L2 miss, the shared L3 hits.
// With the two cores in separate packages (own L3s) worker 1 misses everywhere.
TEST(LocalityReplay, TwoWorkersSharingAnL3) {
  {
    locality_replay m(topology::synthetic(kShared), 2, line);
    read_lines(m, 0, 0, 8);
    read_lines(m, 1, 0, 8);
    const locality_report r = m.report();
    EXPECT_EQ(level(r, 1), (counts{16, 16}));
    EXPECT_EQ(level(r, 2), (counts{16, 16}));
    EXPECT_EQ(level(r, 3), (counts{16, 8}));
    EXPECT_EQ(r.memory_accesses, 8u);
  }
  {
    locality_replay m(topology::synthetic(kSplit), 2, line);
    read_lines(m, 0, 0, 8);
    read_lines(m, 1, 0, 8);
    const locality_report r = m.report();
    EXPECT_EQ(level(r, 3), (counts{16, 16}));
    EXPECT_EQ(r.memory_accesses, 16u);
  }
  {
    // Sharing works both ways, and private caches stay private: worker 0 re-reads lines 4..7
    // (still in its L1 after the first pass) and hits there, whatever worker 1 did.
    locality_replay m(topology::synthetic(kShared), 2, line);
    read_lines(m, 0, 0, 8);
    read_lines(m, 1, 8, 8);
    read_lines(m, 0, 4, 4);
    EXPECT_EQ(level(m.report(), 1), (counts{20, 16}));
  }
}

struct sharing {
  std::uint64_t from_peers, invalidations, write_misses;
  bool operator==(const sharing&) const = default;
};
std::ostream& operator<<(std::ostream& os, const sharing& c) {
  return os << "{from peers " << c.from_peers << ", invalidations " << c.invalidations
            << ", write misses " << c.write_misses << "}";
}
sharing shared_lines(const locality_report& r, int level) {
  for (const auto& l : r.levels) {
    if (l.level == level) return {l.from_peers, l.invalidations, l.write_misses};
  }
  ADD_FAILURE() << "no level " << level << " in the report";
  return {0, 0, 0};
}

// Lines 0..3 fit every cache. Worker 1 reads what worker 0 read: its L1 and L2 misses are lines
// the other core's caches hold. Worker 0 then writes them: with coherence that takes them out of
// worker 1's L1 and L2 (not the shared L3, on the writer's path), and worker 1's next reads miss
// there again, supplied by worker 0's caches; without coherence worker 1 keeps its stale copies.
TEST(LocalityReplay, AWriteInvalidatesTheOtherCoresCopies) {
  for (const bool coherence : {true, false}) {
    SCOPED_TRACE(coherence ? "coherence" : "no coherence");
    locality_replay m(topology::synthetic(kShared), 2, line, 4096, coherence);
    read_lines(m, 0, 0, 4);
    read_lines(m, 1, 0, 4);
    for (std::uint64_t l = 0; l < 4; ++l) m.access(0, at_line(l), 8, true);
    read_lines(m, 1, 0, 4);
    const locality_report r = m.report();
    if (coherence) {
      EXPECT_EQ(level(r, 1), (counts{16, 12}));
      EXPECT_EQ(shared_lines(r, 1), (sharing{8, 4, 0}));
      EXPECT_EQ(level(r, 2), (counts{12, 12}));
      EXPECT_EQ(shared_lines(r, 2), (sharing{8, 4, 0}));
    } else {
      EXPECT_EQ(level(r, 1), (counts{16, 8}));
      EXPECT_EQ(shared_lines(r, 1), (sharing{4, 0, 0}));
      EXPECT_EQ(level(r, 2), (counts{8, 8}));
      EXPECT_EQ(shared_lines(r, 2), (sharing{4, 0, 0}));
    }
    EXPECT_EQ(level(r, 3), (counts{coherence ? 12u : 8u, 4}));
    EXPECT_EQ(shared_lines(r, 3), (sharing{0, 0, 0})) << "one L3: it has no peer";
    EXPECT_EQ(r.memory_accesses, 4u);
  }
  // Packages apart: the write also takes the lines out of the other package's L3, and a write
  // that misses counts as a write miss at every level it misses.
  locality_replay m(topology::synthetic(kSplit), 2, line);
  read_lines(m, 1, 0, 4);
  for (std::uint64_t l = 0; l < 4; ++l) m.access(0, at_line(l), 8, true);
  read_lines(m, 1, 0, 4);
  const locality_report r = m.report();
  EXPECT_EQ(level(r, 3), (counts{12, 12}));
  EXPECT_EQ(shared_lines(r, 3), (sharing{8, 4, 4}));
  EXPECT_EQ(shared_lines(r, 1), (sharing{8, 4, 4}));
  EXPECT_EQ(r.memory_accesses, 12u);
}

// A cyclic stream one line larger than a cache misses on every access there (LRU's worst case);
// one that fits hits after the first pass.
TEST(LocalityReplay, CapacityThrash) {
  const topology t = topology::synthetic(kShared);
  {
    locality_replay m(t, 1, line);
    for (int pass = 0; pass < 3; ++pass) read_lines(m, 0, 0, 17);
    const locality_report r = m.report();
    EXPECT_EQ(level(r, 1), (counts{51, 51}));
    EXPECT_EQ(level(r, 2), (counts{51, 51}));
    EXPECT_EQ(level(r, 3), (counts{51, 51}));
    EXPECT_EQ(r.memory_accesses, 51u);
  }
  {
    locality_replay m(t, 1, line);
    for (int pass = 0; pass < 3; ++pass) read_lines(m, 0, 0, 16);
    const locality_report r = m.report();
    EXPECT_EQ(level(r, 2), (counts{48, 48}));
    EXPECT_EQ(level(r, 3), (counts{48, 16}));
    EXPECT_EQ(r.memory_accesses, 16u);
  }
}

// The line size is a parameter: with 128-byte lines the sequential stream misses half as often,
// and the 256-byte L1 holds two lines.
TEST(LocalityReplay, ConfigurableLineSize) {
  const topology t = topology::synthetic(kShared);
  locality_replay m(t, 1, 128);
  for (std::uintptr_t a = 0; a < 32 * line; a += 8) m.access(0, a, 8);
  const locality_report r = m.report();
  EXPECT_EQ(r.line_bytes, 128u);
  EXPECT_EQ(level(r, 1), (counts{256, 16}));
  EXPECT_EQ(level(r, 3), (counts{16, 16}));
}

// Two packages (two NUMA places): each worker first-touches its own pages, then reads the other's.
// Page granularity: a line of a page the other worker touched first is remote.
TEST(LocalityReplay, NumaFirstTouchShare) {
  const topology t = topology::synthetic(kSplit);
  ASSERT_EQ(t.num_numa(), 2);
  locality_replay m(t, 2, line, 4096);
  m.access(0, 0, 8192);         // pages 0, 1: place 0 (128 lines)
  m.access(1, 8192, 4096);      // page 2: place 1 (64 lines)
  m.access(1, 0, 8192);         // remote for worker 1
  m.access(0, 8192, 4096);      // remote for worker 0
  m.access(0, 4096 - 64, 128);  // last line of page 0 (local) and first of page 1 (local)
  const locality_report r = m.report();
  EXPECT_EQ(r.numa_nodes, 2);
  EXPECT_EQ(r.line_accesses, 128u + 64 + 128 + 64 + 2);
  EXPECT_EQ(r.remote_line_accesses, 192u);
  // Each pass is larger than the 16-line caches and follows a different one, so every access
  // goes to memory (the last two too: worker 0 has read page 2 since).
  EXPECT_EQ(r.memory_accesses, 386u);
  EXPECT_EQ(r.remote_memory_accesses, 192u);
  EXPECT_DOUBLE_EQ(*r.numa_remote_share(), 192.0 / 386.0);

  // One place: nothing is remote.
  locality_replay one(topology::synthetic(kShared), 2, line);
  one.access(0, 0, 8192);
  one.access(1, 0, 8192);
  EXPECT_EQ(one.report().remote_line_accesses, 0u);
  EXPECT_DOUBLE_EQ(*one.report().numa_remote_share(), 0.0);
}

// ---- mapping stability by hand ----------------------------------------------------------------

TEST(LocalityMapping, ComparesConsecutiveIterations) {
  using locus::prof::leaf_record;
  std::vector<leaf_record> leaves{
      // iteration 0: ids 1, 2, 3 on workers 0, 1, 2
      {0, 0, 1, 0},
      {1, 0, 2, 1},
      {2, 0, 3, 2},
      // iteration 1: id 1 same worker, id 2 moved, id 4 new (not compared); id 2 again later on
      // worker 1 (only the first declaration counts)
      {3, 1, 1, 0},
      {4, 1, 2, 3},
      {5, 1, 4, 0},
      {9, 1, 2, 1},
      // iteration 3 has no iteration 2 before it: not compared
      {6, 3, 1, 0},
  };
  const auto r = locus::prof::mapping_stability(leaves);
  EXPECT_EQ(r.compared, 2u);
  EXPECT_EQ(r.same, 1u);
  std::vector<leaf_record> none;
  EXPECT_EQ(locus::prof::mapping_stability(none).compared, 0u);
}

TEST(LocalityReport, SharesAndJson) {
  locality_report r;
  EXPECT_FALSE(r.mapping_stability());
  EXPECT_FALSE(r.numa_remote_share());
  r.line_bytes = 64;
  r.levels.push_back({1, 2, 256, 10, 4});
  r.line_accesses = 10;
  r.remote_line_accesses = 5;
  r.leaves_compared = 4;
  r.leaves_same = 1;
  EXPECT_DOUBLE_EQ(*r.mapping_stability(), 0.25);
  EXPECT_DOUBLE_EQ(*r.levels[0].miss_ratio(), 0.4);
  const std::string j = r.to_json();
  for (const char* part :
       {R"("line_bytes":64)",
        R"("levels":[{"level":1,"instances":2,"cache_bytes":256,"accesses":10,)"
        R"("misses":4,"miss_ratio":0.400000,"write_misses":0,"from_peers":0,)"
        R"("invalidations":0}])",
        R"("remote_share":0.500000)", R"("remote_memory_share":null)",
        R"("mapping":{"leaves_compared":4,"leaves_same":1,"stability":0.250000})"}) {
    EXPECT_NE(j.find(part), std::string::npos) << part << "\n in " << j;
  }
  locality_report sum = r;
  sum += r;
  EXPECT_EQ(sum.levels.size(), 1u);
  EXPECT_EQ(sum.levels[0].accesses, 20u);
  EXPECT_EQ(sum.leaves_compared, 8u);
  EXPECT_DOUBLE_EQ(*sum.mapping_stability(), 0.25);
  EXPECT_NE(r.to_text().find("mapping stability 25.00%"), std::string::npos) << r.to_text();
}

// ---- the recorder, end to end -----------------------------------------------------------------

// The environment variables this file touches, cleared for each test and restored after.
class LocalityRuntimeTest : public locus_test::locality_env_test {};

TEST_F(LocalityRuntimeTest, DeclarationsOnOneWorkerReplayAsByHand) {
  locus::runtime rt{locus::options{.workers = 1, .topology = kShared}};
  alignas(4096) static char data[32 * line];
  // Outside a session nothing is recorded.
  rt.exec([&] { locus::locality::touch_read(data, sizeof data); });
  locus::locality::begin(rt, {.line_bytes = line});
  EXPECT_TRUE(locus::locality::recording());
  rt.exec([&] {
    for (int pass = 0; pass < 3; ++pass) {
      for (std::size_t l = 0; l < 17; ++l) locus::locality::touch_read(data + l * line, 8);
    }
    locus::locality::touch_write_rows(data, 8, 16, 2 * line);
  });
  locus::locality::touch_read(data, 8);  // not a worker: unattributed
  const locality_report r = locus::locality::end();
  EXPECT_FALSE(locus::locality::recording());
  EXPECT_EQ(r.ranges, 52u);
  EXPECT_EQ(r.unattributed, 1u);
  EXPECT_EQ(r.dropped, 0u);
  // Thrash (51 misses everywhere), then 16 strided lines: lines 0, 2, ..., 30 of which the L3
  // holds the last 16 read (1..16): 0 misses, and so do the even ones above 16.
  EXPECT_EQ(level(r, 1), (counts{67, 67}));
  EXPECT_EQ(level(r, 3).accesses, 67u);
  EXPECT_EQ(level(r, 3).misses, 51u + 1 + 7);
  // Declarations after end() are ignored, and a new session starts empty.
  rt.exec([&] { locus::locality::touch_read(data, sizeof data); });
  locus::locality::begin(rt);
  const locality_report empty = locus::locality::end();
  EXPECT_EQ(empty.ranges, 0u);
  EXPECT_EQ(empty.line_bytes, 64u) << "the synthetic topology's line size";
}

// touch_write reaches the model as a write: the worker that writes lines the other one read takes
// them out of that one's caches (with coherence), whose next reads get them from the writer's.
TEST_F(LocalityRuntimeTest, DeclaredWritesInvalidateTheOtherWorkersCopies) {
  locus::runtime rt{locus::options{.workers = 2, .topology = kShared}};
  alignas(4096) static char data[4 * line];
  for (const bool coherence : {true, false}) {
    SCOPED_TRACE(coherence ? "coherence" : "no coherence");
    locus::locality::begin(rt,
                           {.line_bytes = line, .coherence = coherence, .attribute_outside_to = 1});
    locus::locality::touch_read(data, sizeof data);  // as worker 1
    int writer = -1;
    rt.exec([&] {
      writer = locus::this_worker();
      locus::locality::touch_write(data, sizeof data);
    });
    locus::locality::touch_read(data, sizeof data);
    const locality_report r = locus::locality::end();
    ASSERT_TRUE(writer == 0 || writer == 1);
    if (writer == 1) {
      EXPECT_EQ(level(r, 1), (counts{12, 4}));
      EXPECT_EQ(shared_lines(r, 1), (sharing{0, 0, 0}));
    } else if (coherence) {
      EXPECT_EQ(level(r, 1), (counts{12, 12}));
      EXPECT_EQ(shared_lines(r, 1), (sharing{8, 4, 4}));
      EXPECT_EQ(shared_lines(r, 2), (sharing{8, 4, 4}));
    } else {
      EXPECT_EQ(level(r, 1), (counts{12, 8}));
      EXPECT_EQ(shared_lines(r, 1), (sharing{4, 0, 4}));
    }
  }
}

// A serial elision runs on the calling thread: attributed to worker 0, its declarations replay on
// worker 0's caches and take part in mapping stability as worker 0's.
TEST_F(LocalityRuntimeTest, OutsideDeclarationsAttributedToAWorker) {
  locus::runtime rt{locus::options{
      .workers = 2, .topology = "pack:1 l3:1(size=4096) l2:2(size=2048) core:1 pu:1"}};
  alignas(4096) static char data[8 * line];
  EXPECT_THROW(locus::locality::begin(rt, {.attribute_outside_to = 2}), std::invalid_argument);
  EXPECT_THROW(locus::locality::begin(rt, {.attribute_outside_to = -1}), std::invalid_argument);
  EXPECT_FALSE(locus::locality::recording());
  locus::locality::begin(rt, {.line_bytes = line, .attribute_outside_to = 1});
  locus::locality::leaf(7);
  locus::locality::touch_read(data, sizeof data);  // 8 misses in worker 1's L2
  locus::locality::next_iteration();
  rt.exec([&] {
    locus::locality::leaf(7);  // iteration 1 on the worker running the root
    locus::locality::touch_read(data, sizeof data);
  });
  locus::locality::touch_read(data, sizeof data);                        // hits in worker 1's L2
  std::thread other([&] { locus::locality::touch_write(data, line); });  // another outsider
  other.join();
  const locality_report r = locus::locality::end();
  EXPECT_EQ(r.unattributed, 0u);
  EXPECT_EQ(r.ranges, 4u);
  ASSERT_EQ(r.levels.size(), 2u);
  EXPECT_EQ(r.levels[0].instances, 2) << "the model has both workers' caches";
  EXPECT_EQ(r.leaves_compared, 1u);
  // The root ran on worker 0 or 1; the L2 counts tell which.
  const bool root_on_1 = r.leaves_same == 1;
  EXPECT_EQ(level(r, 2), (counts{8 + 8 + 8 + 1, root_on_1 ? 8u : 16u}));
  EXPECT_EQ(level(r, 3), (counts{root_on_1 ? 8u : 16u, 8}));
  // The next session without the option counts outsiders as unattributed again.
  locus::locality::begin(rt);
  locus::locality::touch_read(data, 8);
  const locality_report plain = locus::locality::end();
  EXPECT_EQ(plain.unattributed, 1u);
  EXPECT_EQ(plain.ranges, 0u);
}

TEST_F(LocalityRuntimeTest, BeginAndEndMisuseThrows) {
  locus::runtime rt{locus::options{.workers = 1, .topology = kShared}};
  EXPECT_THROW((void)locus::locality::end(), std::logic_error);
  locus::locality::begin(rt);
  EXPECT_THROW(locus::locality::begin(rt), std::logic_error);
  (void)locus::locality::end();
  EXPECT_THROW(locus::locality::begin(rt, {.line_bytes = 100}), std::invalid_argument);
  EXPECT_FALSE(locus::locality::recording());
}

TEST_F(LocalityRuntimeTest, DestroyingTheRuntimeClosesItsSession) {
  {
    locus::runtime rt{locus::options{.workers = 1, .topology = kShared}};
    locus::locality::begin(rt);
  }
  EXPECT_FALSE(locus::locality::recording());
}

// Many workers declaring at once: every declaration is kept, and the replay sees them all.
TEST_F(LocalityRuntimeTest, ConcurrentDeclarationsAreAllRecorded) {
  locus::runtime rt{locus::options{.workers = 8, .topology = "pack:2 l3:1 l2:4 core:1 pu:1"}};
  std::vector<double> data(1 << 14);
  locus::locality::begin(rt);
  rt.exec([&] {
    locus::parallel_for(
        std::size_t{0}, data.size(),
        [&](std::size_t i) {
          locus::locality::touch_write(&data[i], sizeof(double));
          data[i] = 1;
        },
        locus::grain{16});
  });
  const locality_report r = locus::locality::end();
  EXPECT_EQ(r.ranges, data.size());
  EXPECT_EQ(r.line_accesses, data.size());
  EXPECT_EQ(r.unattributed, 0u);
}

// An iterative parallel loop whose leaves declare their identity every iteration.
locality_report iterate(locus::runtime& rt, int iterations, int leaves) {
  std::vector<double> data(static_cast<std::size_t>(leaves) * 512, 1.0);
  locus::locality::begin(rt);
  rt.exec([&] {
    for (int it = 0; it < iterations; ++it) {
      locus::parallel_for(
          0, leaves,
          [&](int b) {
            locus::locality::leaf(static_cast<std::uint64_t>(b));
            double* block = data.data() + static_cast<std::size_t>(b) * 512;
            locus::locality::touch_read(block, 512 * sizeof(double));
            for (int i = 0; i < 512; ++i) block[i] = block[i] * 0.5 + 0.5;
            // A leaf that holds its worker without holding a CPU: on a machine with fewer cores
            // than workers, spinning leaves would leave the thieves no CPU to steal with, and
            // the worker that starts the loop would run most leaves (always the same ones,
            // child-first runs the left end itself). Sleeping lets all 16 take part, as 16 cores
            // would.
            std::this_thread::sleep_for(std::chrono::microseconds(100));
          },
          locus::grain{1});
      locus::locality::next_iteration();
    }
  });
  return locus::locality::end();
}

TEST_F(LocalityRuntimeTest, MappingStabilityIsOneOnOneWorker) {
  locus::runtime rt{locus::options{.workers = 1, .topology = kShared}};
  const locality_report r = iterate(rt, 4, 64);
  EXPECT_EQ(r.leaves_compared, 3u * 64);
  ASSERT_TRUE(r.mapping_stability());
  EXPECT_DOUBLE_EQ(*r.mapping_stability(), 1.0);
}

TEST_F(LocalityRuntimeTest, MappingStabilityIsLowForWsOnSixteenWorkers) {
  locus::runtime rt{
      locus::options{.sched = "ws",
                     .workers = 16,
                     .topology = "pack:2 l3:1(size=32MB) l2:8(size=1MB) core:1 pu:1"}};
  const locality_report r = iterate(rt, 6, 256);
  EXPECT_EQ(r.leaves_compared, 5u * 256);
  ASSERT_TRUE(r.mapping_stability());
  EXPECT_LT(*r.mapping_stability(), 0.5);
}

TEST_F(LocalityRuntimeTest, ExplicitIterationsForNestedRepeats) {
  locus::runtime rt{locus::options{.workers = 1, .topology = kShared}};
  locus::locality::begin(rt);
  rt.exec([] {
    for (std::uint64_t r = 0; r < 3; ++r) {
      for (std::uint64_t id = 0; id < 5; ++id) locus::locality::leaf(id, r);
    }
  });
  const locality_report rep = locus::locality::end();
  EXPECT_EQ(rep.leaves_compared, 10u);
  EXPECT_EQ(rep.leaves_same, 10u);
}

// ---- configuration ----------------------------------------------------------------------------

using locus_test::resolve_with;

std::string error_of(std::map<std::string, std::string> env, const locus::options& o = {}) {
  try {
    resolve_with(std::move(env), o);
  } catch (const locus::config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected locus::config_error";
  return {};
}

TEST(LocalityConfig, LocalityVariables) {
  EXPECT_FALSE(resolve_with({}).locality);
  EXPECT_EQ(resolve_with({}).locality_line, 0u);
  EXPECT_TRUE(resolve_with({{"LOCUS_LOCALITY", "1"}}).locality);
  EXPECT_TRUE(resolve_with({{"LOCUS_LOCALITY", "on"}}).locality);
  EXPECT_FALSE(resolve_with({{"LOCUS_LOCALITY", "0"}}).locality);
  EXPECT_EQ(resolve_with({{"LOCUS_LOCALITY_LINE", "128"}}).locality_line, 128u);
  EXPECT_EQ(resolve_with({{"LOCUS_LOCALITY_LINE", " 4K "}}).locality_line, 4096u);
  EXPECT_EQ(resolve_with({{"LOCUS_LOCALITY_LINE", ""}}).locality_line, 0u);
  EXPECT_FALSE(resolve_with({{"LOCUS_LOCALITY", "1"}}, {.locality = false}).locality);
  EXPECT_EQ(resolve_with({{"LOCUS_LOCALITY_LINE", "bad"}}, {.locality_line = 32}).locality_line,
            32u);
}

TEST(LocalityConfig, BadValuesNameTheVariableAndTheAcceptedValues) {
  const std::string e = error_of({{"LOCUS_LOCALITY", "maybe"}});
  EXPECT_NE(e.find("LOCUS_LOCALITY='maybe'"), std::string::npos) << e;
  EXPECT_NE(e.find("1, 0, true, false"), std::string::npos) << e;
  for (const char* bad : {"0", "4", "48", "100", "8192", "64 bytes", "abc", "-64", "8K"}) {
    const std::string m = error_of({{"LOCUS_LOCALITY_LINE", bad}});
    EXPECT_NE(m.find("LOCUS_LOCALITY_LINE='" + std::string(bad) + "'"), std::string::npos) << m;
    EXPECT_NE(m.find("a power of two from 8 to 4096"), std::string::npos) << m;
  }
  const std::string o = error_of({}, {.locality_line = 96});
  EXPECT_NE(o.find("options::locality_line='96'"), std::string::npos) << o;
}

TEST_F(LocalityRuntimeTest, LocalityFromTheEnvironmentRecordsTheRunAndPrintsAtExit) {
  ::setenv("LOCUS_LOCALITY", "1", 1);
  ::setenv("LOCUS_LOCALITY_LINE", "128", 1);
  testing::internal::CaptureStderr();
  {
    locus::runtime rt{locus::options{.workers = 1, .topology = kShared}};
    EXPECT_TRUE(locus::locality::recording());
    static char data[4096];
    rt.exec([&] { locus::locality::touch_read(data, sizeof data); });
    EXPECT_NE(rt.describe().find("LOCUS_LOCALITY     = 1"), std::string::npos) << rt.describe();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(locus::locality::recording());
  EXPECT_NE(err.find("locus locality model (128-byte lines"), std::string::npos) << err;
  EXPECT_NE(err.find("L1"), std::string::npos) << err;
}

TEST_F(LocalityRuntimeTest, BadLocalityIsRejectedByTheRuntime) {
  ::setenv("LOCUS_LOCALITY", "2", 1);
  try {
    locus::runtime rt{locus::options{.workers = 1, .topology = kShared}};
    ADD_FAILURE() << "expected locus::config_error";
  } catch (const locus::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("LOCUS_LOCALITY"), std::string::npos) << e.what();
  }
}

// ---- locus-bench --locality ---------------------------------------------------------------------

std::vector<std::string> run_bench(const std::vector<std::string>& args) {
  using namespace locus_bench;
  const run_plan p = make_plan(parse_command_line(args), registry::get(), 1);
  std::ostringstream out, log;
  EXPECT_EQ(execute(p, out, log), 0) << log.str();
  return locus_test::lines_of(out.str());
}

// The "locality" object of a locus-bench JSON line.
std::string locality_of(const std::string& line) {
  const std::size_t at = line.find(R"("locality":{)");
  if (at == std::string::npos) return "";
  std::size_t end = at + 11;
  for (int depth = 0; end < line.size(); ++end) {
    depth += line[end] == '{' ? 1 : line[end] == '}' ? -1 : 0;
    if (depth == 0) break;
  }
  return line.substr(at, end + 1 - at);
}

TEST_F(LocalityRuntimeTest, BenchLocalityFlagAddsTheModelToEveryJsonLine) {
  EXPECT_TRUE(locus_bench::parse_command_line({"run", "heat2d", "--locality"}).locality);
  EXPECT_THROW(locus_bench::parse_command_line({"run", "heat2d", "--locality=1"}),
               locus_bench::usage_error);
  // LOCUS_LOCALITY does not get in the way of --locality's own sessions.
  ::setenv("LOCUS_LOCALITY", "1", 1);
  for (const char* bench : {"heat2d", "rrm"}) {
    SCOPED_TRACE(bench);
    const auto lines = run_bench({"run", bench, "--size", "small", "--impl", "serial,locus",
                                  "--workers", "1", "--reps", "2", "--json", "--locality"});
    ASSERT_EQ(lines.size(), 2u);
    // The serial elision declares what locus does, in the order one worker runs it: the same
    // model output.
    EXPECT_EQ(locality_of(lines[0]), locality_of(lines[1]));
    // One worker: every leaf runs where it ran before.
    EXPECT_NE(lines[1].find(R"("locality":{"line_bytes":)"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(R"("stability":1.000000})"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(R"("unattributed":0,"dropped":0)"), std::string::npos) << lines[1];
    EXPECT_NE(lines[1].find(R"("verified":true)"), std::string::npos) << lines[1];
  }
  EXPECT_FALSE(locus::locality::recording());
  const auto plain = run_bench({"run", "heat2d", "--size", "small", "--impl", "locus", "--workers",
                                "1", "--reps", "1", "--json"});
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].find("locality"), std::string::npos) << plain[0];
}

// Every benchmark that declares footprints (bench/README.md's list): a small run is modeled with
// accesses at every level, for serial as for locus, and the serial elision declares what one
// locus worker does, in the same order. One test per benchmark: under ThreadSanitizer the seven
// together took half of a test's time limit.
class DeclaringBenchmark : public locus_test::locality_env_test,
                           public testing::WithParamInterface<const char*> {};

TEST_P(DeclaringBenchmark, IsModeledAlikeForSerialAndLocus) {
  const auto lines =
      run_bench({"run", GetParam(), "--size", "small", "--impl", "serial,locus", "--workers", "1",
                 "--reps", "1", "--warmup", "0", "--json", "--locality"});
  ASSERT_EQ(lines.size(), 2u);
  const std::string model = locality_of(lines[1]);
  EXPECT_EQ(locality_of(lines[0]), model);
  EXPECT_EQ(model.find(R"("ranges":0,)"), std::string::npos) << model;
  EXPECT_EQ(model.find(R"("accesses":0,)"), std::string::npos) << model;
  EXPECT_NE(model.find(R"("unattributed":0,"dropped":0)"), std::string::npos) << model;
}

INSTANTIATE_TEST_SUITE_P(LocalityRuntimeTest, DeclaringBenchmark,
                         testing::Values("heat2d", "rrm", "quicksort", "kdtree", "dtree", "matmul",
                                         "sparselu"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
