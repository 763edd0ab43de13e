// ws's join (src/sched/ws.cpp): with LOCUS_WS_JOIN=home a task whose continuation was stolen
// goes back, at its join, to the worker it was stolen from when that worker is looking for work;
// with `thief` it goes on where the join completed, as in Cilk-5; `auto`, the default, is home
// with two workers and thief with more.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "contended_pus.hpp"
#include "locus/locus.hpp"
#include "saved_env.hpp"
#include "sched/worker.hpp"

namespace {

using locus_test::saved_env;

struct join_trial {
  int home = -1;   // the worker the task began on
  int thief = -1;  // the worker that took its continuation
  int after = -1;  // the worker it goes on on after the join
};

// The task's child holds its worker until the continuation has been stolen; the thief then
// waits until that worker is back in its scheduler loop (its idle time grows) and joins at once,
// while the victim looks for work.
join_trial stolen_join(locus::runtime& rt) {
  join_trial t;
  rt.exec([&] {
    std::atomic<bool> stolen{false}, child_done{false};
    locus::task_group tg;
    t.home = locus::this_worker();
    tg.run([&] {
      while (!stolen.load()) {
      }
      child_done.store(true);
    });
    t.thief = locus::this_worker();
    stolen.store(true);
    while (!child_done.load()) {
    }
    const auto idle_of_home = [&] {
      return rt.stats().workers.at(static_cast<std::size_t>(t.home)).idle_s;
    };
    const double idle_before = idle_of_home();
    while (idle_of_home() <= idle_before) {
    }
    tg.wait();
    t.after = locus::this_worker();
  });
  return t;
}

// The pushes a thief counts after its offer became visible (the root may end first).
std::uint64_t settled_pushes(const locus::runtime& rt, std::uint64_t at_least) {
  std::uint64_t pushes = rt.stats().total().pushes;
  for (int i = 0; i < 1000 && pushes < at_least; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pushes = rt.stats().total().pushes;
  }
  return pushes;
}

// Runs stolen joins until five went back to their victim (or 30 s passed); asserts that none
// went on on a third worker and that every hand-back was offered.
void expect_hand_backs(locus::runtime& rt) {
  int handed_back = 0, stayed = 0;
  // The victim is handed its task back only when it is seen searching: with another process on
  // a CPU (a test beside this one) it may not get to search for a while, so try for up to 30 s.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (handed_back < 5 && std::chrono::steady_clock::now() < give_up) {
    const join_trial t = stolen_join(rt);
    ASSERT_NE(t.home, t.thief) << "the child held its worker: the continuation was stolen";
    // Back on the victim when it was seen searching, else on the thief: never a third worker.
    if (t.after == t.home) {
      ++handed_back;
    } else {
      EXPECT_EQ(t.after, t.thief);
      ++stayed;
    }
  }
  EXPECT_GE(handed_back, 5) << stayed << " joins stayed on the thief";
  // Every hand-back was offered (a push); an offer the victim did not claim in time went back
  // to the thief, which then counts among `stayed`.
  EXPECT_GE(settled_pushes(rt, static_cast<std::uint64_t>(handed_back)),
            static_cast<std::uint64_t>(handed_back));
}

// Every stolen join goes on on its thief, and nothing is offered.
void expect_joins_stay_on_the_thief(locus::runtime& rt, int trials) {
  for (int i = 0; i < trials; ++i) {
    const join_trial t = stolen_join(rt);
    ASSERT_NE(t.home, t.thief);
    EXPECT_EQ(t.after, t.thief);
  }
  EXPECT_EQ(rt.stats().total().pushes, 0u);
}

TEST(Ws, AStolenContinuationGoesBackToItsVictimAtTheJoin) {
  const saved_env env("LOCUS_WS_JOIN", "home");
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  expect_hand_backs(rt);
}

// With four workers `home` still hands back (the rule is the user's choice at any count).
TEST(Ws, HomeHandsBackWithFourWorkers) {
  const saved_env env("LOCUS_WS_JOIN", "home");
  locus::runtime rt{locus::options{.sched = "ws", .workers = 4, .topology = "pack:1 core:4 pu:1"}};
  expect_hand_backs(rt);
}

// The default hands back with two workers, where the other worker is every continuation's thief,
// and keeps Cilk-5's rule with more, where thieves are drawn at random.
TEST(Ws, AutoHandsBackOnlyWithTwoWorkers) {
  const saved_env env("LOCUS_WS_JOIN", nullptr);
  {
    locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
    expect_hand_backs(rt);
  }
  for (const int workers : {3, 4}) {
    locus::runtime rt{
        locus::options{.sched = "ws", .workers = workers, .topology = "pack:1 core:4 pu:1"}};
    expect_joins_stay_on_the_thief(rt, 20);
  }
}

