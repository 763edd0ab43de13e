// hws (seed 004 §3, §5.1): spawns queue their child until the worker's queue holds the bound and
// run it serially from then on; idle workers try the levels of the machine tree nearest first,
// as many times per level as configured; steals take the configured chunk inside the top level
// and half of the victim's public items across it; bad settings are rejected by name; and
// fork-join programs give their serial answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fib.hpp"
#include "locus/locus.hpp"
#include "saved_env.hpp"
#include "sched/hws_audit.hpp"
#include "sched/runtime_impl.hpp"

namespace {

using namespace std::chrono_literals;
using locus::detail::hws_steal_event;
using locus_test::saved_env;

constexpr const char* sixteen = "pack:2 l3:2 core:4 pu:1";
constexpr const char* four = "pack:2 core:2 pu:1";

const std::initializer_list<const char*> hws_variables = {"LOCUS_HWS_QUEUE_BOUND",
                                                          "LOCUS_HWS_ATTEMPTS", "LOCUS_HWS_CHUNKS"};

int this_worker() {
  return locus::detail::current_worker()->index;
}

// ---- bounded queues

TEST(Hws, ASpawnRunsSeriallyExactlyWhenItsWorkersQueueHoldsTheBound) {
  const saved_env clear(hws_variables);
  for (const int bound : {1, 5, 40}) {
    const saved_env env("LOCUS_HWS_QUEUE_BOUND", std::to_string(bound).c_str());
    locus::runtime rt{locus::options{.sched = "hws", .workers = 1}};
    constexpr int children = 50;
    std::vector<int> ran_at(children, -1);  // how far the parent had got when child i ran
    rt.exec([&] {
      for (int round = 0; round < 2; ++round) {
        int progress = 0;
        locus::task_group tg;
        for (int i = 0; i < children; ++i) {
          tg.run([&ran_at, &progress, i] { ran_at[static_cast<std::size_t>(i)] = progress; });
          progress = i + 1;
        }
        tg.wait();
        // The first `bound` were queued (they ran at the wait), the others ran at their spawn.
        for (int i = 0; i < children; ++i) {
          const int expected = i < bound ? children : i;
          EXPECT_EQ(ran_at[static_cast<std::size_t>(i)], expected)
              << "bound " << bound << ", round " << round << ", child " << i;
        }
      }
    });
    const auto total = rt.stats().total();
    EXPECT_EQ(total.spawns, 2u * children);
    EXPECT_EQ(total.serial_spawns,
              2u * static_cast<unsigned>(children - std::min(bound, children)));
  }
}

TEST(Hws, ASerialChildsExceptionReachesItsGroup) {
  const saved_env clear(hws_variables);
  const saved_env env("LOCUS_HWS_QUEUE_BOUND", "1");
  locus::runtime rt{locus::options{.sched = "hws", .workers = 1}};
  rt.exec([] {
    locus::task_group tg;
    bool after = false;
    tg.run([] {});                                             // queued
    tg.run([] { throw std::runtime_error("serial child"); });  // serial: the queue is full
    after = true;
    EXPECT_THROW(tg.wait(), std::runtime_error);
    EXPECT_TRUE(after);
  });
  EXPECT_EQ(rt.stats().total().serial_spawns, 1u);
}

// ---- hierarchical victim selection (§3.2.1)

std::mutex attempts_lock;
std::map<int, std::vector<hws_steal_event>> attempts_of;  // by thief, the "before" events

void record_attempt(const hws_steal_event& e) {
  if (e.done) return;
  const std::lock_guard hold(attempts_lock);
  auto& mine = attempts_of[e.thief];
  if (mine.size() < 4096) mine.push_back(e);
}

// One round of thief `t` as the configuration says: (level, tries) per level, nearest first.
std::vector<std::pair<int, int>> expected_round(locus::detail::runtime_impl& impl, int t,
                                                const std::vector<int>& configured) {
  std::map<int, int> at_level;
  for (int v = 0; v < impl.size(); ++v) {
    if (v != t) ++at_level[impl.distance(t, v)];
  }
  std::vector<std::pair<int, int>> round;
  std::size_t i = 0;
  for (const auto& [level, workers] : at_level) {
    const bool top = i + 1 == at_level.size();
    const int c = i < configured.size() ? configured[i] : -1;
    const int tries = c >= 0 ? c
                      : top  ? static_cast<int>(std::lround(4 * std::log2(impl.size())))
                             : workers;
    if (tries > 0) round.emplace_back(level, tries);
    ++i;
  }
  return round;
}

void check_victim_selection(const char* setting, const std::vector<int>& configured) {
  const saved_env clear(hws_variables);
  std::optional<saved_env> env;
  if (setting != nullptr) env.emplace("LOCUS_HWS_ATTEMPTS", setting);
  attempts_of.clear();
  locus::detail::set_hws_steal_observer(&record_attempt);
  {
    locus::runtime rt{locus::options{.sched = "hws", .workers = 16, .topology = sixteen}};
    auto& impl = rt.impl();
    std::vector<std::vector<std::pair<int, int>>> rounds;
    std::size_t longest = 0;
    for (int t = 0; t < 16; ++t) {
      rounds.push_back(expected_round(impl, t, configured));
      std::size_t n = 0;
      for (const auto& [level, tries] : rounds.back()) n += static_cast<std::size_t>(tries);
      longest = std::max(longest, n);
    }
    // Idle workers search in rounds until they sleep: wait for two rounds of each.
    const auto until = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < until) {
      std::size_t fewest = ~std::size_t{0};
      {
        const std::lock_guard hold(attempts_lock);
        for (int t = 0; t < 16; ++t) fewest = std::min(fewest, attempts_of[t].size());
      }
      if (fewest >= 2 * longest) break;
      std::this_thread::sleep_for(5ms);
    }
    locus::detail::set_hws_steal_observer(nullptr);
    const std::lock_guard hold(attempts_lock);
    for (int t = 0; t < 16; ++t) {
      const auto& seen = attempts_of[t];
      ASSERT_GE(seen.size(), 2 * longest) << "thief " << t;
      // Each round from the nearest level up, the configured number of tries at each.
      std::size_t k = 0;
      for (int round = 0; round < 2; ++round) {
        for (const auto& [level, tries] : rounds[static_cast<std::size_t>(t)]) {
          for (int a = 0; a < tries; ++a, ++k) {
            ASSERT_EQ(seen[k].level, level)
                << setting << ": thief " << t << ", round " << round << ", attempt " << k;
            ASSERT_EQ(impl.distance(t, seen[k].victim), level) << "thief " << t;
          }
        }
      }
    }
  }
  locus::detail::set_hws_steal_observer(nullptr);
}

