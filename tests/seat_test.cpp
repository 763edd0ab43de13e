// runtime::exec from a thread outside the runtime: the caller takes the seat of a sleeping
// worker and runs its root itself (sched/runtime_impl.hpp, sched/seat.cpp), the other workers
// stealing from it; when that worker is awake, the root runs on the workers and the caller blocks.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "locus/locus.hpp"
#include "wait_until.hpp"

namespace {

using locus_test::wait_until;

// Waits until worker `w` has gone to sleep at least once more than `before` times.
void wait_for_sleep(locus::runtime& rt, int w, std::uint64_t before = 0) {
  ASSERT_TRUE(wait_until([&] {
    return rt.stats().workers[static_cast<std::size_t>(w)].sleeps > before;
  })) << "worker "
      << w << " never slept";
}

// Waits until worker 0's own thread has left its seat to sleep: an exec that spawns nothing then
// runs on the calling thread (and wakes nobody, so the seat stays free for the next one).
void wait_for_free_seat(locus::runtime& rt) {
  wait_for_sleep(rt, 0);
  const std::thread::id caller = std::this_thread::get_id();
  ASSERT_TRUE(wait_until([&] {
    return rt.exec([] { return std::this_thread::get_id(); }) == caller;
  })) << "worker 0's seat never became free";
}

void spin_for(std::chrono::microseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

class Seat : public ::testing::TestWithParam<const char*> {};

TEST_P(Seat, ARootRunsOnTheCallingThreadWhileTheSeatsWorkerSleeps) {
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 2}};
  wait_for_free_seat(rt);
  const std::thread::id caller = std::this_thread::get_id();
  // A root that spawns nothing wakes nobody: the seat's own thread sleeps on through all of them.
  for (int i = 0; i < 100; ++i) {
    const auto [where, worker] = rt.exec([] {
      return std::pair{std::this_thread::get_id(), locus::this_worker()};
    });
    ASSERT_EQ(where, caller) << "call " << i;
    ASSERT_EQ(worker, 0) << "call " << i << ": the caller sits in worker 0's seat";
  }
  EXPECT_EQ(locus::this_worker(), -1) << "the caller left the seat";
}

TEST_P(Seat, ASeatedRootsWorkSpreadsToTheOtherWorkers) {
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 2}};
  wait_for_free_seat(rt);
  const std::thread::id caller = std::this_thread::get_id();
  constexpr int n = 256;
  std::atomic<int> by_caller{0}, by_worker1{0}, off_seat{0}, strays{0};
  std::atomic<long> sum{0};
  long rounds = 0;
  // Rounds of 256 x 50 us until both the caller and worker 1 have run an iteration (bounded, so
  // that a worker 1 that never gets any fails below instead of hanging): how soon a sleeping
  // worker wakes and finds work depends on the host (sanitizers, a busy machine), so no fixed
  // amount of work does.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  const std::thread::id root_thread = rt.exec([&] {
    // Where the root starts: after a loop it continues wherever the loop's last part ended.
    const std::thread::id start = std::this_thread::get_id();
    do {
      ++rounds;
      locus::parallel_for(0, n, [&](int i) {
        spin_for(std::chrono::microseconds(50));
        const int w = locus::this_worker();
        const bool here = std::this_thread::get_id() == caller;
        if (w != 0 && w != 1) ++strays;
        // Worker 0's work runs on the caller's thread, never on the seat's own (sleeping) one.
        if (w == 0 && !here) ++off_seat;
        by_caller += here ? 1 : 0;
        by_worker1 += w == 1 ? 1 : 0;
        sum += i;
      });
    } while ((by_caller == 0 || by_worker1 == 0) && std::chrono::steady_clock::now() < give_up);
    return start;
  });
  EXPECT_EQ(root_thread, caller) << "the root started on the calling thread";
  EXPECT_EQ(sum.load(), rounds * n * (n - 1) / 2);
  EXPECT_EQ(strays.load(), 0) << "an iteration ran on neither worker";
  EXPECT_EQ(off_seat.load(), 0) << "worker 0's work ran on the seat's own thread";
  EXPECT_GT(by_caller.load(), 0);
  EXPECT_GT(by_worker1.load(), 0) << "no work of the seated caller's root reached worker 1";
}

