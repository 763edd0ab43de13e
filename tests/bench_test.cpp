// locus-bench: benchmark correctness on locus (1 and 2 workers, 16 on a synthetic topology) and
// on the peers, the peers' par_policy loops and reductions, the SHA-1 behind UTS, the command-line
// parser and planner, and the JSON output.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <locus/locus.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench_instance.hpp"
#include "benchmarks/par_policy.hpp"
#include "benchmarks/sha1.hpp"
#include "benchmarks/uts_tree.hpp"
#include "harness/app.hpp"
#include "harness/cli.hpp"
#include "harness/regions.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "saved_env.hpp"
#include "text_lines.hpp"

namespace {

using namespace locus_bench;
using sets = locus_test::bench_sets;
using locus_test::prepare_small;

// Sanitizer builds run several times slower: there the UTS tests search a 63K-node binomial tree
// of T3's generator with q = 0.12 (depth 124; its counts are the serial search's) instead of T3
// itself (4.1M nodes), a size that the taskq test can search on every scheduler in seconds.
#if defined(LOCUS_TSAN) || defined(LOCUS_ASAN)
const sets uts_tree{{"tree", "custom"}, {"type", "bin"}, {"b0", "2000"},
                    {"q", "0.12"},      {"m", "8"},      {"r", "42"}};
const std::string uts_counts = "nodes=62689 leaves=55102 depth=124";
#else
const sets uts_tree{{"tree", "T3"}};
const std::string uts_counts = uts::to_string(uts::find_tree("T3")->expected);
#endif

// Prepares, runs once inside `where`, verifies.
verdict run_once(region& where, impl which, int workers, const std::string& name,
                 const sets& overrides) {
  auto inst = prepare_small(name, overrides);
  inst->reset();
  const run_context ctx{which, workers};
  where.execute([&] { inst->run(ctx); });
  return inst->verify();
}

struct bench_case {
  const char* bench;
  sets overrides;
  std::string expected;  // verdict::result
};

std::vector<bench_case> cases() {
  return {
      {"fib", {{"n", "25"}}, "75025"},
      {"nqueens", {{"n", "10"}}, "724"},
      {"uts", uts_tree, uts_counts},
  };
}

void check_all_on_locus(const locus::options& opts) {
  locus::runtime rt{opts};
  const auto where = make_locus_region(rt);
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.bench);
    const verdict v = run_once(*where, impl::locus, rt.num_workers(), c.bench, c.overrides);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_EQ(v.result, c.expected);
  }
}

TEST(BenchLocus, OneWorker) {
  check_all_on_locus(locus::options{.workers = 1});
}

TEST(BenchLocus, TwoWorkers) {
  check_all_on_locus(locus::options{.workers = 2});
}

TEST(BenchLocus, SixteenWorkersSyntheticTopology) {
  check_all_on_locus(locus::options{.workers = 16, .topology = "pack:2 l3:1 l2:8 core:1 pu:1"});
}

TEST(BenchLocus, NqueensCutoffAndFibBaseCases) {
  locus::runtime rt{locus::options{.workers = 2}};
  const auto where = make_locus_region(rt);
  for (const char* n : {"0", "1", "2"}) {
    const verdict v = run_once(*where, impl::locus, 2, "fib", {{"n", n}});
    EXPECT_TRUE(v.ok) << "fib " << n << ": " << v.message;
  }
  for (const char* n : {"1", "2", "3", "6"}) {
    const verdict v = run_once(*where, impl::locus, 2, "nqueens", {{"n", n}});
    EXPECT_TRUE(v.ok) << "nqueens " << n << ": " << v.message;
  }
  const verdict v = run_once(*where, impl::locus, 2, "nqueens", {{"n", "11"}, {"cutoff", "3"}});
  EXPECT_TRUE(v.ok) << v.message;
  EXPECT_EQ(v.result, "2680");
}

// knapsack's work depends on the order its bounds are found in: one worker searches in the
// serial elision's order and visits exactly its nodes; two may visit more (or fewer), which is
// what the node count lets a run's work inflation be checked against.
std::int64_t knapsack_nodes(const verdict& v) {
  const auto at = v.result.find("nodes=");
  if (at == std::string::npos) return -1;
  return std::stoll(v.result.substr(at + 6));
}

TEST(BenchLocus, KnapsackReportsTheNodesItVisited) {
  const sets small{};
  const verdict serial = run_once(*make_serial_region(), impl::serial, 1, "knapsack", small);
  ASSERT_TRUE(serial.ok) << serial.message;
  const std::int64_t serial_nodes = knapsack_nodes(serial);
  ASSERT_GT(serial_nodes, 44) << serial.result;
  locus::runtime one{locus::options{.workers = 1}};
  const verdict v1 = run_once(*make_locus_region(one), impl::locus, 1, "knapsack", small);
  EXPECT_TRUE(v1.ok) << v1.message;
  EXPECT_EQ(knapsack_nodes(v1), serial_nodes);
  locus::runtime two{locus::options{.workers = 2}};
  const verdict v2 = run_once(*make_locus_region(two), impl::locus, 2, "knapsack", small);
  EXPECT_TRUE(v2.ok) << v2.message;
  EXPECT_GT(knapsack_nodes(v2), 0) << v2.result;
}

