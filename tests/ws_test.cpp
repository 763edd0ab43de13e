// ws's join (src/sched/ws.cpp): with LOCUS_WS_JOIN=home a task whose continuation was stolen
// goes back, at its join, to the worker it was stolen from when that worker is looking for work;
// with `thief` it goes on where the join completed, as in Cilk-5; `auto`, the default, is home
// with two workers and thief with more.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "locus/locus.hpp"
#include "saved_env.hpp"

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
