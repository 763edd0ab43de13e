// cats (seed 002): task identifiers by spawn path, the partition of Eq. 1 against the shared
// cache of a package, and the bi-tier schedule that follows it, on a synthetic machine of two
// packages of eight workers (1 MB of L3 each). The program is a binary split of an array of
// cells down to leaves of 1024 cells, one root per iteration; the PMU is replaced by injected
// per-task miss counts (cats_audit.hpp), and the expected partition is computed here by Eq. 1
// over the same counts.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "locus/locality.hpp"
#include "locus/locus.hpp"
#include "saved_env.hpp"
#include "sched/cats_audit.hpp"
#include "wait_until.hpp"

namespace {

using locus::detail::cats_event;
using locus::detail::cats::tier;

constexpr const char* two_packages = "pack:2 l3:1(size=1MB) l2:8(size=256KB) core:1 pu:1";
constexpr int workers = 16, per_package = 8;
constexpr std::uint64_t cache_bytes = 1 << 20;
constexpr int leaf_cells = 1024;
constexpr std::uint64_t cell_bytes = 64;  // one line per cell: a leaf misses 1024 lines

using range = std::pair<int, int>;

// What the program and the scheduler reported, for one runtime at a time.
struct record {
  std::mutex lock;
  int iteration = 0;
  std::map<std::uint64_t, range> range_of_path;       // from every iteration
  std::map<range, std::set<std::uint64_t>> paths_of;  // every path a range had
  std::map<std::pair<int, range>, int> leaf_worker;   // (iteration, leaf) -> worker
  std::vector<std::pair<int, cats_event>> events;     // (iteration, event)
  std::atomic<int> subtrees_now[2] = {0, 0};
  std::atomic<int> overlaps{0};
  // Searches held (SearchesBegunWhileProfiling...): the first search of each worker of package 0
  // but its head, while profiling, until a leaf of a later iteration releases them.
  bool hold_searches = false;
  std::atomic<bool> search_held[workers] = {};
  std::atomic<int> holding{0}, back{0};
  std::atomic<bool> released{false};
};
record* rec = nullptr;

// A held worker's first search stops here, as if the OS had descheduled it, until a leaf of a
// later iteration runs in package 1.
void hold_search(const cats_event& e) {
  if (!rec->hold_searches || e.worker % per_package == 0 || e.worker / per_package != 0 ||
      rec->released.load() || rec->search_held[e.worker].exchange(true)) {
    return;
  }
  rec->holding.fetch_add(1);
  // Asleep between looks: the held workers leave the CPUs to the workers they wait for.
  locus_test::wait_until([] { return rec->released.load(); }, std::chrono::seconds(10),
                         std::chrono::microseconds(100));
  rec->back.fetch_add(1);
}

void observe(const cats_event& e) {
  if (e.kind == cats_event::what::search) {
    hold_search(e);
    return;
  }
  if (e.kind == cats_event::what::subtree_begin &&
      rec->subtrees_now[e.package].fetch_add(1, std::memory_order_relaxed) != 0) {
    rec->overlaps.fetch_add(1, std::memory_order_relaxed);
  }
  if (e.kind == cats_event::what::subtree_end) {
    rec->subtrees_now[e.package].fetch_sub(1, std::memory_order_relaxed);
  }
  const std::lock_guard hold(rec->lock);
  rec->events.emplace_back(rec->iteration, e);
}

bool is_leaf(range r) {
  return r.second - r.first <= leaf_cells;
}

// The PMU's part: a leaf misses each of its lines, an inner task one line (its frame).
std::uint64_t injected_misses(std::uint64_t path) {
  const std::lock_guard hold(rec->lock);
  const auto it = rec->range_of_path.find(path);
  if (it == rec->range_of_path.end()) return 0;
  const range r = it->second;
  return is_leaf(r) ? static_cast<std::uint64_t>(r.second - r.first) * cell_bytes / 64 : 1;
}

struct options_for_tree {
  bool size_hints = false;
  bool declare = false;
  int leaf_us = 0;      // a leaf also spins this long, so that other workers get to steal
  int fault_pages = 0;  // a leaf also maps this many fresh pages and touches each once
};

// Page faults the PMU path can count on any machine: `pages` pages the process never touched.
void fault_in(int pages) {
  if (pages == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(pages) * 4096;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  ::madvise(p, bytes, MADV_NOHUGEPAGE);
  for (std::size_t at = 0; at < bytes; at += 4096) static_cast<volatile char*>(p)[at] = 1;
  ::munmap(p, bytes);
}

void spin_for(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

std::int64_t visit(const std::vector<std::int32_t>& cells, range r, const options_for_tree& o) {
  int iteration = 0;
  {
    const std::lock_guard hold(rec->lock);
    iteration = rec->iteration;
    rec->range_of_path.emplace(locus::this_task_path(), r);
    rec->paths_of[r].insert(locus::this_task_path());
    if (is_leaf(r)) rec->leaf_worker[{rec->iteration, r}] = locus::this_worker();
  }
  if (is_leaf(r) && iteration > 0 && locus::this_worker() / per_package == 1 &&
      rec->holding.load() > 0 && !rec->released.exchange(true)) {
    // The package's subtree has items queued on its workers while this leaf runs: the held
    // searches go on now.
    locus_test::wait_until([] { return rec->back.load() == rec->holding.load(); },
                           std::chrono::seconds(2), std::chrono::microseconds(100));
    spin_for(2000);
  }
  if (is_leaf(r)) {
    if (o.declare) {
      locus::locality::touch_read(cells.data() + r.first,
                                  static_cast<std::size_t>(r.second - r.first) * cell_bytes);
    }
    std::int64_t sum = 0;
    for (int i = r.first; i < r.second; ++i) sum += cells[static_cast<std::size_t>(i)];
    spin_for(o.leaf_us);
    fault_in(o.fault_pages);
    return sum;
  }
  const int mid = r.first + (r.second - r.first) / 2;
  std::int64_t a = 0, b = 0;
  const auto bytes = static_cast<std::size_t>(r.second - r.first) * cell_bytes;
  locus::task_group tg(o.size_hints ? locus::size_hint{bytes} : locus::size_hint{0});
  tg.run([&] { a = visit(cells, {r.first, mid}, o); });
  tg.run([&] { b = visit(cells, {mid, r.second}, o); });
  tg.wait();
  return a + b;
}

// Eq. 1 over the injected counts, and Fig. 6's tiers, computed without the scheduler.
std::uint64_t expected_soid(range r) {
  if (is_leaf(r)) return static_cast<std::uint64_t>(r.second - r.first) * cell_bytes;
  const int mid = r.first + (r.second - r.first) / 2;
  return 64 + expected_soid({r.first, mid}) + expected_soid({mid, r.second});
}
void expected_tiers(range r, std::uint64_t parent_soid, std::map<range, tier>& out) {
  const std::uint64_t d = expected_soid(r);
  out[r] = d >= cache_bytes ? tier::inter : parent_soid >= cache_bytes ? tier::leaf : tier::intra;
  if (is_leaf(r)) return;
  const int mid = r.first + (r.second - r.first) / 2;
  expected_tiers({r.first, mid}, d, out);
  expected_tiers({mid, r.second}, d, out);
}

double figure(const locus::stats& s, const std::string& name) {
  for (const auto& f : s.policy) {
    if (f.name == name) return f.value;
  }
  ADD_FAILURE() << "no figure " << name;
  return -1;
}

// No kernel knows this PMU type: perf_event_open refuses it as on a machine without counters.
const locus::prof::event_spec no_such_event{PERF_TYPE_MAX + 1000u, 0, "an unknown PMU type"};

class Cats : public ::testing::Test {
 protected:
  void SetUp() override {
    rec_ = std::make_unique<record>();
    rec = rec_.get();
    locus::detail::set_cats_observer(&observe);
    // The tests are about the sources that stand in for the PMU and about the PMU path through
    // an event of their choice, so the machine's own L2 miss event (on hosts whose kernel lets
    // this process count it) stays out of them.
    locus::detail::set_cats_pmu_event(&no_such_event);
  }
  void TearDown() override {
    locus::detail::set_cats_pmu_event(nullptr);
    locus::detail::set_cats_observer(nullptr);
    locus::detail::set_cats_miss_source(nullptr);
    locus::detail::set_cats_instruction_source(nullptr);
    rec = nullptr;
  }

  // Runs `iterations` roots over `cells` cells, then more until `enough` says so (at most 30 s:
  // 16 workers share two CPUs, and which of them runs when is the OS's choice); every sum
  // checked. Returns the number of iterations run.
  int run(locus::runtime& rt, int cells_n, int iterations, const options_for_tree& o,
          const std::function<bool()>& enough = {}) {
    std::vector<std::int32_t> cells(static_cast<std::size_t>(cells_n));
    std::int64_t want = 0;
    for (int i = 0; i < cells_n; ++i) {
      cells[static_cast<std::size_t>(i)] = (i * 7919) % 1000;
      want += cells[static_cast<std::size_t>(i)];
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    int it = 0;
    for (; it < iterations || (enough && !enough() && std::chrono::steady_clock::now() < give_up);
         ++it) {
      {
        const std::lock_guard hold(rec->lock);
        rec->iteration = first_iteration_ + it;
      }
      EXPECT_EQ(rt.exec([&] { return visit(cells, {0, cells_n}, o); }), want) << it;
    }
    first_iteration_ += it;
    return it;
  }

  // Starts the record again, for another runtime in the same test.
  void fresh_record() {
    rec_ = std::make_unique<record>();
    rec = rec_.get();
    first_iteration_ = 0;
  }

  int first_iteration_ = 0;

  std::unique_ptr<record> rec_;
  locus_test::saved_env env_{"LOCUS_CATS_SOURCE", "LOCUS_CATS_BOUND", "LOCUS_CATS_CACHE",
                             "LOCUS_CATS_CMPI"};
  // The tests' tasks are too short for the bytes-per-nanosecond test of CPU-bound programs
  // (under a sanitizer above all): memory-bound, unless a test says otherwise.
  locus_test::saved_env memory_bound_ = locus_test::saved_env("LOCUS_CATS_BOUND", "memory");
};

constexpr int cells_8mb = 8 << 20 >> 6;  // 131072 cells of 64 bytes
constexpr double default_bytes_per_ns_threshold = 2.0;

locus::options machine() {
  return locus::options{.sched = "cats", .workers = workers, .topology = two_packages};
}

TEST_F(Cats, TaskIdsRepeatForTheSameSpawnPathAndDifferOtherwise) {
  locus::detail::set_cats_miss_source(&injected_misses);
  locus::runtime rt{machine()};
  run(rt, cells_8mb, 3, {});
  // Every range of the tree kept one id over three iterations, and no two ranges share one.
  EXPECT_EQ(rec->paths_of.size(), 255u);
  for (const auto& [r, paths] : rec->paths_of) {
    EXPECT_EQ(paths.size(), 1u) << r.first << ".." << r.second;
  }
  EXPECT_EQ(rec->range_of_path.size(), 255u);
}

TEST_F(Cats, PartitionMatchesEquationOneOverInjectedMisses) {
  locus::detail::set_cats_miss_source(&injected_misses);
  locus::runtime rt{machine()};
  run(rt, cells_8mb, 3, {});
  std::map<range, tier> want;
  expected_tiers({0, cells_8mb}, UINT64_MAX, want);
  int want_inter = 0, want_leaf = 0;
  for (const auto& [r, t] : want) {
    want_inter += t == tier::inter;
    want_leaf += t == tier::leaf;
  }
  ASSERT_EQ(want_inter, 15);  // ranges of 1 MB and more
  ASSERT_EQ(want_leaf, 16);   // the 512 KB halves below them

  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "scheduled"), 1);
  EXPECT_EQ(figure(s, "source"), 1);  // misses
  EXPECT_EQ(figure(s, "profiled_tasks"), 255);
  EXPECT_EQ(figure(s, "inter_tasks"), want_inter);
  EXPECT_EQ(figure(s, "leaf_inter_tasks"), want_leaf);
  EXPECT_EQ(figure(s, "root_bytes"), static_cast<double>(expected_soid({0, cells_8mb})));
  EXPECT_EQ(figure(s, "unknown_tasks"), 0);

  // After the profiled iteration, exactly the expected tasks began with their tier, every one in
  // each iteration.
  for (int it = 1; it < 3; ++it) {
    std::map<range, tier> seen;
    for (const auto& [when, e] : rec->events) {
      if (when != it || e.kind != cats_event::what::task_begin) continue;
      const range r = rec->range_of_path.at(e.path);
      EXPECT_TRUE(seen.emplace(r, e.tier).second) << "began twice: " << r.first;
    }
    std::map<range, tier> upper;
    for (const auto& [r, t] : want) {
      if (t != tier::intra) upper.emplace(r, t);
    }
    EXPECT_EQ(seen, upper) << "iteration " << it;
  }
}

// Which packages began subtrees after the profiled iteration.
std::set<int> subtree_packages() {
  const std::lock_guard hold(rec->lock);
  std::set<int> used;
  for (const auto& [when, e] : rec->events) {
    if (e.kind == cats_event::what::subtree_begin) used.insert(e.package);
  }
  return used;
}

// Every leaf of the iterations after the profiled one ran in the package that began its
// subtree, 16 subtrees in each; returns the packages that ran them.
std::set<int> expect_leaves_in_their_subtrees_package(int iterations) {
  std::set<int> packages_used;
  for (int it = 1; it < iterations; ++it) {
    std::map<range, int> subtree_package;
    for (const auto& [when, e] : rec->events) {
      if (when == it && e.kind == cats_event::what::subtree_begin) {
        subtree_package[rec->range_of_path.at(e.path)] = e.package;
      }
    }
    EXPECT_EQ(subtree_package.size(), 16u) << "iteration " << it;
    for (const auto& [key, worker] : rec->leaf_worker) {
      if (key.first != it) continue;
      const range leaf = key.second;
      const auto owner =
          std::find_if(subtree_package.begin(), subtree_package.end(), [&](const auto& s) {
            return s.first.first <= leaf.first && leaf.second <= s.first.second;
          });
      if (owner == subtree_package.end()) {
        ADD_FAILURE() << "leaf " << leaf.first << " in no subtree, iteration " << it;
        continue;
      }
      EXPECT_EQ(worker / per_package, owner->second)
          << "leaf " << leaf.first << " of subtree " << owner->first.first << " on worker "
          << worker << ", iteration " << it;
      packages_used.insert(owner->second);
    }
  }
  return packages_used;
}

TEST_F(Cats, InterSocketTasksRunOnHeadCoresAndSubtreesStayInOnePackage) {
  locus::detail::set_cats_miss_source(&injected_misses);
  locus::runtime rt{machine()};
  const int iterations = run(rt, cells_8mb, 4, {.leaf_us = 20}, [] {
    return subtree_packages() == std::set<int>{0, 1};
  });
  for (const auto& [when, e] : rec->events) {
    if (when > 0 && e.kind == cats_event::what::task_begin) {
      EXPECT_EQ(e.worker % per_package, 0) << "inter-socket task on worker " << e.worker;
      EXPECT_EQ(e.package, e.worker / per_package);
    }
  }
  const std::set<int> packages_used = expect_leaves_in_their_subtrees_package(iterations);
  EXPECT_EQ(rec->overlaps.load(), 0) << "two subtrees at once in one package";
  // The head of package 1 took subtrees from package 0's pool.
  EXPECT_EQ(packages_used, (std::set<int>{0, 1}));
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "subtrees_run"), (iterations - 1) * 16);
}