TEST(Hws, VictimsAreTriedNearestLevelFirstAsOftenAsConfigured) {
  // Default: the 3 other workers of the L3, the 4 of the package's other L3, then 4·log2(16) = 16
  // across packages.
  check_victim_selection(nullptr, {});
  check_victim_selection("2,0,5", {2, 0, 5});
  check_victim_selection("auto,1", {-1, 1});
  check_victim_selection("0,0,3", {0, 0, 3});
}

TEST(Hws, TheDefaultRoundOnSixteenWorkersIs3Then4Then16) {
  const saved_env clear(hws_variables);
  locus::runtime rt{locus::options{.sched = "hws", .workers = 16, .topology = sixteen}};
  const auto round = expected_round(rt.impl(), 0, {});
  ASSERT_EQ(round.size(), 3u);
  EXPECT_EQ(round[0].second, 3);
  EXPECT_EQ(round[1].second, 4);
  EXPECT_EQ(round[2].second, 16);
}

// ---- hierarchical chunk selection (§3.2.2)

// One steal from a victim that stands still. Once the root arms the gate (and the attempts
// already under way are over), thieves wait at their next attempt until the root has queued its
// children; then the first thief that aims at the root's worker goes on, and the others that aim
// there wait until its steal is recorded.
struct one_steal_gate {
  std::atomic<bool> watching{false};
  std::atomic<unsigned> seen{0};  // workers that attempted a steal since `watching`
  std::atomic<bool> armed{false};
  std::atomic<int> in_flight{0};  // attempts that passed before the gate was armed
  std::atomic<int> victim{-1};
  std::atomic<bool> ready{false};
  std::atomic<bool> chosen{false};
  std::atomic<bool> released{false};
  std::atomic<bool> recorded{false};
  hws_steal_event steal;
};
one_steal_gate* gate = nullptr;
thread_local bool passed_unarmed = false;

