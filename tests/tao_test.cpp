// Task assemblies (locus/assembly.hpp) and the tao scheduler (seed 003 §3.2): where an
// assembly's members run, entry modes, the FIFO order of assembly queues, racing assemblies,
// exceptions, cleanup, nesting, placement, and tao with stealing turned off.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fib.hpp"
#include "locus/locus.hpp"
#include "saved_env.hpp"
#include "watchdog.hpp"

namespace {

using namespace std::chrono_literals;

// 16 workers: pairs share an L2, fours an L3, eights a package.
constexpr const char* kSixteen = "pack:2 l3:2(size=4MB) l2:2(size=512KB) core:2 pu:1";

locus::options tao(int workers = 16) {
  return locus::options{.sched = "tao", .workers = workers, .topology = kSixteen};
}

long serial_fib(int n) {
  return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

// Which worker ran each index of one assembly, how often execute ran, and how many had run when
// cleanup did. Outside the assembly, which the runtime destroys once it has ended.
struct trace {
  explicit trace(int width) : where(static_cast<std::size_t>(width)) {
    for (auto& w : where) w = -1;
  }
  std::vector<int> workers() const {
    std::vector<int> out;
    for (const auto& w : where) out.push_back(w.load());
    return out;
  }
  std::vector<std::atomic<int>> where;
  std::atomic<int> runs{0};
  std::atomic<int> cleaned{-1};
};

class recording final : public locus::assembly {
 public:
  recording(trace& t, locus::assembly_entry entry)
      : assembly(static_cast<int>(t.where.size()), entry), t_(t) {}
  void execute(int index) override {
    t_.where[static_cast<std::size_t>(index)] = locus::this_worker();
    t_.runs.fetch_add(1);
  }
  void cleanup() override { t_.cleaned = t_.runs.load(); }

 private:
  trace& t_;
};

TEST(Assembly, EachIndexRunsOnceOnDistinctWorkersThatShareACache) {
  locus::runtime rt{tao()};
  for (const auto entry :
       {locus::assembly_entry::asynchronous, locus::assembly_entry::synchronous}) {
    for (int width : {1, 2, 4, 8}) {
      SCOPED_TRACE("width " + std::to_string(width));
      std::vector<std::unique_ptr<trace>> made;
      rt.exec([&] {
        locus::task_group tg;
        for (int i = 0; i < 16; ++i) {
          made.push_back(std::make_unique<trace>(width));
          auto a = std::make_unique<recording>(*made.back(), entry);
          // Placed on every worker in turn, so that every window of the machine is used.
          a->place_on(i);
          locus::run_assembly(tg, std::move(a));
        }
        tg.wait();
        for (std::size_t i = 0; i < made.size(); ++i) {
          const trace& a = *made[i];
          EXPECT_EQ(a.runs.load(), width);
          EXPECT_EQ(a.cleaned.load(), width) << "cleanup after the last execute";
          const std::vector<int> where = a.workers();
          ASSERT_EQ(std::set<int>(where.begin(), where.end()).size(),
                    static_cast<std::size_t>(width))
              << "distinct workers";
          // The aligned window of `width` workers holding the worker it was placed on: a pair
          // shares an L2, four an L3, eight a package.
          const int first = static_cast<int>(i) / width * width;
          for (int w : where) {
            EXPECT_GE(w, first);
            EXPECT_LT(w, first + width);
          }
        }
      });
    }
  }
}

// Unplaced, an assembly's workers are those around the worker that took it from a queue.
TEST(Assembly, UnplacedWorkersSurroundTheWorkerThatTookIt) {
  locus::runtime rt{tao()};
  struct where_taken final : locus::assembly {
    explicit where_taken(std::vector<int>& out) : assembly(4), out_(out) {}
    void execute(int index) override {
      out_[static_cast<std::size_t>(index)] = locus::this_worker();
    }
    std::vector<int>& out_;
  };
  std::vector<int> seen(4, -1);
  rt.exec([&] {
    locus::task_group tg;
    locus::run_assembly(tg, std::make_unique<where_taken>(seen));
    tg.wait();
  });
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen.back() - seen.front(), 3);
  EXPECT_EQ(seen.front() % 4, 0);
}

// A synchronous assembly's execute starts only once all its workers are there: the other
// worker is busy for a while when the assembly reaches it, and the member on the root's worker
// does not start before.
TEST(Assembly, SynchronousEntryWaitsForEveryWorker) {
  locus::runtime rt{tao(2)};
  struct lockstep final : locus::assembly {
    lockstep(int root_worker, std::atomic<bool>& busy_done, std::atomic<bool>& saw)
        : assembly(2, locus::assembly_entry::synchronous),
          root(root_worker),
          done(busy_done),
          saw_done(saw) {}
    void execute(int) override {
      if (locus::this_worker() == root) saw_done = done.load();
    }
    int root;
    std::atomic<bool>& done;
    std::atomic<bool>& saw_done;
  };
  std::atomic<bool> busy_done{false}, busy_started{false}, saw_done{false};
  rt.exec([&] {
    const int root = locus::this_worker();
    locus::task_group tg;
    // Queued here; the other worker steals it (the only stealable work) and is busy with it.
    tg.run(
        [&] {
          if (locus::this_worker() == root) return;
          busy_started = true;
          std::this_thread::sleep_for(50ms);
          busy_done = true;
        },
        locus::parent_first);
    while (!busy_started.load()) std::this_thread::yield();
    auto a = std::make_unique<lockstep>(root, busy_done, saw_done);
    a->place_on(0);  // both workers
    locus::run_assembly(tg, std::move(a));
    tg.wait();
  });
  EXPECT_TRUE(busy_started.load());
  EXPECT_TRUE(saw_done.load());
}

// Assembly queues are FIFO and every worker gets the assemblies that share it in one order:
// 40 synchronous assemblies over the same two workers run in the same order on both (an
// asynchronous one's member for the worker that takes it runs at once, outside that order).
TEST(Assembly, AssemblyQueuesKeepOneOrderOnEveryWorker) {
  locus::runtime rt{tao(4)};
  std::mutex lock;
  std::map<int, std::vector<int>> order;  // worker -> assembly numbers in the order run
  struct numbered final : locus::assembly {
    numbered(int n, std::mutex& l, std::map<int, std::vector<int>>& o)
        : assembly(2, locus::assembly_entry::synchronous), number(n), lock(l), order(o) {}
    void execute(int) override {
      const std::lock_guard hold(lock);
      order[locus::this_worker()].push_back(number);
    }
    int number;
    std::mutex& lock;
    std::map<int, std::vector<int>>& order;
  };
  rt.exec([&] {
    locus::task_group tg;
    for (int n = 0; n < 40; ++n) {
      auto a = std::make_unique<numbered>(n, lock, order);
      a->place_on(2);  // workers 2 and 3
      locus::run_assembly(tg, std::move(a));
    }
    tg.wait();
  });
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order.at(2).size(), 40u);
  EXPECT_EQ(order.at(2), order.at(3));
}