// Workers of package 0 whose search for work began in the profiled iteration, and which did not
// run again (the OS's choice) until a subtree of the next one had items queued in package 1,
// take none of them: the schedule has begun, and a subtree runs in one package. The searches are
// held at the worst moment, after their last look at the schedule, before a steal.
TEST_F(Cats, SearchesBegunWhileProfilingTakeNothingFromAnotherPackagesSubtree) {
  locus::detail::set_cats_miss_source(&injected_misses);
  // Which victims the held searches draw is random: where a search ran what it took, about half
  // the rounds took a subtree's item into package 0. A round in which no worker of package 0
  // but its head searched while profiling (the OS, with more workers than CPUs and other tests
  // beside, did not run one then) holds nothing and does not count towards the four.
  constexpr int rounds_with_holds = 4;
  int held_rounds = 0;
  for (int round = 0; round < 6 * rounds_with_holds && held_rounds < rounds_with_holds; ++round) {
    SCOPED_TRACE(round);
    fresh_record();
    rec->hold_searches = true;
    locus::runtime rt{machine()};
    const int iterations = run(rt, cells_8mb, 2, {.leaf_us = 20});
    expect_leaves_in_their_subtrees_package(iterations);
    EXPECT_EQ(figure(rt.stats(), "subtrees_run"), (iterations - 1) * 16);
    if (rec->holding.load() == 0) continue;
    ++held_rounds;
    EXPECT_TRUE(rec->released.load()) << "a held search was not released by a later leaf";
    EXPECT_EQ(rec->back.load(), rec->holding.load());
  }
  EXPECT_EQ(held_rounds, rounds_with_holds) << "too few rounds held a search while profiling";
}