TEST_P(Seat, ASeatedRootsExceptionReachesTheCallerAndTheSeatIsFreeAgain) {
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 2}};
  wait_for_free_seat(rt);
  const std::thread::id caller = std::this_thread::get_id();
  EXPECT_THROW(rt.exec([&] {
    if (std::this_thread::get_id() == caller) throw std::runtime_error("from the seat");
  }),
               std::runtime_error);
  const auto where = rt.exec([] { return std::this_thread::get_id(); });
  EXPECT_EQ(where, caller) << "the seat was left free after the exception";
}

TEST_P(Seat, ExecInsideASeatedRootRunsInline) {
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 2}};
  wait_for_free_seat(rt);
  const std::thread::id caller = std::this_thread::get_id();
  const int inner_worker = rt.exec([&] {
    return rt.exec(
        [&] { return std::this_thread::get_id() == caller ? locus::this_worker() : -5; });
  });
  EXPECT_EQ(inner_worker, 0);
}

TEST_P(Seat, WithOneWorkerTheCallerRunsEverything) {
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 1}};
  wait_for_free_seat(rt);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> elsewhere{0};
  const long total = rt.exec([&] {
    std::atomic<long> s{0};
    locus::parallel_for(0, 1000, [&](int i) {
      if (std::this_thread::get_id() != caller) ++elsewhere;
      s += i;
    });
    return s.load();
  });
  EXPECT_EQ(total, 999L * 1000 / 2);
  EXPECT_EQ(elsewhere.load(), 0);
  EXPECT_EQ(rt.stats().workers[0].stolen_items, 0u);
}

// While one caller sits in the seat, another thread's exec runs on the workers: it is not
// seated, and it ends.
TEST_P(Seat, ASecondCallerWhileTheSeatIsTakenRunsOnTheWorkers) {
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 2}};
  wait_for_free_seat(rt);
  std::atomic<bool> seated{false}, second_done{false};
  std::thread::id second_ran_on;
  std::thread second;
  rt.exec([&] {
    seated = true;
    second = std::thread([&] {
      second_ran_on = rt.exec([] { return std::this_thread::get_id(); });
      second_done = true;
    });
    // Block worker 0 (this caller) until the second root has ended elsewhere: it cannot have
    // been seated, and worker 1 ran it (or, for a scheduler whose roots start on worker 0, it
    // waits in worker 0's inbox, which the caller serves once this root returns).
    const bool roots_on_any_worker =
        std::string(GetParam()) != "adws" && std::string(GetParam()) != "ml-adws" &&
        std::string(GetParam()) != "ml-ws" && std::string(GetParam()) != "cats";
    if (roots_on_any_worker) {
      EXPECT_TRUE(wait_until([&] { return second_done.load(); }));
    }
  });
  second.join();
  EXPECT_TRUE(seated.load());
  EXPECT_TRUE(second_done.load());
  EXPECT_NE(second_ran_on, second.get_id());
}