void hold_at_gate(const hws_steal_event& e) {
  one_steal_gate& g = *gate;
  if (e.done) {
    if (passed_unarmed) {
      passed_unarmed = false;
      g.in_flight.fetch_sub(1);
    }
    if (e.victim == g.victim.load() && e.taken > 0 && g.ready.load() && !g.recorded.load()) {
      g.steal = e;
      g.recorded.store(true);
    }
    return;
  }
  if (g.watching.load()) g.seen.fetch_or(1u << e.thief);
  g.in_flight.fetch_add(1);
  if (!g.armed.load()) {
    passed_unarmed = true;
    return;
  }
  g.in_flight.fetch_sub(1);
  while (!g.ready.load()) std::this_thread::yield();
  // The other queues are empty: attempts at them change nothing (and a thief held there forever
  // could be the only one that would ever aim at the root's worker).
  if (g.released.load() || e.victim != g.victim.load() || !g.chosen.exchange(true)) return;
  while (!g.released.load()) std::this_thread::yield();
}

// The root queues `children` tasks; returns the first steal from its queue.
hws_steal_event first_steal(const char* attempts, const char* chunks, int children,
                            std::vector<std::uint64_t>* stolen_by_level = nullptr) {
  const saved_env clear(hws_variables);
  const saved_env a("LOCUS_HWS_ATTEMPTS", attempts);
  std::optional<saved_env> c;
  if (chunks != nullptr) c.emplace("LOCUS_HWS_CHUNKS", chunks);
  one_steal_gate g;
  gate = &g;
  locus::detail::set_hws_steal_observer(&hold_at_gate);
  {
    locus::runtime rt{locus::options{.sched = "hws", .workers = 4, .topology = four}};
    std::atomic<int> ran{0};
    rt.exec([&] {
      // A worker that fell asleep before this root existed sleeps until a push wakes it: spawn
      // until every other worker has been seen looking for work (from then on its sleeps are
      // short while the root runs).
      g.watching.store(true);
      const auto others = [] { return 0xFu & ~(1u << this_worker()); };
      while ((g.seen.load() & others()) != others()) {
        locus::task_group wake;
        wake.run([] {});
        wake.wait();
        std::this_thread::yield();
      }
      g.victim.store(this_worker());
      g.armed.store(true);
      while (g.in_flight.load() != 0) std::this_thread::yield();
      locus::task_group tg;
      for (int i = 0; i < children; ++i) tg.run([&] { ran.fetch_add(1); });
      g.ready.store(true);
      while (!g.recorded.load()) std::this_thread::yield();
      g.released.store(true);
      tg.wait();
    });
    EXPECT_EQ(ran.load(), children);
    locus::detail::set_hws_steal_observer(nullptr);
    if (stolen_by_level != nullptr) *stolen_by_level = rt.stats().total().stolen_items_by_level;
  }
  locus::detail::set_hws_steal_observer(nullptr);
  gate = nullptr;
  return g.steal;
}

// With the bound of 40, the 21st of 30 queued children publishes the oldest 11 (the private
// region keeps up to half the bound); one more when a thief's request from the spawns that woke
// the workers is still pending at the first push.
constexpr int queued_children = 30;
constexpr std::size_t public_children = 11;