// The faults one leaf's fault_in(leaf_pages) takes on this build (a sanitizer's shadow memory adds
// its own), measured on this thread.
constexpr int leaf_pages = 256;

std::uint64_t faults_of_a_leaf() {
  std::uint64_t most = 0;
  for (int i = 0; i < 3; ++i) {
    rusage before{}, after{};
    ::getrusage(RUSAGE_THREAD, &before);
    fault_in(leaf_pages);
    ::getrusage(RUSAGE_THREAD, &after);
    most = std::max(most, static_cast<std::uint64_t>(after.ru_minflt - before.ru_minflt));
  }
  return most;
}

// The PMU path end to end, with page faults (a software event every Linux counts) in place of
// the L2 misses this machine cannot count: each leaf faults F fresh pages' worth, a range of 2^k
// leaves about F * 2^k, and a cache of 3F faults' worth cuts between 2-leaf and 4-leaf ranges
// (the runtime's own faults, a few per fresh task stack, stay far below the margin of F).
TEST_F(Cats, ThePmuPathCountsWhatItsEventCounts) {
  static const locus::prof::event_spec faults{PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
                                              "software page faults"};
  locus::detail::set_cats_pmu_event(&faults);
  const std::uint64_t per_leaf = faults_of_a_leaf();
  ASSERT_GE(per_leaf, static_cast<std::uint64_t>(leaf_pages));
  const std::string cache = std::to_string(3 * per_leaf * locus::detail::cats_line_bytes);
  locus_test::saved_env cut("LOCUS_CATS_CACHE", cache.c_str());
  locus::runtime rt{machine()};
  run(rt, cells_8mb, 2, {.fault_pages = leaf_pages});
  locus::detail::set_cats_pmu_event(nullptr);
  const locus::stats s = rt.stats();
  if (figure(s, "pmu_workers") == 0) GTEST_SKIP() << "perf_event_open refused a software event";
  EXPECT_EQ(figure(s, "source"), 1);  // misses, as the PMU counted them
  EXPECT_EQ(figure(s, "scheduled"), 1);
  EXPECT_GT(figure(s, "pmu_workers"), 0);
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  // A sanitizer's runtime takes faults of its own on the workers (shadow memory, its allocator),
  // more on some tasks than on others and fewer on reused addresses than the calibration saw:
  // the counts reach the profile, the exact cut and total do not hold.
  EXPECT_GE(figure(s, "inter_tasks"), 1);
#else
  EXPECT_EQ(figure(s, "inter_tasks"), 63);       // ranges of 4 leaves and more
  EXPECT_EQ(figure(s, "leaf_inter_tasks"), 64);  // ranges of 2 leaves
  EXPECT_GE(figure(s, "root_bytes"),
            128.0 * static_cast<double>(per_leaf * locus::detail::cats_line_bytes));
#endif
}

