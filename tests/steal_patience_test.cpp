// adws's wait before a thief's first steal within a group with data (src/sched/steal_patience.hpp):
// the decision alone, with explicit clocks, and a run where the wait must end in steals.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "contended_pus.hpp"
#include "locus/locus.hpp"
#include "saved_env.hpp"
#include "sched/adws_audit.hpp"
#include "sched/clock.hpp"
#include "sched/steal_patience.hpp"
#include "sched/worker.hpp"

namespace {

using locus::detail::steal_patience;

constexpr std::uint64_t us = 1000;

TEST(StealPatience, WaitIsTheDataMoveBoundedByTheThiefsOwnPart) {
  // 64 KB at 16 bytes a nanosecond: 4 us, when the group ran 100 us before the thief ran dry.
  EXPECT_EQ(steal_patience::wait_ns(64 * 1024, 0, 100 * us), 4096u);
  // The same data after only 2 us of the group: the wait is those 2 us.
  EXPECT_EQ(steal_patience::wait_ns(64 * 1024, 10 * us, 12 * us), 2 * us);
  EXPECT_EQ(steal_patience::wait_ns(0, 0, 100 * us), 0u);
  // A clock read before the group's start (another core's clock) waits nothing.
  EXPECT_EQ(steal_patience::wait_ns(64 * 1024, 50 * us, 40 * us), 0u);
}

TEST(StealPatience, OnlyTheFirstStealOfAGroupWaits) {
  steal_patience p;
  const std::size_t bytes = 160 * 1000;  // 10 us to move
  // Group 7 began at 0; the thief runs dry at 100 us and must wait until 110 us.
  EXPECT_FALSE(p.may_steal(7, bytes, 0, 100 * us));
  EXPECT_FALSE(p.may_steal(7, bytes, 0, 109 * us));
  EXPECT_TRUE(p.may_steal(7, bytes, 0, 110 * us));
  // Once it has waited, every later try in the group goes at once.
  EXPECT_TRUE(p.may_steal(7, bytes, 0, 111 * us));
  EXPECT_TRUE(p.may_steal(7, bytes, 0, 500 * us));
  // A new group starts a new wait, measured from the first try in it.
  EXPECT_FALSE(p.may_steal(8, bytes, 400 * us, 600 * us));
  EXPECT_TRUE(p.may_steal(8, bytes, 400 * us, 610 * us));
  // A group without a size hint never waits.
  EXPECT_TRUE(p.may_steal(9, 0, 700 * us, 700 * us));
}

TEST(StealPatience, AGroupWithAnUnchangedIdNeverRestartsItsWait) {
  steal_patience p;
  EXPECT_FALSE(p.may_steal(3, 16 * 1000, 0, 100 * us));
  // Tries within the wait do not push its end back.
  for (std::uint64_t t = 100 * us; t < 101 * us; t += 100)
    EXPECT_FALSE(p.may_steal(3, 16000, 0, t));
  EXPECT_TRUE(p.may_steal(3, 16 * 1000, 0, 101 * us));
}

// adws with its steals and its wait on, whatever the environment says.
// (Braces would pick saved_env's list of names to clear.)
struct patient_adws {
  patient_adws() : steal("LOCUS_ADWS_STEAL", "1"), patient("LOCUS_ADWS_PATIENCE", "1") {}
  const locus_test::saved_env steal;
  const locus_test::saved_env patient;
};

constexpr const char* two_l2s = "pack:1 l3:1(size=8MB) l2:2(size=1MB) core:1 pu:1";

locus::options two_workers(const char* topology) {
  return locus::options{.sched = "adws", .workers = 2, .topology = topology};
}

struct steals_seen {
  static inline std::mutex lock;
  static inline std::vector<locus::detail::adws_steal_event> events;
  static inline std::atomic<bool> any{false};
  static void record(const locus::detail::adws_steal_event& e) {
    const std::lock_guard hold(lock);
    events.push_back(e);
    any.store(true);
  }
  static void clear() {
    const std::lock_guard hold(lock);
    events.clear();
    any.store(false);
  }
};

// A victim's task: it takes `at_least`, and then goes on until `stolen` (at most two seconds), so
// that its worker still holds queued tasks when the thief gets to try. On a loaded test machine
// the OS may keep the thief off its CPU for longer than any fixed length of the victim's work.
void run_until_stolen(std::chrono::milliseconds at_least, const std::atomic<bool>& stolen) {
  std::this_thread::sleep_for(at_least);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!stolen.load() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// Eight children hinted 1 : 1 in a group of `size_bytes`: the plan gives the first half to
// worker 1, whose tasks take `first`, and the second to worker 0, whose tasks take `second` and
// then go on until a steal is seen; by the time worker 1 ends its half, the creator has spawned
// every child. Returns the steals within the group.
std::vector<locus::detail::adws_steal_event> steals_in_halves(locus::runtime& rt,
                                                              std::size_t size_bytes,
                                                              std::chrono::milliseconds first,
                                                              std::chrono::milliseconds second) {
  constexpr int children = 8;
  steals_seen::clear();
  locus::detail::set_adws_steal_observer(&steals_seen::record);
  rt.exec([&] {
    locus::task_group tg{locus::work_hint{double(children)}, locus::size_hint{size_bytes}};
    for (int i = 0; i < children; ++i) {
      const bool first_half = i < children / 2;
      tg.run(
          [=] {
            if (first_half) {
              std::this_thread::sleep_for(first);
            } else {
              run_until_stolen(second, steals_seen::any);
            }
          },
          locus::work_hint{1.0});
    }
    tg.wait();
  });
  locus::detail::set_adws_steal_observer(nullptr);
  const std::lock_guard hold(steals_seen::lock);
  return steals_seen::events;
}

// Hints that say 1 : 1 where worker 0's half takes far longer, and a size hint whose share per
// worker fits its cache, so that moving a task looks expensive: worker 1 waits, then steals, so
// some of worker 0's planned children run on worker 1. Without an end to the wait, worker 1 would
// idle through the whole group.
TEST(StealPatience, AThiefStillStealsFromAPlanWhoseHintsAreWrong) {
  const patient_adws env;
  locus::runtime rt{two_workers(two_l2s)};
  constexpr int children = 16;
  std::vector<std::atomic<int>> ran_on(children);
  std::atomic<bool> slow_child_on_worker_1{false};
  rt.exec([&] {
    locus::task_group tg{locus::work_hint{double(children)},
                         locus::size_hint{std::size_t{2} << 20}};
    for (int i = 0; i < children; ++i) {
      tg.run(
          [&, i] {
            const int on = locus::this_worker();
            ran_on[static_cast<std::size_t>(i)] = on;
            // The plan gives the first half to worker 1: those end at once.
            if (i < children / 2) return;
            if (on == 1) slow_child_on_worker_1 = true;
            run_until_stolen(std::chrono::milliseconds(20), slow_child_on_worker_1);
          },
          locus::work_hint{1.0});
    }
    tg.wait();
  });
  int slow_on_worker_1 = 0;
  for (int i = children / 2; i < children; ++i) {
    slow_on_worker_1 += ran_on[static_cast<std::size_t>(i)].load() == 1;
  }
  EXPECT_GT(slow_on_worker_1, 0) << "worker 1 never stole from worker 0's planned half";
}

// While another process shares a worker's PU, the owner of a planned task may be waiting for its
// PU rather than running: a thief then steals as soon as it runs dry. A thread stands in for that
// process by marking both workers' PUs contended for the whole run; without the gate, the first
// thief would hold back its first steal (its own part took at least 8 ms; moving a part's data,
// a ninth of 2 MB, some 15 us).
TEST(StealPatience, NoThiefWaitsWhileAWorkersPuIsContended) {
  const patient_adws env;
  locus::runtime rt{two_workers(two_l2s)};
  // Each worker's contention watch, taken from a task it runs (a group of two children hinted
  // 1 : 1 gives one to each worker, unless the other steals it first).
  const auto watches = locus_test::watches_of_both_workers(rt, [](const auto& note_mine) {
    locus::task_group tg{locus::work_hint{2.0}};
    for (int i = 0; i < 2; ++i) {
      tg.run(
          [&] {
            note_mine();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          },
          locus::work_hint{1.0});
    }
    tg.wait();
  });
  ASSERT_EQ(watches.size(), 2u) << "a worker never ran a task";
  std::vector<locus::detail::adws_steal_event> steals;
  {
    const locus_test::contended_pus neighbour(watches);
    // Worker 1 ends its half first, then steals from the second.
    steals = steals_in_halves(rt, std::size_t{2} << 20, std::chrono::milliseconds(2),
                              std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(steals.empty()) << "no worker stole within the group";
  int waited = 0;
  for (const auto& e : steals) waited += e.waited;
  EXPECT_EQ(waited, 0) << "a thief held back its first steal while a PU was contended";
}

// The data a thief's wait is sized by is a part of the group (its size over its children and
// the creator's inline work), but no more than one worker's cache holds: of a larger part, only
// that much can be in the victim's cache for a steal to move. And where a worker's share of the
// group is larger than its cache, its sweep over the share has evicted most of the part by the
// time it would run it again: only the cache's proportion of the share counts.
// The data each steal's wait was sized by, in steals_in_halves's group of `size_bytes`.
std::vector<std::size_t> part_bytes_of_steals(locus::runtime& rt, std::size_t size_bytes) {
  std::vector<std::size_t> sizes;
  for (const auto& e : steals_in_halves(rt, size_bytes, std::chrono::milliseconds(1),
                                        std::chrono::milliseconds(5))) {
    sizes.push_back(e.part_bytes);
  }
  return sizes;
}

TEST(StealPatience, AThiefsWaitIsSizedByTheDataItsVictimsCacheCanStillHold) {
  const patient_adws env;
  locus::runtime rt{two_workers(two_l2s)};
  // 64 MB in nine parts: each part is more than the 1 MB cache, and each worker's 32 MB share
  // is 32 caches' worth.
  const std::vector<std::size_t> large = part_bytes_of_steals(rt, std::size_t{64} << 20);
  ASSERT_FALSE(large.empty()) << "worker 1 never stole from worker 0's planned half";
  for (const std::size_t b : large) EXPECT_EQ(b, (std::size_t{1} << 20) / 32);
  // A share of exactly one cache: the whole part (a ninth of 2 MB).
  const std::vector<std::size_t> fits = part_bytes_of_steals(rt, std::size_t{2} << 20);
  ASSERT_FALSE(fits.empty()) << "worker 1 never stole from worker 0's planned half";
  for (const std::size_t b : fits) EXPECT_EQ(b, (std::size_t{2} << 20) / 9);
  // A share of two caches: half of the part.
  const std::vector<std::size_t> twice = part_bytes_of_steals(rt, std::size_t{4} << 20);
  ASSERT_FALSE(twice.empty()) << "worker 1 never stole from worker 0's planned half";
  for (const std::size_t b : twice) EXPECT_EQ(b, (std::size_t{4} << 20) / 9 / 2);
  // Nine parts: eight children and the creator's inline work.
  const std::vector<std::size_t> small = part_bytes_of_steals(rt, 9 * 10'000);
  ASSERT_FALSE(small.empty()) << "worker 1 never stole from worker 0's planned half";
  for (const std::size_t b : small) EXPECT_EQ(b, 10'000u);
}

// A topology that names no cache says nothing of how much a cache holds: the whole part counts.
TEST(StealPatience, WithoutKnownCachesTheWaitIsSizedByTheWholePart) {
  const patient_adws env;
  locus::runtime rt{two_workers("pack:1 core:2 pu:1")};
  const std::vector<std::size_t> sizes = part_bytes_of_steals(rt, 9 * (std::size_t{8} << 20));
  ASSERT_FALSE(sizes.empty()) << "worker 1 never stole from worker 0's planned half";
  for (const std::size_t b : sizes) EXPECT_EQ(b, std::size_t{8} << 20);
}

}  // namespace