TEST(Hws, StealsInsideTheTopLevelTakeTheConfiguredChunk) {
  for (const auto& [chunks, expected] :
       std::vector<std::pair<const char*, std::size_t>>{{nullptr, 1}, {"2,half", 2}, {"3", 3}}) {
    std::vector<std::uint64_t> by_level;
    // Only the nearest level is tried: the thief is the victim's sibling core.
    const hws_steal_event e = first_steal("1,0", chunks, queued_children, &by_level);
    EXPECT_EQ(e.step, 0) << (chunks ? chunks : "default");
    EXPECT_EQ(e.asked, expected);
    EXPECT_EQ(e.taken, expected);
    ASSERT_GT(by_level.size(), static_cast<std::size_t>(e.level));
    EXPECT_GE(by_level[static_cast<std::size_t>(e.level)], expected);  // counted by the core
  }
}

TEST(Hws, StealsAcrossTheTopLevelTakeHalfOfThePublicItems) {
  for (const char* chunks : {static_cast<const char*>(nullptr), "1,half", "1,2"}) {
    const hws_steal_event e = first_steal("0,1", chunks, queued_children);
    EXPECT_EQ(e.step, 1) << (chunks ? chunks : "default");
    if (chunks != nullptr && std::string(chunks) == "1,2") {
      EXPECT_EQ(e.asked, 2u);  // configured: a fixed chunk at the top too
      EXPECT_EQ(e.taken, 2u);
      continue;
    }
    EXPECT_GE(e.stealable, public_children);
    EXPECT_LE(e.stealable, public_children + 1);
    EXPECT_EQ(e.asked, (e.stealable + 1) / 2);
    EXPECT_EQ(e.taken, e.asked);
  }
}

// ---- configuration

void expect_rejected(const char* variable, const char* value, const char* accepted,
                     const char* topology = four) {
  const saved_env clear(hws_variables);
  const saved_env env(variable, value);
  try {
    locus::runtime rt{locus::options{.sched = "hws", .workers = 4, .topology = topology}};
    ADD_FAILURE() << variable << "='" << value << "' was accepted";
  } catch (const locus::config_error& e) {
    EXPECT_NE(std::string(e.what()).find(variable), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(accepted), std::string::npos) << e.what();
  }
}

TEST(Hws, BadSettingsAreRejectedNamingTheVariableAndTheAcceptedValues) {
  for (const char* bad : {"0", "-3", "x", "1048577"}) {
    expect_rejected("LOCUS_HWS_QUEUE_BOUND", bad, "an integer from 1 to 1048576");
  }
  // Two levels on this topology: the other core of the package, and the other package.
  for (const char* bad : {"1,2,3", "0,0", "-1", "x", "1,,2", "1000001"}) {
    expect_rejected("LOCUS_HWS_ATTEMPTS", bad, "2 comma-separated entries");
    expect_rejected("LOCUS_HWS_ATTEMPTS", bad, "or auto, not all 0");
  }
  for (const char* bad : {"0", "1,2,3", "third", "-2"}) {
    expect_rejected("LOCUS_HWS_CHUNKS", bad, "half or auto");
  }
  // And the good ones are taken; a blank one is unset (the default).
  const saved_env clear(hws_variables);
  for (const auto& [variable, value] :
       std::vector<std::pair<const char*, const char*>>{{"LOCUS_HWS_QUEUE_BOUND", "1"},
                                                        {"LOCUS_HWS_ATTEMPTS", "0"},
                                                        {"LOCUS_HWS_ATTEMPTS", "AUTO, 7"},
                                                        {"LOCUS_HWS_CHUNKS", "half,half"},
                                                        {"LOCUS_HWS_CHUNKS", ""}}) {
    const saved_env env(variable, value);
    locus::runtime rt{locus::options{.sched = "hws", .workers = 4, .topology = four}};
    EXPECT_EQ(rt.exec([] { return locus_test::fib(15); }), 610) << variable << "=" << value;
  }
}