TEST_F(Cats, SizeHintsStandInForThePmu) {
  locus::runtime rt{machine()};
  run(rt, cells_8mb, 2, {.size_hints = true});
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "scheduled"), 1);
  EXPECT_EQ(figure(s, "source"), 2);  // hints
  // A group's hint is its creator's footprint: the 1 MB ranges are inter, the 512 KB ones leaf
  // inter-socket tasks (leaves, with no group, count for nothing).
  EXPECT_EQ(figure(s, "inter_tasks"), 15);
  EXPECT_EQ(figure(s, "leaf_inter_tasks"), 16);
}

TEST_F(Cats, DeclaredBytesStandInForThePmuAndHints) {
  locus::runtime rt{machine()};
  run(rt, cells_8mb, 2, {.declare = true});
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "scheduled"), 1);
  EXPECT_EQ(figure(s, "source"), 3);  // declared
  EXPECT_EQ(figure(s, "root_bytes"), static_cast<double>(cells_8mb) * cell_bytes);
  // 1 MB exactly is not below the cache: the same cut as Eq. 1 with misses.
  EXPECT_EQ(figure(s, "inter_tasks"), 15);
  EXPECT_EQ(figure(s, "leaf_inter_tasks"), 16);
}

TEST_F(Cats, WithoutAFootprintOrCpuBoundItRunsAsWs) {
  {
    locus::runtime rt{machine()};
    run(rt, cells_8mb, 3, {});
    const locus::stats s = rt.stats();
    EXPECT_EQ(figure(s, "as_ws"), 1);
    EXPECT_EQ(figure(s, "source"), 0);
  }
  {
    locus_test::saved_env bound("LOCUS_CATS_BOUND", "cpu");
    locus::runtime rt{machine()};
    // As ws: stolen across packages, and no tier decisions reported.
    const auto steals_across = [&rt] {
      std::uint64_t across = 0;
      for (const auto& w : rt.stats().workers) across += w.steals_by_level.back();
      return across;
    };
    run(rt, cells_8mb, 3, {.size_hints = true, .leaf_us = 20}, [&] { return steals_across() > 0; });
    const locus::stats s = rt.stats();
    EXPECT_EQ(figure(s, "as_ws"), 1);
    EXPECT_EQ(figure(s, "cpu_bound"), 1);
    EXPECT_GT(steals_across(), 0u);
  }
  for (const auto& [when, e] : rec->events) {
    ADD_FAILURE() << "event in iteration " << when << " on worker " << e.worker;
  }
}