// Many assemblies of mixed widths and both entry modes, placed at random or where they are
// taken, from tasks on every worker: all of them run, and none waits forever for a worker that
// waits for it. A watchdog turns a deadlock into a failure.
TEST(Assembly, RacingAssembliesNeverDeadlock) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  constexpr int count = 2000;
#else
  constexpr int count = 10000;
#endif
  locus::runtime rt{tao()};
  std::optional<locus_test::watchdog> guard;
  guard.emplace("Assembly.RacingAssembliesNeverDeadlock", 240s);
  std::atomic<long> executed{0}, cleaned{0};
  struct counted final : locus::assembly {
    counted(int width, locus::assembly_entry e, std::atomic<long>& ex, std::atomic<long>& cl)
        : assembly(width, e), executed(ex), cleaned(cl) {}
    void execute(int) override { executed.fetch_add(1); }
    void cleanup() override { cleaned.fetch_add(1); }
    std::atomic<long>& executed;
    std::atomic<long>& cleaned;
  };
  long expected = 0;
  std::vector<std::unique_ptr<counted>> made;
  std::mt19937 rng(7);
  for (int i = 0; i < count; ++i) {
    const int width = 1 << (rng() % 4);
    auto a = std::make_unique<counted>(
        width, rng() % 2 ? locus::assembly_entry::synchronous : locus::assembly_entry::asynchronous,
        executed, cleaned);
    if (rng() % 2) a->place_on(static_cast<int>(rng() % 16));
    expected += width;
    made.push_back(std::move(a));
  }
  rt.exec([&] {
    locus::task_group spreaders;
    constexpr int parts = 64;
    for (int p = 0; p < parts; ++p) {
      spreaders.run([&, p] {
        locus::task_group tg;
        for (int i = p; i < count; i += parts)
          locus::run_assembly(tg, std::move(made[static_cast<std::size_t>(i)]));
        tg.wait();
      });
    }
    spreaders.wait();
  });
  guard.reset();
  EXPECT_EQ(executed.load(), expected);
  EXPECT_EQ(cleaned.load(), count);
}

