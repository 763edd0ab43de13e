// locus::dist_taskq under mpirun (tests/dist/CMakeLists.txt runs this program with 1, 2 and 4
// ranks, and without a launcher). Every rank runs every test in the same order; checks are
// EXPECTs, never ASSERTs, so that a failing rank still takes part in the collective calls that
// follow. Results are checked on the rank that put the work.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "benchmarks/uts_tree.hpp"
#include "locus/dist_taskq.hpp"
#include "locus/runtime.hpp"
#include "saved_env.hpp"

#include <unistd.h>

namespace {

namespace uts = locus_bench::uts;

// The queue the running test's task functions put into (set identically on every rank).
locus::dist_taskq* q = nullptr;

// ---- UTS: a task per child, the output the child's subtree counts --------------------------

const uts::tree_params* tree = nullptr;  // the same named tree on every rank

struct uts_input {
  uts::state parent;
  int index;  // -1: the node is `parent` itself (the root)
  int height;
};

uts::counts search(const uts::state& s, int height);

void uts_task(const uts_input& in, uts::counts& out) {
  out = search(in.index < 0 ? in.parent : uts::child_state(in.parent, in.index), in.height);
}

uts::counts search(const uts::state& s, int height) {
  const int k = uts::num_children(*tree, s, height);
  if (k <= 0) return {1, 1, height};
  std::vector<uts::counts> r(static_cast<std::size_t>(k));
  for (int i = 0; i < k; ++i) q->put(uts_task, uts_input{s, i, height + 1}, r[i]);
  q->wait();
  uts::counts total{1, 0, 0};
  for (const auto& c : r) total += c;
  return total;
}

void check_tree(const char* name) {
  const uts::named_tree* t = uts::find_tree(name);
  tree = &t->params;
  locus::dist_taskq queue{locus::task_function(uts_task)};
  q = &queue;
  uts::counts got{};
  // The root is a task too: a wait at the top level is collective, so rank 0 must not search
  // (and wait) there itself.
  locus::root_exec([&] {
    if (queue.rank() == 0)
      queue.put(uts_task, uts_input{uts::root_state(tree->root_seed), -1, 0}, got);
    queue.wait();
  });
  if (queue.rank() == 0) {
    EXPECT_EQ(got, t->expected) << name << ": " << uts::to_string(got);
  }
}

TEST(DistUts, S1) {
  check_tree("S1");
}
TEST(DistUts, T1) {
  check_tree("T1");
}
TEST(DistUts, T3) {
  check_tree("T3");
}

// ---- UTS in HotSLAW's form: output-less tasks, counts kept per worker ----------------------

struct alignas(64) tally {
  uts::counts c{0, 0, 0};
};
std::vector<tally>* tallies = nullptr;  // this rank's, one per worker

void uts_seed_task(const uts_input& in) {
  const uts::state s = in.index < 0 ? in.parent : uts::child_state(in.parent, in.index);
  const int k = uts::num_children(*tree, s, in.height);
  (*tallies)[static_cast<std::size_t>(locus::this_worker())].c.count_node(k, in.height);
  for (int i = 0; i < k; ++i) q->put(uts_seed_task, uts_input{s, i, in.height + 1});
}

uts::counts sum(const std::vector<tally>& all) {
  uts::counts total{0, 0, 0};
  for (const tally& t : all) total += t.c;
  return total;
}

// One search of a named tree in the seed's form: every rank's tally and counters, on rank 0.
struct seed_form_run {
  std::vector<tally> per_rank;
  std::vector<locus::dist_rank_stats> stats;
};

seed_form_run run_seed_form(const uts::named_tree& t) {
  tree = &t.params;
  locus::dist_taskq queue{locus::task_function(uts_seed_task)};
  q = &queue;
  std::vector<tally> mine(static_cast<std::size_t>(locus::num_workers()));
  tallies = &mine;
  locus::root_exec([&] {
    if (queue.rank() == 0)
      queue.put(uts_seed_task, uts_input{uts::root_state(tree->root_seed), -1, 0});
    queue.wait();
  });
  seed_form_run run;
  run.per_rank = queue.gather(tally{sum(mine)});
  run.stats = queue.gather_stats();
  return run;
}

// The counts are exact; nothing went back as an output; every task is counted on the rank that
// ran it.
void check_tree_seed_form(const char* name) {
  const uts::named_tree* t = uts::find_tree(name);
  const seed_form_run run = run_seed_form(*t);
  if (run.stats.empty()) return;  // not rank 0
  ASSERT_EQ(run.per_rank.size(), run.stats.size());
  EXPECT_EQ(sum(run.per_rank), t->expected) << name << ": " << uts::to_string(sum(run.per_rank));
  for (const auto& s : run.stats) {
    EXPECT_EQ(s.outputs_sent, 0u) << "rank " << s.rank;
    EXPECT_EQ(s.tasks, run.per_rank[static_cast<std::size_t>(s.rank)].c.nodes) << "rank " << s.rank;
  }
}

TEST(DistUtsSeedForm, S1) {
  check_tree_seed_form("S1");
}
TEST(DistUtsSeedForm, T3) {
  check_tree_seed_form("T3");
}

// A thief's request that finds the pool nearly empty waits while the victim's puts fill it, so
// that a steal on a deep, narrow tree (T3: most pending work is one level's few siblings) moves a
// batch, not one or two tasks.
TEST(DistUtsSeedForm, StealsOnTheDeepTreeMoveBatches) {
  const seed_form_run run = run_seed_form(*uts::find_tree("T3"));
  if (run.stats.size() != 2) return;  // not rank 0, or not 2 ranks
  std::uint64_t served = 0, moved = 0;
  for (const auto& s : run.stats) {
    served += s.steals_served;
    moved += s.tasks_sent;
  }
  ASSERT_GT(served, 0u);
  EXPECT_GE(static_cast<double>(moved) / static_cast<double>(served), 4.0)
      << moved << " tasks in " << served << " steals";
}

// ---- an output-less task that moved is joined by the top-level wait, not by its putter -------

struct detached_input {
  int job;          // rank 0's process id: names this job's marker file
  int parent_rank;  // where the putter runs
};

std::string marker_path(int job) {
  return "/tmp/locus_dist_join_" + std::to_string(job);
}

int detached_ran = 0;       // children run on this rank
int detached_away = 0;      // of them, away from their putter's rank
int detached_saw_join = 0;  // of those, the ones that saw the putter's join return

// On another rank than its putter's, the child waits for the marker the putter writes once its
// wait has returned: a putter whose join waited for this child would never write it (the child
// gives up after 30 s, and the test fails).
void detached_child(const detached_input& in) {
  ++detached_ran;
  if (q->rank() == in.parent_rank) {
    // Leaves the other children queued long enough for the other ranks to steal them.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return;
  }
  ++detached_away;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    if (FILE* f = std::fopen(marker_path(in.job).c_str(), "r"); f != nullptr) {
      std::fclose(f);
      ++detached_saw_join;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void detached_parent(const detached_input& in) {
  const detached_input mine{in.job, q->rank()};
  for (int i = 0; i < 8; ++i) q->put(detached_child, mine);
  q->wait();
  if (FILE* f = std::fopen(marker_path(in.job).c_str(), "w"); f != nullptr) std::fclose(f);
}

TEST(DistJoin, AnOutputLessTaskThatMovedIsNotWaitedForByItsPutter) {
  locus::dist_taskq queue{locus::task_function(detached_parent),
                          locus::task_function(detached_child)};
  q = &queue;
  detached_ran = 0;
  detached_away = 0;
  detached_saw_join = 0;
  const int job = static_cast<int>(::getpid());
  locus::root_exec([&] {
    if (queue.rank() == 0) queue.put(detached_parent, detached_input{job, 0});
    queue.wait();
  });
  const std::array<int, 3> mine{detached_ran, detached_away, detached_saw_join};
  const std::vector<std::array<int, 3>> all = queue.gather(mine);
  if (queue.rank() != 0) return;
  std::remove(marker_path(job).c_str());
  int ran = 0, away = 0, saw = 0;
  for (const auto& r : all) {
    ran += r[0];
    away += r[1];
    saw += r[2];
  }
  EXPECT_EQ(ran, 8);
  EXPECT_EQ(saw, away) << "a putter's join waited for an output-less child on another rank";
  if (queue.ranks() > 1) {
    EXPECT_GT(away, 0) << "no child moved to another rank";
  }
}

// ---- fib and nqueens -----------------------------------------------------------------------

// Calls below fib_leaf run serially (each test sets it, the same on every rank).
int fib_leaf = 8;

void fib_task(const int& n, long& out) {
  if (n < fib_leaf) {
    long a = 0, b = 1;
    for (int i = 0; i < n; ++i) a = std::exchange(b, a + b);
    out = a;
    return;
  }
  long x = 0, y = 0;
  q->put(fib_task, n - 1, x);
  q->put(fib_task, n - 2, y);
  q->wait();
  out = x + y;
}

// Read on every rank before anything collective, so a malformed value ends each rank alike.
TEST(DistConfig, MalformedSettingsAreRejectedNamingTheVariable) {
  const std::pair<const char*, const char*> bad[] = {{"LOCUS_DIST_STEAL", "some"},
                                                     {"LOCUS_DIST_STEAL", "0"},
                                                     {"LOCUS_DIST_POOL", "x"},
                                                     {"LOCUS_DIST_DELAY_US", "-1"},
                                                     {"LOCUS_DIST_NODE_SIZE", "0"}};
  for (const auto& [name, value] : bad) {
    const locus_test::saved_env env(name, value);
    try {
      locus::dist_taskq queue{locus::task_function(fib_task)};
      ADD_FAILURE() << name << "=" << value << " was accepted";
    } catch (const locus::config_error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      if (std::string_view(name) == "LOCUS_DIST_STEAL") {
        EXPECT_NE(std::string(e.what()).find("half, one, or a task count"), std::string::npos)
            << e.what();
      }
    }
  }
}

// Choices read like every other variable's: blanks around them and case do not matter.
TEST(DistConfig, StealChoicesAreTrimmedAndCaseInsensitive) {
  for (const char* value : {" HALF ", "One", " 8 "}) {
    const locus_test::saved_env env("LOCUS_DIST_STEAL", value);
    EXPECT_NO_THROW(locus::dist_taskq{locus::task_function(fib_task)}) << value;
  }
}

TEST(DistFib, Exact) {
  fib_leaf = 8;
  locus::dist_taskq queue{locus::task_function(fib_task)};
  q = &queue;
  long r = 0;
  locus::root_exec([&] {
    if (queue.rank() == 0) queue.put(fib_task, 27, r);
    queue.wait();
  });
  if (queue.rank() == 0) {
    EXPECT_EQ(r, 196418);
  }
}

struct queens_input {
  std::uint32_t cols, left, right;  // attacked columns, by column and by both diagonals
  int row, n;
};

void queens_task(const queens_input& in, std::uint64_t& out) {
  if (in.row == in.n) {
    out = 1;
    return;
  }
  const std::uint32_t all = (std::uint32_t{1} << in.n) - 1;
  std::uint32_t free = all & ~(in.cols | in.left | in.right);
  std::array<std::uint64_t, 32> sub{};
  int k = 0;
  while (free != 0) {
    const std::uint32_t bit = free & -free;
    free &= free - 1;
    q->put(queens_task,
           queens_input{in.cols | bit, ((in.left | bit) << 1) & all, (in.right | bit) >> 1,
                        in.row + 1, in.n},
           sub[static_cast<std::size_t>(k++)]);
  }
  q->wait();
  out = std::accumulate(sub.begin(), sub.begin() + k, std::uint64_t{0});
}

TEST(DistNqueens, Exact) {
  locus::dist_taskq queue{locus::task_function(queens_task)};
  q = &queue;
  std::uint64_t r = 0;
  locus::root_exec([&] {
    if (queue.rank() == 0) queue.put(queens_task, queens_input{0, 0, 0, 0, 10}, r);
    queue.wait();
  });
  if (queue.rank() == 0) {
    EXPECT_EQ(r, 724u);
  }
}

// ---- work put on rank 0 spreads to every rank ----------------------------------------------

// Sleeps rather than computes, so that rank 0 cannot finish the graph alone before the others,
// however the cores are shared between oversubscribed ranks.
void nap_task(const int& ms, int& ran_on) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  ran_on = q->rank();
}

TEST(DistSpread, EveryRankRunsTasksPutOnRankZero) {
  locus::dist_taskq queue{locus::task_function(nap_task)};
  q = &queue;
  constexpr int n = 96;
  std::vector<int> ran_on(n, -1);
  locus::root_exec([&] {
    if (queue.rank() == 0) {
      for (int i = 0; i < n; ++i) queue.put(nap_task, 5, ran_on[static_cast<std::size_t>(i)]);
    }
    queue.wait();
  });
  const std::vector<locus::dist_rank_stats> all = queue.gather_stats();
  if (queue.rank() != 0) return;
  ASSERT_EQ(static_cast<int>(all.size()), queue.ranks());
  std::vector<int> per_rank(static_cast<std::size_t>(queue.ranks()), 0);
  for (int r : ran_on) {
    ASSERT_GE(r, 0) << "an output did not come back";
    ++per_rank[static_cast<std::size_t>(r)];
  }
  std::uint64_t tasks = 0;
  for (const auto& s : all) {
    const auto r = static_cast<std::size_t>(s.rank);
    tasks += s.tasks;
    EXPECT_EQ(s.tasks, static_cast<std::uint64_t>(per_rank[r])) << "rank " << s.rank;
    if (queue.ranks() == 1) continue;
    if (s.rank == 0) {
      EXPECT_GT(s.steals_served, 0u);
      EXPECT_EQ(s.tasks_received, 0u);
    } else {
      EXPECT_GT(s.steals_sent, 0u) << "rank " << s.rank;
      EXPECT_GT(s.tasks_received, 0u) << "rank " << s.rank;
      EXPECT_GT(per_rank[r], 0) << "rank " << s.rank;
    }
  }
  EXPECT_EQ(tasks, static_cast<std::uint64_t>(n));
}

// ---- victims by node (HVS one level up) -----------------------------------------------------

// The counters of a run of nap tasks put on rank 0, on rank 0 (empty elsewhere).
std::vector<locus::dist_rank_stats> nap_run(int n) {
  locus::dist_taskq queue{locus::task_function(nap_task)};
  q = &queue;
  std::vector<int> ran_on(static_cast<std::size_t>(n), -1);
  locus::root_exec([&] {
    if (queue.rank() == 0) {
      for (auto& r : ran_on) queue.put(nap_task, 3, r);
    }
    queue.wait();
  });
  if (queue.rank() == 0) {
    for (int r : ran_on) EXPECT_GE(r, 0) << "an output did not come back";
  }
  return queue.gather_stats();
}

// With LOCUS_DIST_NODE_SIZE=2 ranks {0, 1}, {2, 3} share nodes: a rank asks its node first (its
// first request, and every request until as many as its node has other ranks came back empty),
// so every rank that stole asked its node at least once; with 1 (a node per rank) no request
// stays on a node; without the setting all ranks of this machine share one node.
TEST(DistNodes, AThiefAsksItsOwnNodeFirst) {
  for (const char* size : {"2", "1", ""}) {
    const locus_test::saved_env env("LOCUS_DIST_NODE_SIZE", size);
    const std::vector<locus::dist_rank_stats> all = nap_run(48);
    if (all.size() < 2) continue;  // not rank 0, or one rank
    const bool pairs = std::string(size) == "2";
    const bool one_node = *size == '\0' || (pairs && all.size() == 2);
    for (const auto& s : all) {
      if (s.steals_sent == 0) continue;
      if (one_node) {
        EXPECT_EQ(s.steals_sent_node, s.steals_sent) << "size '" << size << "' rank " << s.rank;
      } else if (pairs) {
        EXPECT_GE(s.steals_sent_node, 1u) << "rank " << s.rank;
        EXPECT_LE(s.steals_sent_node, s.steals_sent) << "rank " << s.rank;
      } else {
        EXPECT_EQ(s.steals_sent_node, 0u) << "rank " << s.rank;
      }
    }
    std::uint64_t tasks = 0;
    for (const auto& s : all) tasks += s.tasks;
    EXPECT_EQ(tasks, 48u) << "size '" << size << "'";
  }
}

// ---- inputs and outputs far larger than any eager message ----------------------------------

constexpr std::size_t big = std::size_t{1} << 20;  // bytes of each input and of each output

// The output is the input reversed, its first 8 bytes replaced by the input's byte sum.
void reverse_task(void* in, void* out) {
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < big; ++i) {
    sum += src[i];
    dst[big - 1 - i] = src[i];
  }
  std::memcpy(dst, &sum, sizeof sum);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // leave time to be stolen
}

TEST(DistLargeBuffers, MegabyteInputsAndOutputsTravel) {
  locus::dist_taskq queue{locus::task_function(reverse_task, big, big)};
  q = &queue;
  constexpr int n = 24;
  std::vector<std::vector<unsigned char>> in(n, std::vector<unsigned char>(big));
  std::vector<std::vector<unsigned char>> out(n, std::vector<unsigned char>(big));
  for (int t = 0; t < n; ++t) {
    for (std::size_t i = 0; i < big; ++i) {
      in[static_cast<std::size_t>(t)][i] = static_cast<unsigned char>(i * 31 + t * 7 + (i >> 9));
    }
  }
  locus::root_exec([&] {
    if (queue.rank() == 0) {
      for (int t = 0; t < n; ++t) {
        queue.put(reverse_task, in[static_cast<std::size_t>(t)].data(),
                  out[static_cast<std::size_t>(t)].data());
      }
    }
    queue.wait();
  });
  const std::vector<locus::dist_rank_stats> all = queue.gather_stats();
  if (queue.rank() != 0) return;
  for (int t = 0; t < n; ++t) {
    const auto& i = in[static_cast<std::size_t>(t)];
    const auto& o = out[static_cast<std::size_t>(t)];
    const std::uint64_t sum = std::accumulate(i.begin(), i.end(), std::uint64_t{0});
    std::uint64_t got = 0;
    std::memcpy(&got, o.data(), sizeof got);
    EXPECT_EQ(got, sum) << "task " << t;
    bool reversed = true;
    for (std::size_t k = sizeof got; k < big; ++k) reversed = reversed && o[k] == i[big - 1 - k];
    EXPECT_TRUE(reversed) << "task " << t;
  }
  if (queue.ranks() > 1) {
    std::uint64_t moved = 0;
    for (const auto& s : all) moved += s.tasks_received;
    EXPECT_GT(moved, 0u) << "no large task crossed ranks";
  }
}

// ---- the communication thread's sleep ------------------------------------------------------

// On one node every rank can ring the others' bells (src/dist/node_doorbells.hpp), so a
// communication thread with nothing to do sleeps up to 20 ms at a time instead of polling once a
// millisecond. Each rank computes for a while without touching the queue: its thread wakes a few
// dozen times, where polling would have woken it once a millisecond.
TEST(DistComm, IdleCommunicationThreadsSleepUntilRung) {
  fib_leaf = 2;
  locus::dist_taskq queue{locus::task_function(fib_task)};
  q = &queue;
  long r = -1;
  locus::root_exec([&] {
    if (queue.rank() == 0) queue.put(fib_task, 12, r);
    queue.wait();
  });
  queue.reset_stats();
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t spins = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(400)) ++spins;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const std::vector<locus::dist_rank_stats> all = queue.gather_stats();
  EXPECT_GT(spins, 0u);
  if (queue.rank() != 0) return;
  EXPECT_EQ(r, 144);
  for (const auto& s : all) {
    EXPECT_LT(static_cast<double>(s.comm_wakeups), 20 + ms / 4)
        << "rank " << s.rank << " over " << ms << " ms";
  }
}