// Its verdict ("cats runs as ws: ...") goes to stderr when LOCUS_PRINT_CONFIG is true, not when
// the variable is merely set.
TEST_F(Cats, ItsVerdictIsPrintedOnlyWhenPrintConfigIsTrue) {
  for (const char* value : {"0", "1"}) {
    const locus_test::saved_env print("LOCUS_PRINT_CONFIG", value);
    testing::internal::CaptureStderr();
    {
      locus::runtime rt{machine()};
      run(rt, cells_8mb, 3, {});
    }
    const std::string printed = testing::internal::GetCapturedStderr();
    EXPECT_EQ(printed.find("cats runs as ws: no footprint") != std::string::npos,
              std::string(value) == "1")
        << "LOCUS_PRINT_CONFIG=" << value << ":\n"
        << printed;
  }
}

TEST_F(Cats, AProgramThatTouchesLittleDataIsCpuBound) {
  locus_test::saved_env bound("LOCUS_CATS_BOUND", "auto");
  locus::runtime rt{machine()};
  // 1 KB hinted per group of 2 leaves, each spinning for 50 us: far below 2 bytes per ns.
  const auto spin = [] { spin_for(50); };
  for (int it = 0; it < 2; ++it) {
    rt.exec([&] {
      locus::task_group all;
      for (int i = 0; i < 64; ++i) {
        all.run([&] {
          locus::task_group pair(locus::size_hint{1024});
          pair.run(spin);
          pair.run(spin);
          pair.wait();
        });
      }
      all.wait();
    });
  }
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "cpu_bound"), 1);
  EXPECT_EQ(figure(s, "as_ws"), 1);
  EXPECT_LT(figure(s, "bytes_per_ns"), 0.1);
}