// An exception from execute reaches the waiting code; cleanup still runs once; the other
// member's exception is dropped and counted in the runtime's statistics.
TEST(Assembly, ExceptionsReachTheWaitAndCleanupStillRuns) {
  locus::runtime rt{tao()};
  struct throwing final : locus::assembly {
    explicit throwing(std::atomic<int>& c) : assembly(4), cleaned(c) {}
    void execute(int index) override {
      if (index % 2 == 1) throw std::runtime_error("member " + std::to_string(index));
    }
    void cleanup() override { cleaned.fetch_add(1); }
    std::atomic<int>& cleaned;
  };
  std::atomic<int> cleaned{0};
  std::string caught;
  rt.exec([&] {
    locus::task_group tg;
    locus::run_assembly(tg, std::make_unique<throwing>(cleaned));
    try {
      tg.wait();
    } catch (const std::runtime_error& e) {
      caught = e.what();
    }
  });
  EXPECT_TRUE(caught == "member 1" || caught == "member 3") << caught;
  EXPECT_EQ(rt.stats().suppressed_exceptions, 1u);
  EXPECT_EQ(cleaned.load(), 1);
}

TEST(Assembly, BadWidthOrPlacementFailsWithInvalidArgument) {
  struct any final : locus::assembly {
    explicit any(int width) : assembly(width) {}
    void execute(int) override {}
  };
  EXPECT_THROW(any(0), std::invalid_argument);
  locus::runtime rt{tao(4)};
  for (int bad : {0, 1}) {
    bool threw = false;
    rt.exec([&] {
      locus::task_group tg;
      auto a = std::make_unique<any>(bad == 0 ? 5 : 2);  // wider than the runtime; or placed off it
      if (bad == 1) a->place_on(4);
      locus::run_assembly(tg, std::move(a));
      try {
        tg.wait();
      } catch (const std::invalid_argument&) {
        threw = true;
      }
    });
    EXPECT_TRUE(threw) << bad;
  }
}

// Runtime nesting: each member runs task groups of its own (stolen by the other workers, the
// assembly's or not), and the assembly still ends when they have.
TEST(Assembly, ExecuteCanUseTaskGroups) {
  locus::runtime rt{tao()};
  struct nested final : locus::assembly {
    explicit nested(std::vector<long>& out)
        : assembly(4, locus::assembly_entry::synchronous), results(out) {}
    void execute(int index) override {
      results[static_cast<std::size_t>(index)] = locus_test::fib(18 + index);
    }
    std::vector<long>& results;
  };
  std::vector<std::vector<long>> results(8, std::vector<long>(4, -1));
  rt.exec([&] {
    locus::task_group tg;
    for (auto& r : results) locus::run_assembly(tg, std::make_unique<nested>(r));
    tg.wait();
  });
  for (const auto& r : results) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r[static_cast<std::size_t>(i)], serial_fib(18 + i));
  }
}

// Every scheduler runs assemblies (the core's gangs); ws here.
TEST(Assembly, RunsUnderOtherSchedulersToo) {
  locus::runtime rt{locus::options{.sched = "ws", .workers = 16, .topology = kSixteen}};
  trace t(8);
  auto a = std::make_unique<recording>(t, locus::assembly_entry::synchronous);
  a->place_on(9);
  rt.exec([&] {
    locus::task_group tg;
    locus::run_assembly(tg, std::move(a));
    tg.wait();
  });
  const std::vector<int> where = t.workers();
  for (int w : where) EXPECT_GE(w, 8);
  EXPECT_EQ(std::set<int>(where.begin(), where.end()).size(), 8u);
}

// A worker that dispatches an assembly goes on at once: it hands the members out and does not
// wait for them (the last member to end frees the assembly). Twenty assemblies placed on the
// other worker, each member slow, dispatched by the root's join, which then suspends once for all
// of them; a dispatcher that waited for its members would suspend once per assembly.
class slow_member final : public locus::assembly {
 public:
  slow_member(std::vector<int>& where, int slot, int on)
      : assembly(1, locus::assembly_entry::asynchronous), where_(where), slot_(slot) {
    place_on(on);
  }
  void execute(int) override {
    std::this_thread::sleep_for(200us);
    where_[static_cast<std::size_t>(slot_)] = locus::this_worker();
  }