// ---- termination: many small epochs, every task counted ------------------------------------

// Run by CTest also with LOCUS_DIST_DELAY_US set, which delays every message's handling by a
// random time: the token and the tasks then overtake each other in every order.
TEST(DistTermination, ManyEpochsEveryTaskCounted) {
  fib_leaf = 2;  // a task per call
  locus::dist_taskq queue{locus::task_function(fib_task)};
  q = &queue;
  constexpr int runs = 1000;
  constexpr std::uint64_t tasks_per_run = 465;  // calls of fib(12) with a task per call
  int wrong = 0;
  locus::root_exec([&] {
    for (int run = 0; run < runs; ++run) {
      long r = -1;
      // The root moves from rank to rank, so that every rank starts epochs.
      const bool mine = run % queue.ranks() == queue.rank();
      if (mine) queue.put(fib_task, 12, r);
      queue.wait();
      if (mine && r != 144) ++wrong;
    }
  });
  EXPECT_EQ(wrong, 0);
  const std::vector<locus::dist_rank_stats> all = queue.gather_stats();
  if (queue.rank() != 0) return;
  std::uint64_t tasks = 0;
  for (const auto& s : all) tasks += s.tasks;
  EXPECT_EQ(tasks, tasks_per_run * runs);
}

// HotSLAW's SPMD loop: all_empty() is the collective test, execute() and steal() the work.
TEST(DistTermination, AllEmptyLoop) {
  fib_leaf = 2;
  locus::dist_taskq queue{locus::task_function(fib_task)};
  q = &queue;
  long r = -1;
  locus::root_exec([&] {
    if (queue.rank() == 0) queue.put(fib_task, 16, r);
    while (!queue.all_empty()) {
      if (!queue.execute()) queue.steal();
    }
    queue.wait();  // joins the top level's tasks: their outputs are defined after it
  });
  if (queue.rank() == 0) {
    EXPECT_EQ(r, 987);
  }
}

}  // namespace