TEST_F(Cats, ALaterIterationOfAnotherShapeStillRunsCorrectly) {
  locus::detail::set_cats_miss_source(&injected_misses);
  locus::runtime rt{machine()};
  run(rt, cells_8mb, 2, {});
  // Three quarters as many cells: the tree below the root has other ranges, and its tasks ids
  // the profile never saw below the first split that matches.
  run(rt, cells_8mb / 4 * 3, 2, {});
  run(rt, cells_8mb / 2 + 3 * leaf_cells, 2, {});
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "scheduled"), 1);
  EXPECT_EQ(rec->overlaps.load(), 0);
}

TEST_F(Cats, ASubtreeWithAPlaceHintRunsInThatPlacesPackage) {
  locus::detail::set_cats_miss_source(&injected_misses);
  locus::runtime rt{machine()};
  ASSERT_EQ(rt.num_places(), 2);
  // Two parts of 512 KB under a root of 1 MB: one subtree for each package, part 0 hinted to
  // place 1 and part 1 to place 0 (the least loaded package would take them the other way).
  constexpr int n = cells_8mb / 8;
  std::vector<std::int32_t> cells(static_cast<std::size_t>(n), 1);
  for (int it = 0; it < 4; ++it) {
    {
      const std::lock_guard hold(rec->lock);
      rec->iteration = it;
    }
    const std::int64_t sum = rt.exec([&] {
      std::int64_t got[2] = {};
      locus::task_group tg;
      for (int k = 0; k < 2; ++k) {
        tg.run(
            [&, k] {
              got[k] = visit(cells, {k * n / 2, (k + 1) * n / 2}, {});
            },
            locus::place{1 - k});
      }
      tg.wait();
      return got[0] + got[1];
    });
    EXPECT_EQ(sum, n);
  }
  int subtrees = 0;
  for (const auto& [when, e] : rec->events) {
    if (e.kind != cats_event::what::subtree_begin) continue;
    ++subtrees;
    const int part = rec->range_of_path.at(e.path).first / (n / 2);
    EXPECT_EQ(e.package, 1 - part) << "part " << part << " in iteration " << when;
  }
  EXPECT_EQ(subtrees, 3 * 2);
}

