// locus-bench's NUMA-WS place hints (issue 14 §5): the par_policy helpers hint every part to the
// place that placement::halving_parts gives it and keep results bit-identical to the serial fold;
// each benchmark's place() binds its data over the places; the eight NUMA-WS benchmarks verify
// under numa-ws and ws on four places.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <locus/locus.hpp>
#include <string>
#include <vector>

#include "bench_instance.hpp"
#include "benchmarks/par_policy.hpp"
#include "benchmarks/placement.hpp"
#include "harness/data_placement.hpp"
#include "harness/regions.hpp"
#include "locality_fixture.hpp"

namespace {

using namespace locus_bench;

constexpr const char* four_places = "pack:4 [numa] l3:1 l2:4 core:1 pu:1";

locus::options on_four_places(const char* sched) {
  return locus::options{.sched = sched, .workers = 16, .topology = four_places};
}

TEST(BenchPlaces, HalvingPartsFollowTheHalvingTree) {
  EXPECT_EQ(placement::halving_parts(0, 100, 10, 4),
            (std::vector<std::int64_t>{0, 25, 50, 75, 100}));
  // Three places: the left half gets one, the right half two.
  EXPECT_EQ(placement::halving_parts(0, 100, 10, 3), (std::vector<std::int64_t>{0, 50, 75, 100}));
  // A node of at most g elements is not split: its first place takes it, the others get nothing.
  EXPECT_EQ(placement::halving_parts(0, 15, 10, 4), (std::vector<std::int64_t>{0, 7, 7, 15, 15}));
  EXPECT_EQ(placement::halving_parts(5, 6, 10, 2), (std::vector<std::int64_t>{5, 6, 6}));
}

TEST(BenchPlaces, PlaceOfPartSharesOrSpreadsPlaces) {
  EXPECT_EQ(placement::place_of_part(0, 4, 2), 0);
  EXPECT_EQ(placement::place_of_part(1, 4, 2), 0);
  EXPECT_EQ(placement::place_of_part(2, 4, 2), 1);
  EXPECT_EQ(placement::place_of_part(3, 4, 2), 1);
  EXPECT_EQ(placement::place_of_part(1, 2, 4), 2);
  EXPECT_EQ(placement::place_of_part(3, 4, 4), 3);
}

class BenchPlacesOnFourPlaces : public locus_test::locality_env_test {};

// Every index runs once, in a task that carries the place of the part holding it.
TEST_F(BenchPlacesOnFourPlaces, ForRangeByPlaceHintsEveryPartToItsPlace) {
  locus::runtime rt{on_four_places("numa-ws")};
  ASSERT_EQ(rt.num_places(), 4);
  for (const int places : {4, 3, 1}) {
    SCOPED_TRACE(places);
    constexpr std::int64_t n = 1000, g = 10;
    std::vector<std::atomic<int>> runs(n), place_seen(n);
    rt.exec([&] {
      par::locus_tasks::for_range_by_place(places, 0, n, g, [&](std::int64_t lo, std::int64_t hi) {
        EXPECT_LE(hi - lo, g);
        for (std::int64_t i = lo; i < hi; ++i) {
          runs[static_cast<std::size_t>(i)].fetch_add(1);
          place_seen[static_cast<std::size_t>(i)].store(locus::this_task_place());
        }
      });
    });
    const std::vector<std::int64_t> bounds = placement::halving_parts(0, n, g, places);
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << i;
      int part = 0;
      while (bounds[static_cast<std::size_t>(part) + 1] <= i) ++part;
      // With one place nothing is hinted.
      ASSERT_EQ(place_seen[static_cast<std::size_t>(i)].load(), places == 1 ? -1 : part) << i;
    }
  }
}

// A floating-point sum is not associative: equal results mean the same tree shape as the serial
// policy's reduce.
TEST_F(BenchPlacesOnFourPlaces, ReduceByPlaceIsBitIdenticalToTheSerialFold) {
  locus::runtime rt{on_four_places("numa-ws")};
  constexpr std::int64_t n = 100003, g = 1000;
  const auto body = [](std::int64_t lo, std::int64_t hi, double acc) {
    for (std::int64_t i = lo; i < hi; ++i) acc += 1.0 / static_cast<double>(i + 1) * (i % 3 - 1);
    return acc;
  };
  const auto plus = [](double a, double b) { return a + b; };
  const double expected = par::serial::reduce(0, n, g, 0.0, body, plus);
  for (const int places : {4, 3, 2}) {
    SCOPED_TRACE(places);
    const double got = rt.exec(
        [&] { return par::locus_tasks::reduce_by_place(places, 0, n, g, 0.0, body, plus); });
    EXPECT_EQ(got, expected);
  }
}