// The taskq versions (HotSLAW's task-queue API) of the seed's benchmarks, on every scheduler
// that ships, with fib's cutoff and sparselu's fences.
TEST(BenchTaskq, SeedBenchmarksOnEveryScheduler) {
  std::vector<bench_case> all = cases();
  all.push_back({"fib", {{"n", "22"}, {"cutoff", "10"}}, "17711"});
  all.push_back({"nqueens", {{"n", "11"}, {"cutoff", "3"}}, "2680"});
  for (const char* sched : {"ws", "adws", "ml-adws", "ml-ws", "numa-ws", "hws", "cats", "tao"}) {
    locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
    const auto where = make_locus_region(rt);
    for (const auto& c : all) {
      SCOPED_TRACE(std::string(sched) + " " + c.bench);
      const verdict v = run_once(*where, impl::taskq, 2, c.bench, c.overrides);
      EXPECT_TRUE(v.ok) << v.message;
      EXPECT_EQ(v.result, c.expected);
    }
    const verdict lu = run_once(*where, impl::taskq, 2, "sparselu", {{"nb", "12"}, {"bs", "8"}});
    EXPECT_TRUE(lu.ok) << sched << ": " << lu.message;
  }
}

// UTS through task assemblies (seed 003 §5): the counts of the task-group version, for several
// widths and both entry modes, under tao and ws. Under a sanitizer the tree is S1 cut at depth 7
// (a custom tree, 64K nodes; its counts are the serial search's) instead of S1 (257K), for the
// same reason.
TEST(BenchTao, UtsThroughAssembliesCountsEveryNode) {
#if defined(LOCUS_TSAN) || defined(LOCUS_ASAN)
  const sets tree{{"tree", "custom"}, {"type", "geo"}, {"shape", "fixed"},
                  {"b0", "4"},        {"d", "7"},      {"r", "19"}};
  const std::string counts = "nodes=63914 leaves=51124 depth=7";
#else
  const sets tree{{"tree", "S1"}};
  const std::string counts = "nodes=257042 leaves=205878 depth=8";
#endif
  for (const char* sched : {"tao", "ws"}) {
    locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
    const auto where = make_locus_region(rt);
    for (const char* width : {"1", "2", "3"}) {
      for (const char* entry : {"async", "sync"}) {
        SCOPED_TRACE(std::string(sched) + " width " + width + " " + entry);
        sets overrides = tree;
        overrides.emplace_back("tao_width", width);
        overrides.emplace_back("tao_entry", entry);
        const verdict v = run_once(*where, impl::tao, 2, "uts", overrides);
        EXPECT_TRUE(v.ok) << v.message;
        EXPECT_EQ(v.result, counts);
      }
    }
  }
}

// Cilksort as a flow graph of QuickMerge and Merge assemblies (seed 003 §6): sorted, a
// permutation, for both private schedulers, widths 1 and 2, the hybrid, with and without
// stealing.
TEST(BenchTao, CilksortThroughAssembliesSorts) {
  for (const char* steal : {"1", "0"}) {
    locus_test::saved_env stealing("LOCUS_TAO_STEAL", steal);
    locus::runtime rt{locus::options{.sched = "tao", .workers = 2}};
    const auto where = make_locus_region(rt);
    for (const char* sched : {"dep", "tab"}) {
      for (const char* width : {"1", "2"}) {
        SCOPED_TRACE(std::string(sched) + " width " + width + " steal " + steal);
        const verdict v = run_once(*where, impl::tao, 2, "cilksort",
                                   {{"n", "300000"},
                                    {"tao_leaf", "4096"},
                                    {"tao_sched", sched},
                                    {"tao_width", width},
                                    {"tao_top", "1"}});
        EXPECT_TRUE(v.ok) << v.message;
      }
    }
  }
}

TEST(BenchSerial, AllBenchmarks) {
  const auto where = make_serial_region();
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.bench);
    const verdict v = run_once(*where, impl::serial, 1, c.bench, c.overrides);
    EXPECT_TRUE(v.ok) << v.message;
    EXPECT_EQ(v.result, c.expected);
  }
}

#if LOCUS_BENCH_PEERS
TEST(BenchPeers, TbbAndOmpTwoWorkers) {
  for (const impl which : {impl::tbb, impl::omp}) {
    const auto where = which == impl::tbb ? make_tbb_region(2) : make_omp_region(2);
    for (const auto& c : cases()) {
      SCOPED_TRACE(std::string(to_string(which)) + " " + c.bench);
      const verdict v = run_once(*where, which, 2, c.bench, c.overrides);
      EXPECT_TRUE(v.ok) << v.message;
      EXPECT_EQ(v.result, c.expected);
    }
  }
}

// Runs test(P{}) for the oneTBB and the OpenMP policy, each inside its harness region. The trace
// is set inside: omp single may run the test on a thread other than this one.
template <class Test>
void on_each_peer_policy(const Test& test) {
  make_tbb_region(2)->execute([&] {
    SCOPED_TRACE("tbb");
    test(par::tbb_tasks{});
  });
  make_omp_region(2)->execute([&] {
    SCOPED_TRACE("omp");
    test(par::omp_tasks{});
  });
}