// Randomized: several threads call exec at once and over and over, with nested parallel work of
// random shapes and pauses, so that seats are taken, refused, left with work behind, and the
// seat's own thread wakes, sleeps and reclaims it in every order. Every sum must be exact and
// nothing may hang (the CTest timeout).
TEST_P(Seat, ManyCallersAtOnceStress) {
  locus::runtime rt{locus::options{.sched = GetParam(), .workers = 2}};
  constexpr int callers = 3;
  const int rounds = 300;
  std::atomic<int> seated{0}, failures{0};
  // A loaded machine may keep worker 0's thread from falling asleep (and freeing its seat) for
  // all of the rounds: the callers then go on until one is seated, for as long as 20 s.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      std::mt19937 rng(static_cast<unsigned>(1234 + c));
      const std::thread::id me = std::this_thread::get_id();
      for (int r = 0;
           r < rounds || (seated.load() == 0 && std::chrono::steady_clock::now() < give_up); ++r) {
        const int n = 1 + static_cast<int>(rng() % 64);
        const int pause_us = static_cast<int>(rng() % 20);
        const auto [sum, on_me] = rt.exec([&] {
          std::atomic<long> s{0};
          locus::parallel_for(0, n, [&](int i) {
            if (i % 7 == 0) spin_for(std::chrono::microseconds(pause_us));
            if (i % 5 == 0) {
              locus::task_group tg;
              tg.run([&] { s += 1; });
              s += 1;
              tg.wait();
            }
            s += i;
          });
          return std::pair{s.load(), std::this_thread::get_id() == me};
        });
        const long expected = long{n} * (n - 1) / 2 + 2 * ((n + 4) / 5);
        if (sum != expected) ++failures;
        seated += on_me;
        if (rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(seated.load(), 0) << "no caller was ever seated";
}

int cpus_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  return CPU_COUNT(&set);
}

// Puts the calling thread on `cpu` without binding it there: bound for the move, then given its
// own binding back (the OS leaves a running thread where it is).
bool move_this_thread_to(int cpu) {
  cpu_set_t own, one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_getaffinity(0, sizeof own, &own) != 0) return false;
  if (sched_setaffinity(0, sizeof one, &one) != 0) return false;
  return sched_setaffinity(0, sizeof own, &own) == 0;
}

// A caller the OS runs on another pinned worker's PU would share that PU with the worker while
// the seat's PU idles: the seat moves it to its own worker's PU before the root starts, and
// leaves the caller's binding as it was.
TEST(SeatPlacement, ACallerOnAnotherWorkersPuIsMovedToTheSeatsPu) {
  if (cpus_of_this_thread() < 2) GTEST_SKIP() << "needs 2 CPUs";
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  if (rt.describe().find("pinned             = yes") == std::string::npos) {
    GTEST_SKIP() << "workers are not pinned";
  }
  // Worker 1's PU: where it runs the root's continuation, stolen while the child holds the seat
  // (or, when worker 0's own thread took the root, whichever worker that is not).
  int worker1_cpu = -1;
  for (int attempt = 0; attempt < 100 && worker1_cpu < 0; ++attempt) {
    wait_for_free_seat(rt);
    std::atomic<bool> stolen{false};
    int cpu = -1, worker = -1;
    rt.exec([&] {
      locus::task_group tg;
      tg.run([&] { EXPECT_TRUE(wait_until([&] { return stolen.load(); })); });
      worker = locus::this_worker();
      cpu = sched_getcpu();
      stolen = true;
      tg.wait();
    });
    if (worker == 1) worker1_cpu = cpu;
  }
  ASSERT_GE(worker1_cpu, 0) << "worker 1 never stole the continuation";
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const std::thread::id caller = std::this_thread::get_id();
  // The seat may be taken (worker 0 awake) or a PU contended (another test) for a moment.
  bool moved = false;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!moved && std::chrono::steady_clock::now() < give_up) {
    wait_for_free_seat(rt);
    const std::uint64_t moves = rt.stats().workers[0].caller_moves;
    if (!move_this_thread_to(worker1_cpu) || sched_getcpu() != worker1_cpu) continue;
    const auto [cpu, on] = rt.exec([] {
      return std::pair{sched_getcpu(), std::this_thread::get_id()};
    });
    if (on != caller) continue;  // not seated
    if (rt.stats().workers[0].caller_moves == moves) continue;
    EXPECT_NE(cpu, worker1_cpu) << "the root ran on worker 1's PU";
    moved = true;
  }
  // The move is left out while a PU is contended; a test beside this one may keep both busy.
  if (!moved && rt.stats().total().cpu_unbinds > 0) {
    GTEST_SKIP() << "the PUs were contended whenever the caller was seated";
  }
  EXPECT_TRUE(moved) << "a seated caller on worker 1's PU was never moved";
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the caller's binding changed";
}

INSTANTIATE_TEST_SUITE_P(Schedulers, Seat,
                         ::testing::Values("ws", "adws", "ml-adws", "ml-ws", "numa-ws", "hws",
                                           "cats", "tao"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
