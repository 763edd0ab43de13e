// The core's capabilities for scheduler policies, each exercised through a policy as a new
// scheduler would use it (tests/test_policies.hpp): chunk steals, replaced queues, deliveries
// that wake only their target, victims by topology level, work run by several workers at once
// (gangs), and the place hints and spawn paths the core carries for every policy.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fib.hpp"
#include "locus/locus.hpp"
#include "sched/gang.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"
#include "test_policies.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;
using locus_test::fib;

constexpr const char* synthetic16 = "pack:2 l3:2(size=4MB) l2:4(size=256KB) core:1 pu:1";

// ---- chunk steals

struct chunk_case {
  const char* sched;
  std::size_t chunk;
};

class ChunkSteal : public ::testing::TestWithParam<chunk_case> {};

// Worker 0's root queues ten tasks and spins while worker 1 takes one chunk of k: worker 1 runs
// the oldest at once and queues the other k - 1 in their order, so it runs them newest first;
// worker 0 runs the rest when it joins, newest first.
template <bool Locked>
void check_chunk(std::size_t k) {
  using policy = locus_test::chunk_once_policy<Locked>;
  policy::armed = false;
  policy::done = false;
  policy::chunk = k;
  policy::taken = 0;
  locus::runtime rt{locus::options{.sched = Locked ? "test-chunk-once-locked" : "test-chunk-once",
                                   .workers = 2,
                                   .topology = "pack:1 l3:1(size=8MB) l2:2(size=1MB) pu:1"}};
  constexpr int tasks = 10;
  std::mutex lock;
  std::vector<std::pair<int, int>> ran;  // (worker, task) in the order they ran
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < tasks; ++i) {
      tg.run(
          [&, i] {
            const std::lock_guard hold(lock);
            ran.emplace_back(locus::this_worker(), i);
          },
          locus::parent_first);
    }
    policy::armed.store(true, std::memory_order_release);
    while (!policy::done.load(std::memory_order_acquire)) std::this_thread::yield();
    // Worker 1's share must have run before worker 0 joins and takes the rest.
    for (;;) {
      {
        const std::lock_guard hold(lock);
        if (ran.size() == k) break;
      }
      std::this_thread::yield();
    }
    tg.wait();
  });
  ASSERT_EQ(policy::taken.load(), k);
  ASSERT_EQ(ran.size(), static_cast<std::size_t>(tasks));
  std::vector<std::pair<int, int>> expected;
  expected.emplace_back(1, 0);
  for (int i = static_cast<int>(k) - 1; i >= 1; --i) expected.emplace_back(1, i);
  for (int i = tasks - 1; i >= static_cast<int>(k); --i) expected.emplace_back(0, i);
  EXPECT_EQ(ran, expected);
  const locus::stats s = rt.stats();
  std::uint64_t steals = 0;
  for (auto n : s.workers[1].steals_by_level) steals += n;
  EXPECT_EQ(steals, 1u);
  EXPECT_EQ(s.workers[1].stolen_items, k);
  EXPECT_EQ(s.workers[0].stolen_items, 0u);
}

TEST_P(ChunkSteal, MovesExactlyKItemsInOrder) {
  const chunk_case c = GetParam();
  if (std::string(c.sched) == "test-chunk-once") {
    check_chunk<false>(c.chunk);
  } else {
    check_chunk<true>(c.chunk);
  }
}

INSTANTIATE_TEST_SUITE_P(Queues, ChunkSteal,
                         ::testing::Values(chunk_case{"test-chunk-once", 1},
                                           chunk_case{"test-chunk-once", 4},
                                           chunk_case{"test-chunk-once-locked", 1},
                                           chunk_case{"test-chunk-once-locked", 4}),
                         [](const auto& info) {
                           return std::string(info.param.chunk == 1 ? "one" : "four") +
                                  (std::string(info.param.sched).ends_with("locked") ? "_locked"
                                                                                     : "_deque");
                         });

// ---- deliveries wake their target only