// A floating-point sum is not associative: equal results mean the halving tree of the serial
// policy's reduce (cg verifies its peers against NAS with that tree).
TEST(BenchPeers, PolicyReduceIsBitIdenticalToTheSerialFold) {
  const auto body = [](std::int64_t lo, std::int64_t hi, double acc) {
    for (std::int64_t i = lo; i < hi; ++i) acc += 1.0 / static_cast<double>(i + 1) * (i % 3 - 1);
    return acc;
  };
  const auto plus = [](double a, double b) { return a + b; };
  on_each_peer_policy([&]<class P>(P) {
    for (const auto& [n, g] : {std::pair<std::int64_t, std::int64_t>{100003, 1000},
                               {100003, 1},
                               {1000, 1000},
                               {999, 1000},
                               {0, 7}}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " g=" + std::to_string(g));
      EXPECT_EQ(P::reduce(0, n, g, 0.0, body, plus), par::serial::reduce(0, n, g, 0.0, body, plus));
    }
  });
}

TEST(BenchPeers, PolicyForRangeRunsEveryIndexOnceInRangesOfAtMostG) {
  on_each_peer_policy([]<class P>(P) {
    for (const auto& [lo, hi, g] :
         {std::tuple<std::int64_t, std::int64_t, std::int64_t>{0, 100003, 1000},
          {5, 17, 1},
          {3, 3, 4},
          {0, 7, 100}}) {
      SCOPED_TRACE("[" + std::to_string(lo) + ", " + std::to_string(hi) +
                   ") g=" + std::to_string(g));
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(hi));
      std::atomic<bool> bad_range{false};
      P::for_range(lo, hi, g, [&](std::int64_t a, std::int64_t b) {
        if (b - a > g || a >= b) bad_range = true;
        for (std::int64_t i = a; i < b; ++i) runs[static_cast<std::size_t>(i)].fetch_add(1);
      });
      EXPECT_FALSE(bad_range.load());
      for (std::int64_t i = 0; i < hi; ++i) {
        ASSERT_EQ(runs[static_cast<std::size_t>(i)].load(), i < lo ? 0 : 1) << i;
      }
    }
  });
}
#endif

TEST(BenchUts, Sha1KnownAnswers) {
  const auto hex = [](std::string_view s) {
    return sha1::to_hex(sha1::hash({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}));
  };
  EXPECT_EQ(hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  // 56 bytes: the length no longer fits the first block.
  EXPECT_EQ(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST(BenchUts, SmallNamedTreesAndCustomTree) {
  for (const char* name : {"S1", "S3"}) {
    const auto* t = uts::find_tree(name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(uts::search_serial(t->params), t->expected) << name;
  }
  // A custom tree verifies against the serial search, and the recorded parameters are the ones
  // of its type only.
  const benchmark* b = registry::get().find("uts");
  param_values p = b->defaults(size_class::small);
  p.set("tree", "custom", param_spec::kind::choice, true);
  p.set("type", "bin", param_spec::kind::choice, true);
  p.set("b0", "50", param_spec::kind::real, true);
  p.set("q", "0.2", param_spec::kind::real, true);
  p.set("m", "4", param_spec::kind::integer, true);
  auto inst = b->prepare(p);
  EXPECT_EQ(p.to_json(),
            R"({"tree":"custom","type":"bin","b0":50,"q":0.2,"m":4,"r":0,"tao_width":2,)"
            R"("tao_entry":"async","taskq_form":"seed"})");
  const auto where = make_serial_region();
  where->execute([&] { inst->run({impl::serial, 1}); });
  EXPECT_TRUE(inst->verify().ok) << inst->verify().message;

  // Named trees record their UTS parameters; custom keys are rejected for them.
  param_values t1 = b->defaults(size_class::medium);
  b->prepare(t1);
  EXPECT_EQ(t1.to_json(), R"({"tree":"T1","type":"geo","b0":4,"d":10,"shape":"fixed","r":19,)"
                          R"("tao_width":2,"tao_entry":"async","taskq_form":"seed"})");
  param_values bad = b->defaults(size_class::medium);
  bad.set("b0", "5", param_spec::kind::real, true);
  EXPECT_THROW(b->prepare(bad), usage_error);
  // Supercritical binomial trees are refused.
  param_values inf = b->defaults(size_class::small);
  inf.set("tree", "custom", param_spec::kind::choice, true);
  inf.set("type", "bin", param_spec::kind::choice, true);
  inf.set("q", "0.5", param_spec::kind::real, true);
  inf.set("m", "2", param_spec::kind::integer, true);
  EXPECT_THROW(b->prepare(inf), usage_error);
}

// ---- command line ----

cli_options parse(std::initializer_list<const char*> args) {
  return parse_command_line(std::vector<std::string>(args.begin(), args.end()));
}

// The usage_error message of f(), or "" when it does not throw one.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const usage_error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_USAGE_ERROR(expr, ...)                                                           \
  do {                                                                                          \
    const std::string msg = error_of([&] { (void)(expr); });                                    \
    EXPECT_FALSE(msg.empty()) << #expr " did not throw usage_error";                            \
    for (const char* part : {__VA_ARGS__}) {                                                    \
      EXPECT_NE(msg.find(part), std::string::npos) << "'" << msg << "' lacks '" << part << "'"; \
    }                                                                                           \
  } while (0)

TEST(BenchCli, ParsesAFullRunCommand) {
  const cli_options o = parse({"run", "fib,uts", "--size", "small", "--set", "n=12",
                               "--set=uts.tree=T3", "--impl", "serial,locus", "--sched=ws",
                               "--workers", "1,2", "--reps", "4", "--warmup", "0", "--json"});
  EXPECT_EQ(o.cmd, command::run);
  EXPECT_EQ(o.benches, (std::vector<std::string>{"fib", "uts"}));
  EXPECT_EQ(o.size, size_class::small);
  EXPECT_EQ(o.sets, (sets{{"n", "12"}, {"uts.tree", "T3"}}));
  EXPECT_EQ(o.impls, (std::vector<impl>{impl::serial, impl::locus}));
  EXPECT_EQ(o.scheds, (std::vector<std::string>{"ws"}));
  EXPECT_EQ(o.workers, (std::vector<int>{1, 2}));
  EXPECT_EQ(o.reps, 4);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_TRUE(o.json);

  EXPECT_EQ(parse({"list"}).cmd, command::list);
  EXPECT_EQ(parse({"help"}).cmd, command::help);
  EXPECT_EQ(parse({"info", "uts"}).cmd, command::info);
}

TEST(BenchCli, RejectsBadArguments) {
  EXPECT_USAGE_ERROR(parse({}), "missing command");
  EXPECT_USAGE_ERROR(parse({"bogus"}), "unknown command 'bogus'", "list, info, run");
  EXPECT_USAGE_ERROR(parse({"list", "extra"}), "list");
  EXPECT_USAGE_ERROR(parse({"run"}), "missing benchmark");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--frobnicate"}), "--frobnicate", "--size", "--json");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--size", "huge"}), "--size", "huge",
                     "small, medium, large");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--size", "small", "--size", "large"}), "--size");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--impl", "serial,cilk"}), "--impl", "cilk",
                     "serial, locus, tbb, omp");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--workers", "0"}), "--workers", "'0'");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--workers", "2,x"}), "--workers", "'x'");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--reps", "0"}), "--reps");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--reps", "3x"}), "--reps");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--warmup", "-1"}), "--warmup");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--set", "n"}), "--set", "key=value");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--set", "=3"}), "--set");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--sched", "ws,"}), "--sched");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--reps"}), "--reps", "missing value");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--json=yes"}), "--json");
  EXPECT_USAGE_ERROR(parse({"run", "fib", "nqueens"}), "unexpected argument 'nqueens'");
}