TEST(Ws, WithThiefJoinsTheTaskGoesOnWhereTheJoinCompleted) {
  const saved_env env("LOCUS_WS_JOIN", "thief");
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
  expect_joins_stay_on_the_thief(rt, 50);
}

// A loop of fork-join steps keeps computing right under both rules, with many steals and
// hand-backs on 2 and 4 workers (the latter oversubscribed on a small machine).
TEST(Ws, StepLoopResultsUnderBothJoinRules) {
  for (const char* rule : {"home", "thief"}) {
    for (const int workers : {2, 4}) {
      const saved_env env("LOCUS_WS_JOIN", rule);
      locus::runtime rt{
          locus::options{.sched = "ws", .workers = workers, .topology = "pack:1 core:4 pu:1"}};
      std::vector<long> cell(64, 0);
      rt.exec([&] {
        for (int step = 0; step < 300; ++step) {
          locus::parallel_for(0, 64, [&](int i) { cell[static_cast<std::size_t>(i)] += i; });
        }
      });
      for (int i = 0; i < 64; ++i) {
        EXPECT_EQ(cell[static_cast<std::size_t>(i)], 300L * i) << rule << " " << workers;
      }
    }
  }
}

// The lone-item rule (LOCUS_WS_LONE_WAIT_US, with the hand-back): while a region whose
// continuation was stolen is open, a thief leaves its victim's only item to the victim for a
// while; the first steal of a region never waits.

// Spins until worker `w`'s idle time has grown by `by_s` seconds, or `done` holds.
void until_idle_grows(const locus::runtime& rt, int w, double by_s,
                      const std::atomic<bool>* done = nullptr) {
  const auto idle = [&] { return rt.stats().workers.at(static_cast<std::size_t>(w)).idle_s; };
  const double from = idle();
  while (idle() < from + by_s && (done == nullptr || !done->load())) {
  }
}

struct lone_trial {
  int home = -1;
  int thief = -1;
  int inner = -1;  // where the inner group's continuation ran
};

// The root's continuation is stolen, so its region stays open; the root's child, on the home
// worker, then spawns a child of its own that holds the home worker until the thief has been
// idle for 50 ms. Meanwhile the inner child's continuation is the only item the thief can find.
lone_trial lone_item_trial(locus::runtime& rt) {
  lone_trial t;
  rt.exec([&] {
    std::atomic<int> thief{-1};
    locus::task_group outer;
    t.home = locus::this_worker();
    outer.run([&] {
      while (thief.load() < 0) {
      }
      locus::task_group inner;
      inner.run([&] { until_idle_grows(rt, thief.load(), 0.05); });
      t.inner = locus::this_worker();
      inner.wait();
    });
    t.thief = locus::this_worker();
    thief.store(t.thief);
    outer.wait();
  });
  return t;
}

// Where the lone continuation ran in ten trials: how many times on its own worker and how many
// on the thief. A trial can go either way when another process shares a CPU (the rule then
// stands aside, and the idle clock of a descheduled thief runs on), so the counts are compared,
// not each trial.
std::pair<int, int> lone_item_trials(locus::runtime& rt) {
  int stayed = 0, taken = 0;
  for (int i = 0; i < 10; ++i) {
    const lone_trial t = lone_item_trial(rt);
    EXPECT_NE(t.home, t.thief) << "the root's continuation was stolen";
    if (t.inner == t.home) {
      ++stayed;
    } else {
      EXPECT_EQ(t.inner, t.thief) << "never a third worker";
      ++taken;
    }
  }
  return {stayed, taken};
}

// ws on two workers with the default join rule (the hand-back) and LOCUS_WS_LONE_WAIT_US=`us`.
struct lone_wait_ws {
  explicit lone_wait_ws(const char* us) : wait("LOCUS_WS_LONE_WAIT_US", us) {}
  const saved_env join{"LOCUS_WS_JOIN"};  // cleared
  const saved_env wait;
  locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
};

TEST(WsLoneItem, AThiefLeavesItToItsVictimInsideAStolenRegion) {
  lone_wait_ws ws{"1000000"};
  locus::runtime& rt = ws.rt;
  const auto [stayed, taken] = lone_item_trials(rt);
  EXPECT_GT(stayed, taken) << "with a wait of 1 s the thief took the lone item in " << taken
                           << " trials of " << stayed + taken;
}