// A sleeper with a root running wakes every 2 ms to look again, which is not a wake-up; a
// delivery that finds its target between two such naps runs without waking it. So the scenario
// repeats until a delivery does wake its target; no delivery may wake another worker.
TEST(Delivery, WakesItsTargetAndNoOtherSleeper) {
  locus::runtime rt{locus::options{.sched = "test-deliver",
                                   .workers = 4,
                                   .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) pu:1"}};
  auto& impl = rt.impl();
  bool target_woken = false;
  int deliveries = 0;
  rt.exec([&] {
    for (int attempt = 0; attempt < 50 && !target_woken; ++attempt) {
      // The root resumes where its child finished: it moves to the target after each attempt.
      const int me = locus::this_worker();
      const int target = (me + 2) % 4;
      // Nobody steals: the other three workers go to sleep until something is delivered.
      const auto all_asleep = [&] {
        for (int i = 0; i < 4; ++i) {
          if (i != me && !impl.at(i).asleep.load()) return false;
        }
        return true;
      };
      const auto deadline = std::chrono::steady_clock::now() + 30s;
      while (!all_asleep() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
      }
      ASSERT_TRUE(all_asleep());
      std::vector<std::uint64_t> before, after;
      for (const auto& w : rt.stats().workers) before.push_back(w.wakeups);
      int ran_on = -1;
      locus::task_group tg;
      tg.run([&] { ran_on = locus::this_worker(); }, locus::work_hint{target + 1.0});
      tg.wait();
      ++deliveries;
      for (const auto& w : rt.stats().workers) after.push_back(w.wakeups);
      EXPECT_EQ(ran_on, target);
      for (int i = 0; i < 4; ++i) {
        const auto woken = after[static_cast<std::size_t>(i)] - before[static_cast<std::size_t>(i)];
        if (i == target) {
          EXPECT_LE(woken, 1u);
          target_woken = woken == 1;
        } else if (i != me) {
          EXPECT_EQ(woken, 0u) << "worker " << i << " was woken by a delivery to " << target;
        }
      }
    }
  });
  EXPECT_TRUE(target_woken) << "no delivery of " << deliveries << " woke its sleeping target";
  EXPECT_EQ(rt.stats().total().pushes, static_cast<std::uint64_t>(deliveries));
}

// ---- non-trivial joins

// One group whose continuation another worker must take: the child waits for its parent to go
// on.
void take_the_continuation() {
  std::atomic<bool> parent_ran{false};
  locus::task_group tg;
  tg.run([&] {
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (!parent_ran.load() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::yield();
    }
  });
  parent_ran = true;
  tg.wait();
}

// A policy with group_end and no group_begin keeps the plain spawn path and sees exactly the
// joins of groups whose continuation a scheduler loop took: one per such group (fib spawns one
// child per group), none on one worker, where nothing is taken.
TEST(NonTrivialJoin, GroupEndSeesEveryGroupWhoseContinuationWasTakenAndNoOther) {
  {
    locus_test::sync_policy::ends = 0;
    locus::runtime rt{locus::options{.sched = "test-sync", .workers = 1}};
    EXPECT_EQ(rt.exec([] { return fib(16); }), 987);
    EXPECT_EQ(locus_test::sync_policy::ends.load(), 0u);
    EXPECT_TRUE(rt.impl().at(0).plain_spawn);
  }
  locus_test::sync_policy::ends = 0;
  locus::runtime rt{locus::options{
      .sched = "test-sync", .workers = 4, .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) pu:1"}};
  for (int i = 0; i < 20; ++i) EXPECT_EQ(rt.exec([] { return fib(16); }), 987);
  rt.exec(take_the_continuation);
  const auto total = rt.stats().total();
  std::uint64_t steals = 0;
  for (auto n : total.steals_by_level) steals += n;
  EXPECT_GE(steals + total.local_resumes, 1u);
  EXPECT_EQ(locus_test::sync_policy::ends.load(), steals + total.local_resumes);
}

// A task group_end moves goes to the worker it names, or where route() puts it; group_end is
// called again where it resumes, and the core counts a migration for each move.
template <bool Routed>
void check_moves() {
  locus_test::moves.clear();
  locus::runtime rt{locus::options{.sched = Routed ? "test-move-routed" : "test-move",
                                   .workers = 4,
                                   .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) pu:1"}};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(rt.exec([] { return fib(14); }), 377);
  rt.exec(take_the_continuation);
  const std::lock_guard hold(locus_test::moves_lock);
  ASSERT_FALSE(locus_test::moves.empty());
  for (const auto& m : locus_test::moves) {
    EXPECT_EQ(m.ended_on, Routed ? m.asked_on : (m.asked_on + 1) % 4);
  }
  EXPECT_EQ(rt.stats().total().migrations, locus_test::moves.size());
}

TEST(NonTrivialJoin, GroupEndMovesTheTaskToTheWorkerItNames) {
  check_moves<false>();
}

TEST(NonTrivialJoin, RouteCanPlaceATaskThatGroupEndMoves) {
  check_moves<true>();
}

// ---- victims by level

TEST(Victims, DrawnAtTheAskedLevelOrByWeightsOfLevels) {
  locus_test::levels_policy::drawn.clear();
  locus_test::levels_policy::counts.clear();
  locus_test::levels_policy::weighted.clear();
  locus::runtime rt{locus::options{.sched = "test-levels", .workers = 16, .topology = synthetic16}};
  rt.exec([] {});
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  for (;;) {
    {
      const std::lock_guard hold(locus_test::levels_policy::lock);
      if (!locus_test::levels_policy::drawn.empty()) break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(1ms);
  }
  const auto& t = rt.impl().topology;
  const auto& drawn = locus_test::levels_policy::drawn;
  const auto& counts = locus_test::levels_policy::counts;
  ASSERT_EQ(drawn.size(), static_cast<std::size_t>(t.max_distance() + 1));
  int total = 0;
  for (std::size_t level = 0; level < drawn.size(); ++level) {
    std::set<int> seen;
    for (const int v : drawn[level]) {
      if (counts[level] == 0) {
        EXPECT_EQ(v, -1) << "level " << level;
        continue;
      }
      ASSERT_GE(v, 0);
      EXPECT_EQ(t.distance(0, v), static_cast<int>(level)) << "victim " << v;
      seen.insert(v);
    }
    // 200 draws among at most 8 workers: each one shows up.
    EXPECT_EQ(static_cast<int>(seen.size()), counts[level]) << "level " << level;
    total += counts[level];
  }
  EXPECT_EQ(total, 15);
  EXPECT_EQ(counts[0], 0);
  // Weighted by level: workers 1-3 never; 4-7 weigh 3 each, 8-15 weigh 1 each, so the nearer
  // group comes 12 : 8 (each worker of a group about equally often).
  const auto& weighted = locus_test::levels_policy::weighted;
  ASSERT_EQ(weighted.size(), 10000u);
  std::vector<int> per_worker(16, 0);
  for (const int v : weighted) {
    ASSERT_GE(v, 4);
    ASSERT_LT(v, 16);
    ++per_worker[static_cast<std::size_t>(v)];
  }
  int near = 0, far = 0;
  for (int v = 4; v < 8; ++v) near += per_worker[static_cast<std::size_t>(v)];
  for (int v = 8; v < 16; ++v) far += per_worker[static_cast<std::size_t>(v)];
  EXPECT_NEAR(static_cast<double>(near) / far, 1.5, 0.15);
  for (int v = 4; v < 16; ++v) {
    const double expected = v < 8 ? 10000.0 * 3 / 20 : 10000.0 / 20;
    EXPECT_NEAR(per_worker[static_cast<std::size_t>(v)], expected, expected * 0.25)
        << "worker " << v;
  }
}

// ---- gangs

// Each member records where it ran; a synchronous gang's members also wait for one another.
class recording_gang final : public locus::detail::gang_task {
 public:
  recording_gang(int width, bool synchronous)
      : gang_task(width), synchronous_(synchronous), where_(static_cast<std::size_t>(width)) {
    for (auto& w : where_) w = -1;
  }
  void run_member(int index) override {
    where_[static_cast<std::size_t>(index)].store(locus::this_worker());
    runs_.fetch_add(1);
    if (!synchronous_) return;
    arrived_.fetch_add(1);
    while (arrived_.load() < width()) std::this_thread::yield();
  }
  std::vector<int> where() const {
    std::vector<int> w;
    for (const auto& x : where_) w.push_back(x.load());
    return w;
  }
  int runs() const { return runs_.load(); }

 private:
  bool synchronous_;
  std::vector<std::atomic<int>> where_;
  std::atomic<int> runs_{0};
  std::atomic<int> arrived_{0};
};

// Runs gangs as the children of one group of a root task, and joins them.
template <class Make>
void run_gangs(locus::runtime& rt, int count, Make make) {
  rt.exec([&] {
    locus::detail::group_state g;
    for (int i = 0; i < count; ++i) locus::detail::spawn_parent_first(g, make(i));
    locus::detail::wait(g);
  });
}

// A synchronous gang that reports, when it is destroyed (after its last member returned),
// where each member ran.
class reporting_gang final : public locus::detail::gang_task {
 public:
  reporting_gang(int width, std::vector<std::vector<int>>& out, std::mutex& lock)
      : gang_task(width), out_(out), lock_(lock), seen_(static_cast<std::size_t>(width), -1) {}
  ~reporting_gang() override {
    const std::lock_guard hold(lock_);
    out_.push_back(seen_);
  }
  void run_member(int index) override {
    seen_[static_cast<std::size_t>(index)] = locus::this_worker();
    arrived_.fetch_add(1);
    while (arrived_.load() < width()) std::this_thread::yield();
  }

 private:
  std::vector<std::vector<int>>& out_;
  std::mutex& lock_;
  std::vector<int> seen_;
  std::atomic<int> arrived_{0};
};

TEST(Gang, RunsOnceOnEachOfItsWorkers) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 16, .topology = synthetic16}};
  std::vector<std::vector<int>> where;
  std::mutex lock;
  run_gangs(rt, 2, [&](int i) {
    auto g = std::make_unique<reporting_gang>(i == 0 ? 3 : 4, where, lock);
    if (i == 0) g->workers = {6, 1, 13};  // member i on workers[i]
    return g;
  });
  ASSERT_EQ(where.size(), 2u);
  std::sort(where.begin(), where.end(),
            [](const auto& a, const auto& b) { return a.size() < b.size(); });
  EXPECT_EQ(where[0], (std::vector<int>{6, 1, 13}));
  // Chosen by the worker that ran the gang: four workers of one L3 (workers 4k .. 4k + 3).
  const std::vector<int>& chosen = where[1];
  ASSERT_EQ(chosen.size(), 4u);
  for (std::size_t i = 1; i < chosen.size(); ++i)
    EXPECT_EQ(chosen[i], chosen[0] + static_cast<int>(i));
  EXPECT_EQ(chosen[0] % 4, 0);
  const auto total = rt.stats().total();
  EXPECT_GE(total.pushes, 2u + 3u);  // members sent to workers other than the dispatcher
}

TEST(Gang, DefaultWorkersShareTheSmallestPartOfTheMachineThatHoldsThem) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 16, .topology = synthetic16}};
  const auto& impl = rt.impl();
  using locus::detail::gang_workers;
  EXPECT_EQ(gang_workers(impl, 5, 1), (std::vector<int>{5}));
  EXPECT_EQ(gang_workers(impl, 5, 2), (std::vector<int>{4, 5}));  // an L3 of 4
  EXPECT_EQ(gang_workers(impl, 6, 3), (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(gang_workers(impl, 7, 3), (std::vector<int>{5, 6, 7}));  // moved left, within the L3
  EXPECT_EQ(gang_workers(impl, 5, 8), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));  // a package
  EXPECT_EQ(gang_workers(impl, 9, 5), (std::vector<int>{8, 9, 10, 11, 12}));
  EXPECT_EQ(gang_workers(impl, 15, 16).size(), 16u);
  EXPECT_THROW(gang_workers(impl, 0, 17), std::invalid_argument);
}