TEST(BenchCli, PlanRejectsUnknownBenchmarksKeysAndValues) {
  const registry& reg = registry::get();
  const auto plan = [&](std::initializer_list<const char*> args) {
    return make_plan(parse(args), reg, 2);
  };
  EXPECT_USAGE_ERROR(plan({"run", "fob"}), "unknown benchmark 'fob'", "fib, nqueens, uts");
  EXPECT_USAGE_ERROR(plan({"run", "fib", "--set", "depth=3"}), "--set depth",
                     "unknown parameter 'depth'", "fib accepts n");
  EXPECT_USAGE_ERROR(plan({"run", "nqueens", "--set", "m=3"}), "nqueens accepts n, cutoff");
  EXPECT_USAGE_ERROR(plan({"run", "fib", "--set", "n=-1"}), "fib.n", "'-1'", "[0, 92]");
  EXPECT_USAGE_ERROR(plan({"run", "nqueens", "--set", "n=17"}), "nqueens.n", "[1, 16]");
  EXPECT_USAGE_ERROR(plan({"run", "uts", "--set", "tree=T9"}), "uts.tree", "T1L", "custom");
  EXPECT_USAGE_ERROR(plan({"run", "fib", "--set", "uts.tree=T3"}), "uts", "not among");
  // Cross-parameter checks run at planning time, before anything is prepared or timed.
  EXPECT_USAGE_ERROR(plan({"run", "uts", "--set", "b0=3"}), "uts.b0", "tree=custom");
  EXPECT_USAGE_ERROR(plan({"run", "uts", "--set", "tree=custom", "--set", "type=bin", "--set",
                           "q=0.5", "--set", "m=2"}),
                     "q * m = 1");
  EXPECT_USAGE_ERROR(plan({"run", "all", "--set", "bogus=1"}), "fib accepts n",
                     "nqueens accepts n, cutoff", "uts accepts tree");
}

TEST(BenchCli, TaskqRunsOnlyWhenAsked) {
  const registry& reg = registry::get();
  // Not in a run without --impl (the main job's), so that what it compares stays the same.
  const run_plan plain = make_plan(parse({"run", "fib", "--sched", "ws"}), reg, 2);
  for (const auto& c : plain.benches[0].configs) EXPECT_NE(c.which, impl::taskq);
  // Asked for, it runs per scheduler and worker count, as locus does.
  const run_plan p = make_plan(
      parse({"run", "fib", "--impl", "serial,taskq", "--sched", "ws,adws", "--workers", "1,2"}),
      reg, 2);
  std::vector<std::string> labels;
  for (const auto& c : p.benches[0].configs) labels.push_back(c.label());
  EXPECT_EQ(labels, (std::vector<std::string>{"serial", "taskq/ws/1", "taskq/ws/2", "taskq/adws/1",
                                              "taskq/adws/2"}));
  EXPECT_USAGE_ERROR(make_plan(parse({"run", "cilksort", "--impl", "taskq"}), reg, 2), "--impl",
                     "cilksort", "taskq");
  // taskq-mpi follows where MPI is built in.
  EXPECT_NE(describe(*reg.find("uts"))
                .find(impl_compiled(impl::taskq_mpi) ? "(with --impl: taskq taskq-mpi tao)"
                                                     : "(with --impl: taskq tao)"),
            std::string::npos);
}