// ---- programs

int nest(int depth, bool serial_too) {
  if (depth == 0) return 0;
  int below = 0;
  locus::task_group tg;
  tg.run([&] { below = nest(depth - 1, serial_too); });
  if (serial_too) tg.run([] {});  // with a bound of 1 the first child fills the queue
  tg.wait();
  return below + 1;
}

// Queued children helped at their parent's join, and serial ones, run on their parent's stack
// until a quarter of it is left, then on stacks of their own.
TEST(Hws, DeepHelpFirstRecursionMovesToFreshStacksRatherThanOverflowOne) {
#if defined(LOCUS_TSAN)
  constexpr int depth = 2'000;  // ThreadSanitizer stops at 8128 fibers
#else
  constexpr int depth = 10'000;
#endif
  const saved_env clear(hws_variables);
  for (const char* bound : {"40", "1"}) {
    const saved_env env("LOCUS_HWS_QUEUE_BOUND", bound);
    locus::runtime rt{locus::options{.sched = "hws", .workers = 2, .stack_size = 64 * 1024}};
    const bool serial_too = std::string(bound) == "1";
    EXPECT_EQ(rt.exec([&] { return nest(depth, serial_too); }), depth) << "bound " << bound;
    if (serial_too) {
      EXPECT_GT(rt.stats().total().serial_spawns, 0u);
    }
  }
}

long nested_sum(locus::runtime& rt) {
  return rt.exec([] {
    std::atomic<long> sum{0};
    locus::parallel_for(0, 64, [&](int i) {
      locus::parallel_for(0, 100, [&](int j) { sum.fetch_add(i * 100 + j); });
    });
    return sum.load();
  });
}

TEST(Hws, FibAndANestedParallelForGiveTheirSerialAnswers) {
  const saved_env clear(hws_variables);
  constexpr long expected_sum = 6400L * 6399 / 2;
  for (const char* bound : {"40", "2"}) {
    const saved_env env("LOCUS_HWS_QUEUE_BOUND", bound);
    {
      locus::runtime rt{locus::options{.sched = "hws", .workers = 2}};
      EXPECT_EQ(rt.exec([] { return locus_test::fib(24); }), 46368);
      EXPECT_EQ(nested_sum(rt), expected_sum);
    }
    {
      locus::runtime rt{locus::options{.sched = "hws", .workers = 16, .topology = sixteen}};
      EXPECT_EQ(rt.exec([] { return locus_test::fib(22); }), 17711);
      EXPECT_EQ(nested_sum(rt), expected_sum);
      // fib(22) queues at most 22 deep: only the bound of 2 makes spawns serial.
      const auto total = rt.stats().total();
      if (std::string(bound) == "2") {
        EXPECT_GT(total.serial_spawns, 0u);
        EXPECT_LT(total.serial_spawns, total.spawns);
      }
    }
  }
}

// runtime::describe (and LOCUS_PRINT_CONFIG) show the plan hws runs with, level by level.
TEST(Hws, DescribeShowsTheSettingsInEffect) {
  const saved_env clear(hws_variables);
  const saved_env bound("LOCUS_HWS_QUEUE_BOUND", "7");
  const saved_env attempts("LOCUS_HWS_ATTEMPTS", "auto,0,5");
  const saved_env chunks("LOCUS_HWS_CHUNKS", "2");
  locus::runtime rt{locus::options{.sched = "hws", .workers = 16, .topology = sixteen}};
  const std::string text = rt.describe();
  EXPECT_NE(text.find("LOCUS_HWS_QUEUE_BOUND = 7\n"), std::string::npos) << text;
  // A level with 0 attempts is left out of the plan.
  EXPECT_NE(text.find("LOCUS_HWS_ATTEMPTS = L3 3, machine 5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("LOCUS_HWS_CHUNKS   = L3 2, machine half\n"), std::string::npos) << text;
}

}  // namespace