TEST(Gang, BadWidthOrWorkersFailTheGangNotTheProgram) {
  EXPECT_THROW(recording_gang(0, false), std::invalid_argument);
  locus::runtime rt{locus::options{
      .sched = "ws", .workers = 4, .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) pu:1"}};
  for (const std::vector<int>& bad :
       {std::vector<int>{1, 1}, std::vector<int>{0, 4}, std::vector<int>{2}}) {
    bool threw = false;
    rt.exec([&] {
      locus::detail::group_state g;
      auto gang = std::make_unique<recording_gang>(2, false);
      gang->workers = bad;
      locus::detail::spawn_parent_first(g, std::move(gang));
      try {
        locus::detail::wait(g);
      } catch (const std::invalid_argument&) {
        threw = true;
      }
    });
    EXPECT_TRUE(threw);
  }
}

// Synchronous gangs of every width, half on random workers and half where their dispatcher
// chooses, race from all workers: any two that share workers must reach all of them in the same
// order, or members wait for each other forever. A watchdog turns a deadlock into a failure.
TEST(Gang, RacingGangsOfEveryWidthNeverDeadlock) {
  constexpr int workers = 16;
  constexpr int gangs = 1000;
  locus::runtime rt{locus::options{.sched = "ws", .workers = workers, .topology = synthetic16}};
  std::optional<locus_test::watchdog> guard;
  guard.emplace("Gang.RacingGangsOfEveryWidthNeverDeadlock: gangs waiting for their members", 240s);
  std::atomic<std::uint64_t> member_runs{0};
  std::uint64_t expected_runs = 0;
  std::mt19937 rng(12345);
  std::vector<std::unique_ptr<recording_gang>> made;
  for (int i = 0; i < gangs; ++i) {
    const int width = 1 + static_cast<int>(rng() % workers);
    auto g = std::make_unique<recording_gang>(width, true);
    if (i % 2 == 0) {
      std::vector<int> all(workers);
      for (int w = 0; w < workers; ++w) all[static_cast<std::size_t>(w)] = w;
      std::shuffle(all.begin(), all.end(), rng);
      g->workers.assign(all.begin(), all.begin() + width);
    }
    expected_runs += static_cast<std::uint64_t>(width);
    made.push_back(std::move(g));
  }
  class counting_gang final : public locus::detail::gang_task {
   public:
    counting_gang(recording_gang& inner, std::atomic<std::uint64_t>& runs)
        : gang_task(inner.width()), inner_(inner), runs_(runs) {
      workers = inner.workers;
    }
    void run_member(int index) override {
      inner_.run_member(index);
      runs_.fetch_add(1);
    }

   private:
    recording_gang& inner_;
    std::atomic<std::uint64_t>& runs_;
  };
  rt.exec([&] {
    locus::detail::group_state g;
    for (auto& inner : made) {
      locus::detail::spawn_parent_first(g, std::make_unique<counting_gang>(*inner, member_runs));
    }
    locus::detail::wait(g);
  });
  guard.reset();
  EXPECT_EQ(member_runs.load(), expected_runs);
  for (const auto& inner : made) {
    const std::vector<int> where = inner->where();
    const std::set<int> distinct(where.begin(), where.end());
    EXPECT_EQ(distinct.size(), where.size());
    if (!inner->workers.empty()) {
      EXPECT_EQ(where, inner->workers);
    }
  }
}

// ---- place hints and spawn paths, carried for every policy

class Carried : public ::testing::TestWithParam<const char*> {};

TEST_P(Carried, PlaceHintsAreInheritedUntilChangedAndClearedByAnyPlace) {
  locus::runtime rt{locus::options{
      .sched = GetParam(), .workers = 4, .topology = "pack:4 l3:1(size=8MB) l2:1(size=1MB) pu:1"}};
  std::atomic<int> root = -9, child = -9, grandchild = -9, cleared = -9, below_cleared = -9,
                   queued = -9, below_queued = -9, after_spawn = -9;
  rt.exec([&] {
    root = locus::this_task_place();
    locus::task_group tg;
    tg.run(
        [&] {
          child = locus::this_task_place();
          locus::task_group inner;
          inner.run([&] {
            grandchild = locus::this_task_place();
            locus::task_group deeper;
            deeper.run(
                [&] {
                  cleared = locus::this_task_place();
                  locus::task_group last;
                  last.run([&] { below_cleared = locus::this_task_place(); });
                  last.wait();
                },
                locus::any_place);
            deeper.wait();
          });
          inner.run(
              [&] {
                queued = locus::this_task_place();
                locus::task_group last;
                last.run([&] { below_queued = locus::this_task_place(); }, locus::parent_first);
                last.wait();
              },
              locus::place{1}, locus::parent_first);
          inner.wait();
          after_spawn = locus::this_task_place();
        },
        locus::place{3});
    tg.wait();
  });
  EXPECT_EQ(root, -1);
  EXPECT_EQ(child, 3);
  EXPECT_EQ(grandchild, 3);
  EXPECT_EQ(cleared, -1);
  EXPECT_EQ(below_cleared, -1);
  EXPECT_EQ(queued, 1);
  EXPECT_EQ(below_queued, 1);
  EXPECT_EQ(after_spawn, 3);  // a task's own place does not change when it spawns
  EXPECT_EQ(locus::this_task_place(), -1);
}

TEST_P(Carried, SpawnPathsRepeatWithTheForksAndTellSiblingsApart) {
  locus::runtime rt{locus::options{
      .sched = GetParam(), .workers = 4, .topology = "pack:2 l3:1(size=8MB) l2:2(size=1MB) pu:1"}};
  // paths[iteration] = {root, child 0, child 1, child 2, grandchild of child 1, second group's
  // child 0, the reused group's child}
  std::vector<std::vector<std::uint64_t>> paths;
  std::vector<std::uint64_t> reused_paths;
  std::mutex lock;
  for (int exec = 0; exec < 2; ++exec) {
    rt.exec([&] {
      locus::task_group reused;  // one group for every iteration: it goes on counting
      for (int iteration = 0; iteration < 3; ++iteration) {
        std::vector<std::atomic<std::uint64_t>> seen(6);
        seen[0] = locus::this_task_path();
        locus::task_group tg;
        for (int c = 0; c < 3; ++c) {
          tg.run(
              [&, c] {
                seen[static_cast<std::size_t>(1 + c)] = locus::this_task_path();
                if (c == 1) {
                  locus::task_group inner;
                  inner.run([&] { seen[4] = locus::this_task_path(); }, locus::parent_first);
                  inner.wait();
                }
              },
              locus::work_hint{1.0});
        }
        tg.wait();
        locus::task_group other;
        other.run([&] { seen[5] = locus::this_task_path(); });
        other.wait();
        std::atomic<std::uint64_t> from_reused{0};
        reused.run([&] { from_reused = locus::this_task_path(); });
        reused.wait();
        const std::lock_guard hold(lock);
        paths.emplace_back();
        for (auto& x : seen) paths.back().push_back(x.load());
        reused_paths.push_back(from_reused.load());
      }
    });
  }
  ASSERT_EQ(paths.size(), 6u);
  for (const auto& p : paths) EXPECT_EQ(p, paths[0]);
  const std::set<std::uint64_t> distinct(paths[0].begin(), paths[0].begin() + 5);
  EXPECT_EQ(distinct.size(), 5u);  // root, three siblings and a grandchild all differ
  // The first child of another group of the same task is at the same position: the same path.
  EXPECT_EQ(paths[0][5], paths[0][1]);
  // A reused group numbers on: each iteration's child differs, and each exec repeats them.
  ASSERT_EQ(reused_paths.size(), 6u);
  EXPECT_EQ(reused_paths[0], paths[0][1]);
  EXPECT_EQ(std::set<std::uint64_t>(reused_paths.begin(), reused_paths.begin() + 3).size(), 3u);
  EXPECT_EQ(std::vector<std::uint64_t>(reused_paths.begin(), reused_paths.begin() + 3),
            std::vector<std::uint64_t>(reused_paths.begin() + 3, reused_paths.end()));
  EXPECT_EQ(locus::this_task_path(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Carried,
                         ::testing::Values("ws", "adws", "ml-adws", "ml-ws", "hws", "cats", "tao",
                                           "test-mixed"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