TEST_F(Cats, AnotherProgramIsProfiledAgain) {
  locus::detail::set_cats_miss_source(&injected_misses);
  locus::runtime rt{machine()};
  run(rt, cells_8mb, 2, {});
  EXPECT_EQ(figure(rt.stats(), "profiles"), 1);
  rt.relearn();
  {
    const std::lock_guard hold(rec->lock);
    rec->range_of_path.clear();  // the same ids name other ranges now
  }
  run(rt, cells_8mb / 2, 2, {});
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "profiles"), 2);
  EXPECT_EQ(figure(s, "scheduled"), 1);
  // The second program's partition: 4 MB at the root, 1 MB and more above the cut.
  EXPECT_EQ(figure(s, "inter_tasks"), 7);
  EXPECT_EQ(figure(s, "leaf_inter_tasks"), 8);
}

TEST_F(Cats, ARootOfMostlyUnknownTasksMakesTheNextOneProfiled) {
  locus::detail::set_cats_miss_source(&injected_misses);
  locus::runtime rt{machine()};
  run(rt, cells_8mb, 2, {});
  // Now the root spawns three empty tasks, then eight parts: the parts have ids the profile
  // lacks (it knows the root's first two children).
  {
    const std::lock_guard hold(rec->lock);
    rec->range_of_path.clear();
  }
  std::vector<std::int32_t> cells(static_cast<std::size_t>(cells_8mb), 1);
  for (int it = 0; it < 2; ++it) {
    const std::int64_t sum = rt.exec([&] {
      std::int64_t parts[8] = {};
      locus::task_group tg;
      for (int k = 0; k < 3; ++k) tg.run([] {});
      for (int k = 0; k < 8; ++k) {
        tg.run([&, k] {
          parts[k] = visit(cells, {k * cells_8mb / 8, (k + 1) * cells_8mb / 8}, {});
        });
      }
      tg.wait();
      std::int64_t all = 0;
      for (const std::int64_t p : parts) all += p;
      return all;
    });
    EXPECT_EQ(sum, cells_8mb);
  }
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "profiles"), 2);
  // The eight parts of 1 MB are above the cut, their halves and the three empty tasks (nothing
  // touched, under a root that does not fit) the subtrees.
  EXPECT_EQ(figure(s, "inter_tasks"), 9);
  EXPECT_EQ(figure(s, "leaf_inter_tasks"), 16 + 3);
}

TEST_F(Cats, NextIterationEndsTheProfiledIterationInsideOneRoot) {
  locus::detail::set_cats_miss_source(&injected_misses);
  locus::runtime rt{machine()};
  std::vector<std::int32_t> cells(static_cast<std::size_t>(cells_8mb), 1);
  rt.exec([&] {
    for (int it = 0; it < 3; ++it) {
      {
        const std::lock_guard hold(rec->lock);
        rec->iteration = it;
      }
      // The loop's own task is the root: its children are the iteration's tree.
      locus::task_group tg;
      std::int64_t sum = 0;
      tg.run([&] { sum = visit(cells, {0, cells_8mb}, {}); });
      tg.wait();
      EXPECT_EQ(sum, cells_8mb);
      locus::next_iteration();
    }
  });
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "scheduled"), 1);
  int subtrees_after = 0;
  for (const auto& [when, e] : rec->events) {
    EXPECT_GE(when, 1) << "a decision during the profiled iteration";
    subtrees_after += e.kind == cats_event::what::subtree_begin;
  }
  EXPECT_EQ(subtrees_after, 2 * 16);
  EXPECT_EQ(rec->overlaps.load(), 0);
}