TEST(BenchCli, PlanBuildsInterleavableConfigurations) {
  const registry& reg = registry::get();
#if LOCUS_BENCH_PEERS
  const char* impls = "serial,locus,tbb";
  const std::vector<std::string> expected{
      "serial", "locus/ws/1", "locus/ws/4", "locus/other/1", "locus/other/4", "tbb/1", "tbb/4"};
#else
  const char* impls = "serial,locus";
  const std::vector<std::string> expected{"serial", "locus/ws/1", "locus/ws/4", "locus/other/1",
                                          "locus/other/4"};
  EXPECT_USAGE_ERROR(parse({"run", "fib", "--impl", "tbb"}), "--impl", "LOCUS_BENCH_PEERS");
#endif
  const run_plan p = make_plan(parse({"run", "fib", "--impl", impls, "--sched", "ws,other",
                                      "--workers", "1,4", "--set", "n=11"}),
                               reg, 2);
  ASSERT_EQ(p.benches.size(), 1u);
  EXPECT_EQ(p.reps, 7);  // medium default
  EXPECT_EQ(p.benches[0].params.to_json(), R"({"n":11,"cutoff":0})");
  std::vector<std::string> labels;
  for (const auto& c : p.benches[0].configs) labels.push_back(c.label());
  // serial once whatever the worker list; locus per (sched, workers); peers per workers.
  EXPECT_EQ(labels, expected);

  // A plain key applies to every selected benchmark that has it.
  const run_plan two = make_plan(parse({"run", "fib,nqueens", "--set", "n=9"}), reg, 3);
  ASSERT_EQ(two.benches.size(), 2u);
  EXPECT_EQ(two.benches[0].params.text("n"), "9");  // fib
  EXPECT_EQ(two.benches[1].params.text("n"), "9");  // nqueens

  const run_plan all = make_plan(parse({"run", "all", "--size", "small"}), reg, 3);
  ASSERT_EQ(all.benches.size(), reg.all().size());
  EXPECT_EQ(all.reps, 3);
  for (const auto& bp : all.benches) {
    for (const auto& c : bp.configs) EXPECT_EQ(c.workers, c.which == impl::serial ? 1 : 3);
  }
}

// Sets (or, with nullptr, unsets) an environment variable until the end of the scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
  ~scoped_env() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::vector<std::string> locus_labels(const run_plan& p) {
  std::vector<std::string> labels;
  for (const auto& bp : p.benches) {
    for (const auto& c : bp.configs) labels.push_back(c.label());
  }
  return labels;
}

TEST(BenchCli, LocusSchedIsTheDefaultOfSched) {
  const registry& reg = registry::get();
  const auto labels = [&](std::initializer_list<const char*> args) {
    return locus_labels(make_plan(parse(args), reg, 2));
  };
  {
    const scoped_env unset("LOCUS_SCHED", nullptr);
    EXPECT_EQ(labels({"run", "fib", "--impl", "locus"}), (std::vector<std::string>{"locus/ws/2"}));
  }
  const scoped_env adws("LOCUS_SCHED", "adws");
  EXPECT_EQ(labels({"run", "fib", "--impl", "locus"}), (std::vector<std::string>{"locus/adws/2"}));
  EXPECT_EQ(labels({"run", "fib", "--impl", "locus", "--sched", "ws"}),
            (std::vector<std::string>{"locus/ws/2"}))
      << "--sched wins over LOCUS_SCHED";
  EXPECT_NE(usage().find("LOCUS_SCHED"), std::string::npos) << usage();
}

TEST(BenchCli, PlanRejectsInvalidLocusVariables) {
  const registry& reg = registry::get();
  const auto plan = [&](std::initializer_list<const char*> args) {
    return make_plan(parse(args), reg, 2);
  };
  {
    const scoped_env bad("LOCUS_SCHED", "foo");
    EXPECT_USAGE_ERROR(plan({"run", "fib", "--impl", "locus"}), "LOCUS_SCHED", "'foo'", "ws",
                       "adws", "ml-ws");
    // Explicit choices do not make an invalid variable acceptable: nothing would read it, but
    // its author meant something by it.
    EXPECT_USAGE_ERROR(plan({"run", "fib", "--impl", "locus", "--sched", "ws"}), "LOCUS_SCHED");
    EXPECT_USAGE_ERROR(plan({"run", "fib", "--impl", "serial"}), "LOCUS_SCHED");
  }
  {
    const scoped_env bad("LOCUS_WORKERS", "abc");
    EXPECT_USAGE_ERROR(plan({"run", "fib", "--workers", "2"}), "LOCUS_WORKERS", "'abc'",
                       "positive integer");
  }
  {
    const scoped_env bad("LOCUS_STATS", "maybe");
    EXPECT_USAGE_ERROR(plan({"run", "fib"}), "LOCUS_STATS", "'maybe'", "true, false");
  }
  {
    const scoped_env bad("LOCUS_TOPOLOGY", "pack:0 pu:x");
    EXPECT_USAGE_ERROR(plan({"run", "fib", "--impl", "serial"}), "LOCUS_TOPOLOGY");
  }
}