TEST(WsLoneItem, WithoutTheWaitTheThiefTakesIt) {
  lone_wait_ws ws{"0"};
  locus::runtime& rt = ws.rt;
  const auto [stayed, taken] = lone_item_trials(rt);
  EXPECT_GT(taken, stayed) << "with no wait the lone item stayed in " << stayed << " trials of "
                           << stayed + taken;
}

// A lone queued child is not waited for: it is one of a loop's many, whose victim is busy with
// another. The root's continuation is stolen; the root's child then queues a grandchild
// (parent_first) and holds its worker until the grandchild has run elsewhere, or until the thief
// has been idle for 200 ms.
TEST(WsLoneItem, ALoneQueuedChildIsTakenAtOnce) {
  lone_wait_ws ws{"1000000"};
  locus::runtime& rt = ws.rt;
  int elsewhere = 0;
  const int trials = 6;
  for (int trial = 0; trial < trials; ++trial) {
    rt.exec([&] {
      std::atomic<int> thief{-1};
      std::atomic<int> ran_on{-1};
      std::atomic<bool> ran{false};
      locus::task_group outer;
      outer.run([&] {
        while (thief.load() < 0) {
        }
        const int home = locus::this_worker();
        locus::task_group inner;
        inner.run(
            [&] {
              ran_on.store(locus::this_worker());
              ran.store(true);
            },
            locus::parent_first);
        until_idle_grows(rt, thief.load(), 0.2, &ran);
        inner.wait();
        if (ran_on.load() != home) ++elsewhere;
      });
      thief.store(locus::this_worker());
      outer.wait();
    });
  }
  EXPECT_GE(elsewhere, trials - 1) << "lone queued children the thief left: " << trials - elsewhere;
}

// While another process shares a worker's PU, the victim may be waiting for its PU rather than
// finishing its item: the thief takes it at once. A thread stands in for that process by marking
// both workers' PUs contended for the whole run.
TEST(WsLoneItem, NoThiefWaitsWhileAWorkersPuIsContended) {
  lone_wait_ws ws{"1000000"};
  locus::runtime& rt = ws.rt;
  const auto watches = locus_test::watches_of_both_workers(rt, [](const auto& note_mine) {
    locus::task_group tg;
    tg.run([&] {
      note_mine();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    note_mine();
    tg.wait();
  });
  ASSERT_EQ(watches.size(), 2u) << "a worker never ran a task";
  const locus_test::contended_pus neighbour(watches);
  const auto [stayed, taken] = lone_item_trials(rt);
  EXPECT_GT(taken, stayed) << "while a PU was contended the lone item stayed in " << stayed
                           << " trials of " << stayed + taken;
}

// A region's first steal does not wait, also right after another stolen region has joined (its
// count of open stolen regions went back to zero): the child holds its worker until its parent's
// continuation has been taken, or until the other worker has been idle for 200 ms.
TEST(WsLoneItem, TheFirstStealOfARegionDoesNotWait) {
  lone_wait_ws ws{"1000000"};
  locus::runtime& rt = ws.rt;
  int stolen = 0, trials = 0;
  rt.exec([&] {
    for (int region = 0; region < 6; ++region, ++trials) {
      // The hand-back may or may not bring the task back to this worker after each join.
      const int here = locus::this_worker();
      std::atomic<bool> taken{false};
      locus::task_group tg;
      tg.run([&] { until_idle_grows(rt, 1 - here, 0.2, &taken); });
      if (locus::this_worker() != here) ++stolen;
      taken.store(true);
      tg.wait();
    }
  });
  EXPECT_GE(stolen, trials - 1) << "regions whose first item waited: " << trials - stolen;
}

TEST(Ws, RejectsABadLoneWait) {
  for (const char* bad : {"-1", "1000001", "5us"}) {
    const saved_env wait("LOCUS_WS_LONE_WAIT_US", bad);
    try {
      locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
      ADD_FAILURE() << "LOCUS_WS_LONE_WAIT_US=" << bad << " was accepted";
    } catch (const std::exception& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("LOCUS_WS_LONE_WAIT_US"), std::string::npos) << what;
      EXPECT_NE(what.find("1000000"), std::string::npos) << what;
    }
  }
}

TEST(Ws, RejectsAnUnknownJoinRule) {
  const saved_env env("LOCUS_WS_JOIN", "victim");
  try {
    locus::runtime rt{locus::options{.sched = "ws", .workers = 2}};
    ADD_FAILURE() << "LOCUS_WS_JOIN=victim was accepted";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("LOCUS_WS_JOIN"), std::string::npos) << what;
    EXPECT_NE(what.find("home"), std::string::npos) << what;
    EXPECT_NE(what.find("thief"), std::string::npos) << what;
    EXPECT_NE(what.find("auto"), std::string::npos) << what;
  }
}

}  // namespace