TEST_F(BenchPlacesOnFourPlaces, InvokeByPlaceHintsChildIOfK) {
  locus::runtime rt{on_four_places("numa-ws")};
  int p0 = -2, p1 = -2, p2 = -2;
  rt.exec([&] {
    par::locus_tasks::invoke_by_place(4, 0, par::child(1, [&] { p0 = locus::this_task_place(); }),
                                      par::child(1, [&] { p1 = locus::this_task_place(); }),
                                      par::child(1, [&] { p2 = locus::this_task_place(); }));
  });
  EXPECT_EQ(p0, placement::place_of_part(0, 3, 4));
  EXPECT_EQ(p1, placement::place_of_part(1, 3, 4));
  EXPECT_EQ(p2, placement::place_of_part(2, 3, 4));
  int q = -2;
  rt.exec([&] {
    par::locus_tasks::invoke_by_place(1, 0, par::child(1, [&] { q = locus::this_task_place(); }),
                                      par::child(1, [] {}));
  });
  EXPECT_EQ(q, -1);
}

struct placed_case {
  const char* bench;
  locus_test::bench_sets overrides;
  // The least share of the serial run's accesses that place() puts on places 1-3: about 3/4 when
  // every array it touches is bound in four parts; strassen's temporaries are not bound (first
  // touched by whoever computes them, here worker 0).
  double placed_remote_share = 0.7;
};

// Sizes whose data spans many pages per place, small enough for the sanitizer builds.
std::vector<placed_case> placed_cases() {
  return {
      {"cg", {}},
      {"cilksort", {{"n", "200000"}}},
      {"heat", {{"iters", "2"}}},
      {"hull", {}},
      {"matmul", {{"n", "128"}}},
      {"matmul-z", {{"n", "128"}}},
      {"strassen", {{"n", "128"}}, 0.2},
      {"strassen-z", {{"n", "128"}}, 0.2},
  };
}

// place() binds the data over the places: the serial elision run as worker 0 (place 0) then finds
// most of its declared accesses on the other three places, where without place() every line is
// first touched, and so placed, on place 0. The bindings end with each data_placement, so the
// next benchmark's arrays, which the heap may put on the same pages, start unbound. (hull declares
// no accesses.)
TEST_F(BenchPlacesOnFourPlaces, PlaceBindsEachBenchmarksDataOverThePlaces) {
  locus::runtime rt{on_four_places("numa-ws")};
  for (const placed_case& c : placed_cases()) {
    if (std::string(c.bench) == "hull") continue;
    SCOPED_TRACE(c.bench);
    double share[2] = {};
    for (const bool placed : {false, true}) {
      auto inst = locus_test::prepare_small(c.bench, c.overrides);
      inst->reset();
      data_placement where(rt);
      locus::locality::begin(rt, {.attribute_outside_to = 0});
      if (placed) inst->place(where);
      inst->run(run_context{impl::serial, 1});
      const locus::locality_report r = locus::locality::end();
      ASSERT_TRUE(inst->verify().ok);
      ASSERT_TRUE(r.numa_remote_share().has_value());
      share[placed] = *r.numa_remote_share();
    }
    EXPECT_LT(share[0], 0.05);
    EXPECT_GT(share[1], c.placed_remote_share);
    // At most a little over 3/4: pages at the parts' edges go whole to one place (matmul-z: 0.801
    // with some heap layouts).
    EXPECT_LT(share[1], 0.85);
  }
}

// All eight verify with the hints of four places, under the scheduler that follows them and
// under one that ignores them.
TEST_F(BenchPlacesOnFourPlaces, EightBenchmarksVerifyUnderNumaWsAndWs) {
  for (const char* sched : {"numa-ws", "ws"}) {
    SCOPED_TRACE(sched);
    locus::runtime rt{on_four_places(sched)};
    const auto where = make_locus_region(rt);
    for (const placed_case& c : placed_cases()) {
      SCOPED_TRACE(c.bench);
      auto inst = locus_test::prepare_small(c.bench, c.overrides);
      inst->reset();
      data_placement placed(rt);
      inst->place(placed);
      const run_context ctx{impl::locus, rt.num_workers(), rt.num_places()};
      where->execute([&] { inst->run(ctx); });
      const verdict v = inst->verify();
      EXPECT_TRUE(v.ok) << v.message;
    }
  }
}

}  // namespace