TEST(BenchMain, InvalidLocusVariableExitsTwoBeforeRunningAnything) {
  const scoped_env bad("LOCUS_SCHED", "foo");
  for (const char* command : {"run", "idle"}) {
    SCOPED_TRACE(command);
    std::vector<std::string> args{command};
    if (std::string(command) == "run") {
      args.insert(args.end(), {"fib", "--impl", "locus", "--size", "small", "--reps", "1"});
    } else {
      args.insert(args.end(), {"--reps", "1", "--seconds", "1"});
    }
    std::ostringstream out, err;
    EXPECT_EQ(run_command_line(args, out, err), 2) << err.str();
    EXPECT_EQ(out.str(), "") << "nothing ran";
    const std::string message = err.str();
    for (const char* part : {"LOCUS_SCHED", "'foo'", "ws", "adws"}) {
      EXPECT_NE(message.find(part), std::string::npos) << "'" << message << "' lacks " << part;
    }
    EXPECT_EQ(message.find("preparing"), std::string::npos) << message;
  }
  // Commands that run nothing do not read the environment.
  std::ostringstream out, err;
  EXPECT_EQ(run_command_line({"list"}, out, err), 0) << err.str();
}

// ---- output ----

TEST(BenchOutput, JsonLineFormat) {
  config_result r;
  r.bench = "fib";
  r.config = {impl::locus, "ws", 2, {}};
  r.params_json = R"({"n":20})";
  r.times_s = {0.5, 0.25, 1.0};
  r.result = "6765";
  r.stats_json = R"({"scheduler":"ws"})";
  EXPECT_EQ(format_json_line(r),
            R"({"bench":"fib","impl":"locus","sched":"ws","workers":2,"params":{"n":20},)"
            R"("times_s":[0.5,0.25,1],"median_s":0.5,"min_s":0.25,"t1_over_ts":null,)"
            R"("t1_over_tp":null,"work_inflation":null,"verified":true,)"
            R"("result":"6765","stats":{"scheduler":"ws"}})");

  r.batch = "4242-1700000000000-3";
  EXPECT_NE(
      format_json_line(r).find(R"("workers":2,"batch":"4242-1700000000000-3","params":{"n":20},)"),
      std::string::npos)
      << format_json_line(r);

  // taskq runs on a locus runtime: it has a scheduler too.
  r.config = {impl::taskq, "adws", 2, {}};
  EXPECT_NE(format_json_line(r).find(R"("impl":"taskq","sched":"adws","workers":2)"),
            std::string::npos)
      << format_json_line(r);

  r.config = {impl::serial, "", 1, {}};
  r.stats_json = "{}";
  r.verified = false;
  r.error = "fib(20) = \"6765\"";
  const std::string line = format_json_line(r);
  EXPECT_NE(line.find(R"("impl":"serial","sched":null,"workers":1)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("verified":false)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("error":"fib(20) = \"6765\"")"), std::string::npos) << line;
}

TEST(BenchOutput, DerivesWorkEfficiencySpeedupAndInflation) {
  const auto make = [](impl which, const char* sched, int workers, std::vector<double> times,
                       double busy_per_rep) {
    config_result r;
    r.bench = "fib";
    r.config = {which, sched, workers, {}};
    r.times_s = std::move(times);
    r.busy_per_rep_s = busy_per_rep;
    return r;
  };
  std::vector<config_result> rs{make(impl::serial, "", 1, {1.0, 1.0, 1.0}, -1),
                                make(impl::locus, "ws", 1, {1.2, 1.1, 1.3}, 1.15),
                                make(impl::locus, "ws", 2, {0.6, 0.5, 0.7}, 1.32),
                                make(impl::tbb, "", 2, {0.8}, -1)};
  derive_ratios(rs);
  EXPECT_FALSE(rs[0].t1_over_ts);
  ASSERT_TRUE(rs[1].t1_over_ts);
  EXPECT_DOUBLE_EQ(*rs[1].t1_over_ts, 1.2);             // T1 / TS
  EXPECT_DOUBLE_EQ(*rs[1].work_inflation, 1.15 / 1.2);  // W_1 / T1
  EXPECT_FALSE(rs[2].t1_over_ts);
  EXPECT_DOUBLE_EQ(*rs[2].t1_over_tp, 1.2 / 0.6);       // T1 / T2
  EXPECT_DOUBLE_EQ(*rs[2].work_inflation, 1.32 / 1.2);  // W_2 / T1
  EXPECT_FALSE(rs[3].t1_over_tp);                       // no tbb run on one worker
  EXPECT_FALSE(rs[3].work_inflation);
}

TEST(BenchOutput, ExecuteWritesOneVerifiedJsonLinePerConfiguration) {
  const run_plan p = make_plan(parse({"run", "fib,nqueens", "--size", "small", "--workers", "2",
                                      "--reps", "2", "--impl", "serial,locus", "--json"}),
                               registry::get(), 2);
  std::ostringstream out, log;
  EXPECT_EQ(execute(p, out, log), 0) << log.str();
  const std::vector<std::string> lines = locus_test::lines_of(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  for (const auto& l : lines) {
    EXPECT_EQ(l.front(), '{');
    EXPECT_EQ(l.back(), '}');
    for (const char* field : {R"("bench":)", R"("impl":)", R"("sched":)", R"("workers":)",
                              R"("params":{)", R"("times_s":[)", R"("median_s":)", R"("min_s":)",
                              R"("verified":true)", R"("result":)", R"("stats":{)"}) {
      EXPECT_NE(l.find(field), std::string::npos) << field << " missing in " << l;
    }
  }
  EXPECT_NE(lines[1].find(R"("impl":"locus","sched":"ws","workers":2)"), std::string::npos);
  EXPECT_NE(lines[1].find(R"("stats":{"scheduler":"ws")"), std::string::npos) << lines[1];
  EXPECT_NE(lines[0].find(R"("stats":{})"), std::string::npos) << lines[0];
  // The configurations of one benchmark ran in the same rounds and say so; the next benchmark's
  // rounds are others.
  const auto batch_of = [](const std::string& line) {
    const std::string key = R"("batch":")";
    const std::size_t at = line.find(key);
    if (at == std::string::npos) return std::string();
    const std::size_t from = at + key.size();
    return line.substr(from, line.find('"', from) - from);
  };
  EXPECT_FALSE(batch_of(lines[0]).empty()) << lines[0];
  EXPECT_EQ(batch_of(lines[0]), batch_of(lines[1]));
  EXPECT_EQ(batch_of(lines[2]), batch_of(lines[3]));
  EXPECT_NE(batch_of(lines[1]), batch_of(lines[2]));
  // Progress: one line per repetition (1 warm-up + 2 timed, 2 configurations, 2 benchmarks).
  const std::string progress = log.str();
  EXPECT_EQ(std::count(progress.begin(), progress.end(), '\n'), 2 * 2 * 3 + 2 * 2 + 1) << progress;
}

// --sched SCHED+SOURCE gives that configuration's runtime another source of size hints: the
// +learn-all one learns (its statistics say so), the plain one does not; an unknown source is
// a usage error naming the accepted ones.
TEST(BenchOutput, SchedulerWithASourceOfSizeHintsLearns) {
  const run_plan p =
      make_plan(parse({"run", "rrm", "--size", "small", "--workers", "2", "--reps", "2", "--impl",
                       "locus", "--sched", "ml-adws,ml-adws+learn-all", "--json"}),
                registry::get(), 2);
  std::ostringstream out, log;
  EXPECT_EQ(execute(p, out, log), 0) << log.str();
  const std::vector<std::string> lines = locus_test::lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u) << out.str();
  EXPECT_NE(lines[0].find(R"("sched":"ml-adws",)"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("size_hint_profiles"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find(R"("sched":"ml-adws+learn-all")"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(R"("size_hint_profiles":1)"), std::string::npos) << lines[1];
  const run_plan bad = make_plan(parse({"run", "fib", "--size", "small", "--workers", "2", "--impl",
                                        "locus", "--sched", "ws+bogus"}),
                                 registry::get(), 2);
  std::ostringstream bad_out, bad_log;
  EXPECT_USAGE_ERROR(execute(bad, bad_out, bad_log), "--sched ws+bogus", "learn-all");
}

// A benchmark whose serial run computes the wrong answer on its second run.
class flaky_instance final : public instance {
 public:
  void run(const run_context&) override { ++runs_; }
  verdict verify() const override {
    return {runs_ != 2, std::to_string(runs_), runs_ == 2 ? "second run is wrong" : ""};
  }

 private:
  int runs_ = 0;
};

TEST(BenchOutput, FailedVerificationExitsOneAndStopsThatConfiguration) {
  benchmark b;
  b.name = "flaky";
  b.impls = {impl::serial};
  b.prepare = [](param_values&) -> std::unique_ptr<instance> {
    return std::make_unique<flaky_instance>();
  };
  run_plan p;
  p.reps = 3;
  p.warmup = 0;
  p.json = true;
  p.benches.push_back({&b, {}, {{impl::serial, "", 1, {}}}});
  std::ostringstream out, log;
  EXPECT_EQ(execute(p, out, log), 1);
  EXPECT_NE(out.str().find(R"("times_s":[)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(R"("verified":false)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("verification failed: second run is wrong"), std::string::npos)
      << out.str();
  EXPECT_NE(log.str().find("error: flaky serial rep 2/3"), std::string::npos) << log.str();
  EXPECT_EQ(log.str().find("rep 3/3"), std::string::npos) << log.str();
}

// Records which configuration runs, in order.
class order_instance final : public instance {
 public:
  explicit order_instance(std::vector<std::pair<impl, int>>& order) : order_(order) {}
  void run(const run_context& ctx) override { order_.emplace_back(ctx.which, ctx.workers); }
  verdict verify() const override { return {true, "ok", ""}; }

 private:
  std::vector<std::pair<impl, int>>& order_;
};

// The rounds follow harness/run_order.hpp's design, the warm-up round included; with three
// configurations its rows are 0 1 2, then 1 2 0 (and, later, the reversed rows).
TEST(BenchOutput, RoundsRunInTheBalancedOrder) {
  static std::vector<std::pair<impl, int>> order;
  order.clear();
  benchmark b;
  b.name = "order";
  b.impls = {impl::serial, impl::locus};
  b.prepare = [](param_values&) -> std::unique_ptr<instance> {
    return std::make_unique<order_instance>(order);
  };
  run_plan p;
  p.reps = 2;
  p.warmup = 1;
  const std::vector<configuration> configs{
      {impl::serial, "", 1, {}}, {impl::locus, "ws", 1, {}}, {impl::locus, "ws", 2, {}}};
  p.benches.push_back({&b, {}, configs});
  std::ostringstream out, log;
  ASSERT_EQ(execute(p, out, log), 0) << log.str();
  const std::pair<impl, int> s{impl::serial, 1}, w1{impl::locus, 1}, w2{impl::locus, 2};
  const std::vector<std::pair<impl, int>> expected{s, w1, w2, s, w1, w2, w1, w2, s};
  EXPECT_EQ(order, expected);
}

// Records, per run, whether run() itself and each of its steps ran on a locus worker.
class stepped_instance final : public instance {
 public:
  struct seen {
    int run_worker;
    std::vector<int> step_workers;
  };
  explicit stepped_instance(std::vector<seen>& runs) : runs_(runs) {}
  void run(const run_context& ctx) override {
    seen s{locus::this_worker(), {}};
    for (int t = 0; t < 3; ++t) ctx.step([&] { s.step_workers.push_back(locus::this_worker()); });
    runs_.push_back(s);
  }
  verdict verify() const override { return {true, "ok", ""}; }

 private:
  std::vector<seen>& runs_;
};

// --exec step: run() on the harness thread, outside the runtime, and each step inside it (one
// exec per step); without it, run() and its steps inside one exec. "exec":"step" in the JSON.
TEST(BenchOutput, ExecStepEntersTheRegionOncePerStep) {
  static std::vector<stepped_instance::seen> runs;
  benchmark b;
  b.name = "stepped";
  b.impls = {impl::serial, impl::locus};
  b.steps = true;
  b.prepare = [](param_values&) -> std::unique_ptr<instance> {
    return std::make_unique<stepped_instance>(runs);
  };
  for (const bool per_step : {false, true}) {
    runs.clear();
    run_plan p;
    p.reps = 2;
    p.warmup = 0;
    p.json = true;
    p.exec_step = per_step;
    p.benches.push_back({&b, {}, {{impl::locus, "ws", 2, {}}}});
    std::ostringstream out, log;
    ASSERT_EQ(execute(p, out, log), 0) << log.str();
    ASSERT_EQ(runs.size(), 2u);
    for (const auto& r : runs) {
      EXPECT_EQ(r.run_worker >= 0, !per_step) << "per_step " << per_step;
      ASSERT_EQ(r.step_workers.size(), 3u);
      for (const int w : r.step_workers) EXPECT_GE(w, 0) << "a step ran outside the runtime";
    }
    EXPECT_EQ(out.str().find(R"("exec":"step")") != std::string::npos, per_step) << out.str();
  }
}

TEST(BenchCli, ExecStepNeedsTimeSteps) {
  const registry& reg = registry::get();
  const run_plan p = make_plan(parse_command_line({"run", "heat2d", "--exec", "step"}), reg, 2);
  EXPECT_TRUE(p.exec_step);
  EXPECT_USAGE_ERROR(make_plan(parse_command_line({"run", "fib", "--exec", "step"}), reg, 2),
                     "--exec step: fib has no time steps", "heat2d");
  EXPECT_USAGE_ERROR(parse_command_line({"run", "heat2d", "--exec", "twice"}), "--exec",
                     "once or step");
  // all: only the benchmarks with time steps.
  const run_plan all = make_plan(parse_command_line({"run", "all", "--exec", "step"}), reg, 2);
  ASSERT_FALSE(all.benches.empty());
  for (const auto& bp : all.benches) EXPECT_TRUE(bp.bench->steps) << bp.bench->name;
}

TEST(BenchOutput, TableHasRatioToSerial) {
  config_result s;
  s.bench = "fib";
  s.config = {impl::serial, "", 1, {}};
  s.times_s = {2.0};
  s.result = "1";
  config_result l = s;
  l.config = {impl::locus, "ws", 2, {}};
  l.times_s = {1.0, 1.5, 0.5};
  const std::string t = format_table({s, l});
  EXPECT_NE(t.find("median/serial"), std::string::npos) << t;
  EXPECT_NE(t.find("0.500"), std::string::npos) << t;
}

TEST(BenchOutput, AccumulatesStatsAcrossRepetitions) {
  locus::stats a, b;
  b.scheduler = "ws";
  b.workers.resize(2);
  b.workers[1].spawns = 5;
  b.workers[1].busy_s = 0.5;
  b.workers[1].steals_by_level = {1, 2};
  b.level_names = {"pu", "machine"};
  accumulate(a, b);
  accumulate(a, b);
  ASSERT_EQ(a.workers.size(), 2u);
  EXPECT_EQ(a.scheduler, "ws");
  EXPECT_EQ(a.level_names, (std::vector<std::string>{"pu", "machine"}));
  EXPECT_NE(a.to_json().find(R"("steal_levels":["pu","machine"])"), std::string::npos);
  EXPECT_EQ(a.workers[1].spawns, 10u);
  EXPECT_DOUBLE_EQ(a.workers[1].busy_s, 1.0);
  EXPECT_EQ(a.workers[1].steals_by_level, (std::vector<std::uint64_t>{2, 4}));
}

}  // namespace