 private:
  std::vector<int>& where_;
  int slot_;
};

TEST(Assembly, ADispatcherDoesNotWaitForItsMembers) {
  locus_test::saved_env no_steal("LOCUS_TAO_STEAL", "0");
  locus::runtime rt{tao(2)};
  constexpr int assemblies = 20;
  std::vector<int> where(assemblies, -1);
  int root = -1;
  rt.exec([&] {
    root = locus::this_worker();
    locus::task_group tg;
    for (int i = 0; i < assemblies; ++i) {
      locus::run_assembly(tg, std::make_unique<slow_member>(where, i, 1 - root));
    }
    tg.wait();
  });
  ASSERT_TRUE(root == 0 || root == 1);
  EXPECT_EQ(where, std::vector<int>(assemblies, 1 - root));
  const auto s = rt.stats();
  EXPECT_LE(s.workers[static_cast<std::size_t>(root)].suspensions, 1u);
  EXPECT_EQ(s.workers[static_cast<std::size_t>(root)].pushes,
            static_cast<std::uint64_t>(assemblies));
}

// An assembly whose members never wait for one another, taken by one of its own workers, runs
// that worker's member at once, inside the dispatch: before anything else the worker has queued.
// The root queues a marker task, then the assembly; its join pops the assembly first (newest
// first) and dispatches it. A member put into the dispatcher's assembly queue instead would run
// only after the join had also run the marker.
class ordered_member final : public locus::assembly {
 public:
  ordered_member(std::vector<std::string>& order, std::mutex& lock, int root)
      : assembly(2, locus::assembly_entry::asynchronous), order_(order), lock_(lock), root_(root) {
    place_on(root);
  }
  void execute(int) override {
    if (locus::this_worker() != root_) return;
    const std::lock_guard hold(lock_);
    order_.push_back("own member");
  }

 private:
  std::vector<std::string>& order_;
  std::mutex& lock_;
  int root_;
};

TEST(Assembly, TheDispatchersOwnMemberRunsAtOnce) {
  locus_test::saved_env no_steal("LOCUS_TAO_STEAL", "0");
  locus::runtime rt{tao(2)};
  std::vector<std::string> order;
  std::mutex lock;
  rt.exec([&] {
    const int root = locus::this_worker();
    locus::task_group tg;
    tg.run(
        [&] {
          const std::lock_guard hold(lock);
          order.push_back("marker");
        },
        locus::parent_first);
    locus::run_assembly(tg, std::make_unique<ordered_member>(order, lock, root));
    tg.wait();
  });
  EXPECT_EQ(order, (std::vector<std::string>{"own member", "marker"}));
}

// Without stealing of PolyTasks (Table 3's second column), plain tasks stay where they were
// queued, and work spreads only through assemblies.
TEST(Tao, WithoutStealingTasksStayAndAssembliesStillSpread) {
  locus_test::saved_env no_steal("LOCUS_TAO_STEAL", "0");
  locus::runtime rt{tao(4)};
  std::set<int> task_workers;
  std::mutex lock;
  trace t(4);
  rt.exec([&] {
    locus::task_group tg;
    for (int i = 0; i < 64; ++i) {
      tg.run([&] {
        const std::lock_guard hold(lock);
        task_workers.insert(locus::this_worker());
      });
    }
    locus::run_assembly(tg, std::make_unique<recording>(t, locus::assembly_entry::asynchronous));
    tg.wait();
  });
  const std::vector<int> where = t.workers();
  EXPECT_EQ(std::set<int>(where.begin(), where.end()).size(), 4u);
  EXPECT_EQ(task_workers.size(), 1u);
  EXPECT_EQ(rt.stats().total().stolen_items, 0u);
  EXPECT_NE(rt.describe().find("LOCUS_TAO_STEAL"), std::string::npos);
}

TEST(Tao, BadStealSettingIsRejectedByName) {
  locus_test::saved_env bad("LOCUS_TAO_STEAL", "sometimes");
  try {
    locus::runtime rt{tao(2)};
    ADD_FAILURE() << "accepted";
  } catch (const locus::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("LOCUS_TAO_STEAL"), std::string::npos) << e.what();
  }
}

}  // namespace