// The creator's own work between its spawns and its wait is its own, not that of the child its
// wait runs: a root that declares 2 MB there leaves its two 4 KB children below the cut. One
// worker, so that the wait runs both children (queued while profiling) itself.
TEST_F(Cats, ACreatorsWorkBeforeItsWaitIsNotTheChildItsWaitRuns) {
  locus_test::saved_env source("LOCUS_CATS_SOURCE", "declared");
  locus::runtime rt{locus::options{
      .sched = "cats", .workers = 1, .topology = "pack:1 l3:1(size=1MB) l2:1(size=256KB) pu:1"}};
  std::vector<std::byte> big(2 << 20), small(8 << 10);
  for (int it = 0; it < 2; ++it) {
    rt.exec([&] {
      locus::task_group tg;
      for (std::size_t c = 0; c < 2; ++c) {
        tg.run([&small, c] { locus::locality::touch_read(small.data() + c * 4096, 4096); });
      }
      locus::locality::touch_read(big.data(), big.size());
      tg.wait();
    });
  }
  const locus::stats s = rt.stats();
  EXPECT_EQ(figure(s, "source"), 3);
  EXPECT_EQ(figure(s, "scheduled"), 1);
  EXPECT_EQ(figure(s, "inter_tasks"), 1);  // the root
  EXPECT_EQ(figure(s, "leaf_inter_tasks"), 2);
}

// §3.5 where instructions are counted with the misses: a program whose tasks mostly miss less
// than LOCUS_CATS_CMPI times per instruction is CPU-bound, whatever its bytes per nanosecond
// say, and one whose tasks miss more is not.
std::uint64_t a_billion_instructions(std::uint64_t) {
  return 1'000'000'000;
}
std::uint64_t a_hundred_instructions(std::uint64_t) {
  return 100;
}

TEST_F(Cats, MissesPerInstructionDecideWhetherItIsCpuBound) {
  locus_test::saved_env bound("LOCUS_CATS_BOUND", "auto");
  locus::detail::set_cats_miss_source(&injected_misses);
  {
    locus::detail::set_cats_instruction_source(&a_billion_instructions);
    locus::runtime rt{machine()};
    run(rt, cells_8mb, 2, {});
    const locus::stats s = rt.stats();
    EXPECT_EQ(figure(s, "cpu_bound"), 1);
    EXPECT_EQ(figure(s, "as_ws"), 1);
    EXPECT_GT(figure(s, "cmpi_tasks"), 100);
    EXPECT_EQ(figure(s, "cpu_bound_tasks"), figure(s, "cmpi_tasks"));
    EXPECT_LT(figure(s, "cmpi"), 1e-5);
  }
  {
    // Leaves that spin for 200 us each touch 64 KB: 0.3 bytes per ns, CPU-bound by that measure.
    locus::detail::set_cats_instruction_source(&a_hundred_instructions);
    locus::runtime rt{machine()};
    run(rt, cells_8mb / 8, 2, {.leaf_us = 200});
    const locus::stats s = rt.stats();
    EXPECT_LT(figure(s, "bytes_per_ns"), default_bytes_per_ns_threshold);
    EXPECT_EQ(figure(s, "cpu_bound"), 0);
    EXPECT_EQ(figure(s, "scheduled"), 1);
    EXPECT_EQ(figure(s, "cpu_bound_tasks"), 0);
    EXPECT_GE(figure(s, "cmpi"), 0.01);
  }
  {
    // A threshold above every task's: CPU-bound.
    locus::detail::set_cats_instruction_source(&a_hundred_instructions);
    locus_test::saved_env threshold("LOCUS_CATS_CMPI", "100");
    locus::runtime rt{machine()};
    run(rt, cells_8mb / 8, 2, {});
    EXPECT_EQ(figure(rt.stats(), "cpu_bound"), 1);
  }
}

TEST_F(Cats, BadSettingsAreRejectedByName) {
  for (const auto& [name, value] :
       {std::pair{"LOCUS_CATS_SOURCE", "pmu2"}, std::pair{"LOCUS_CATS_BOUND", "maybe"},
        std::pair{"LOCUS_CATS_CACHE", "0"}, std::pair{"LOCUS_CATS_CMPI", "-1"}}) {
    locus_test::saved_env bad(name, value);
    try {
      locus::runtime rt{machine()};
      ADD_FAILURE() << name << "=" << value << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      if (std::string_view(name) == "LOCUS_CATS_CMPI") {
        EXPECT_NE(std::string(e.what()).find("a positive number"), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
