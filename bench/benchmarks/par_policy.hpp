// Fork-join policies shared by cilksort, hull, knapsack, cg and sph: every implementation of one of
// these benchmarks is the same function template instantiated with a different policy, so the
// serial elision and the parallel versions have exactly the same task structure (same cutoffs,
// same grain, same split points).
//
//   P::invoke(bytes, par::child(w0, f0), par::child(w1, f1), ...)
//       runs f0, f1, ... (possibly in parallel) and returns when all are done. Children but the
//       last are spawned child-first in order and the last runs inline. locus passes each child's
//       work_hint{w} and a task group work_hint{sum of w} plus size_hint{bytes} (working set);
//       the other policies ignore the hints.
//   P::spawn_each(bytes, k, work, f)
//       the same for a run-time number of children: f(i) for i in [0, k), hinted work(i).
//   P::for_range(lo, hi, g, body) / P::reduce(lo, hi, g, identity, body, combine)
//       body(lo, hi) on subranges of at most g iterations. reduce folds the leaves of the
//       halving tree (split at the middle while longer than g) with identity and combines them
//       in that tree's shape, in every policy, so floating-point reductions are bit-identical.
//   P::for_range_by_place(places, lo, hi, g, body) / P::reduce_by_place(places, lo, hi, g, ...)
//       the same with the place hints of NUMA-WS: the subtrees of the same halving tree that
//       placement::halving_parts gives one place each are queued children hinted to their place,
//       and the levels above them are combined after the join in the tree's shape, so every
//       result is that of for_range and reduce; the serial and peer policies ignore the places.
//   P::invoke_by_place(places, bytes, child...)
//       invoke with child i of k queued and hinted to placement::place_of_part(i, k, places).
//   P::child_first
//       whether the spawning worker runs a spawned child before the inline one: locus's children
//       run child-first (the continuation is what thieves take) and the serial elision runs them
//       in order; oneTBB and OpenMP queue a spawned child and run the inline one first.
//
// The peers are what a oneTBB or OpenMP user writes for the same structure, run inside the
// harness's region (a task_arena; omp parallel + single): tbb_tasks forks with tbb::task_group,
// loops with tbb::parallel_for over blocked_range(lo, hi, g) and simple_partitioner (the halving
// tree's leaves) and reduces with tbb::parallel_deterministic_reduce (the halving tree's leaves
// and shape); omp_tasks forks with omp task + taskwait, loops with omp taskloop over blocks of g
// iterations and reduces by omp tasks in the halving tree. Neither has place hints.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <locus/algorithms.hpp>
#include <locus/hints.hpp>
#include <locus/runtime.hpp>
#include <locus/task_group.hpp>

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_group.h>
#endif

#include "benchmarks/placement.hpp"

namespace locus_bench::par {

// A callable with its relative work; refers to the callable, which must outlive the invoke call
// (a temporary lambda in the invoke expression does).
template <class F>
struct child_ref {
  double work;
  F* fn;
  void operator()() const { (*fn)(); }
};

template <class F>
child_ref<std::remove_reference_t<F>> child(double work, F&& f) {
  return {work, &f};
}

// The place-hinted forms for a policy without places (the serial elision, the peers): the plain
// ones.
template <class P>
struct without_places {
  template <class Body>
  static void for_range_by_place(int /*places*/, std::int64_t lo, std::int64_t hi, std::int64_t g,
                                 const Body& body) {
    P::for_range(lo, hi, g, body);
  }
  template <class... F>
  static void invoke_by_place(int /*places*/, std::size_t bytes, child_ref<F>... c) {
    P::invoke(bytes, c...);
  }
  template <class T, class Body, class Combine>
  static T reduce_by_place(int /*places*/, std::int64_t lo, std::int64_t hi, std::int64_t g,
                           const T& identity, const Body& body, const Combine& combine) {
    return P::reduce(lo, hi, g, identity, body, combine);
  }
};

// The serial elision: no runtime at all.
struct serial : without_places<serial> {
  static constexpr bool parallel = false;
  static constexpr bool child_first = true;

  template <class... F>
  static void invoke(std::size_t /*bytes*/, child_ref<F>... c) {
    (c(), ...);
  }
  template <class Work, class Fn>
  static void spawn_each(std::size_t /*bytes*/, int k, const Work& /*work*/, const Fn& f) {
    for (int i = 0; i < k; ++i) f(i);
  }
  template <class Body>
  static void for_range(std::int64_t lo, std::int64_t hi, std::int64_t /*g*/, const Body& body) {
    if (lo < hi) body(lo, hi);
  }
  // Folds the same subranges as the parallel policies, combined in the same tree shape, so that
  // floating-point reductions give bit-identical results.
  template <class T, class Body, class Combine>
  static T reduce(std::int64_t lo, std::int64_t hi, std::int64_t g, const T& identity,
                  const Body& body, const Combine& combine) {
    if (hi <= lo) return identity;
    if (hi - lo <= g) return body(lo, hi, identity);
    const std::int64_t mid = lo + (hi - lo) / 2;
    T left = reduce(lo, mid, g, identity, body, combine);
    T right = reduce(mid, hi, g, identity, body, combine);
    return combine(std::move(left), std::move(right));
  }
};

struct locus_tasks {
  static constexpr bool parallel = true;
  static constexpr bool child_first = true;

  template <class... F>
  static void invoke(std::size_t bytes, child_ref<F>... c) {
    static_assert(sizeof...(F) >= 1);
    if constexpr (sizeof...(F) == 1) {
      (c(), ...);
    } else {
      locus::task_group tg{locus::work_hint{(c.work + ...)}, locus::size_hint{bytes}};
      auto all = std::make_tuple(c...);
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (tg.run([f = std::get<I>(all)] { f(); }, locus::work_hint{std::get<I>(all).work}), ...);
      }
      (std::make_index_sequence<sizeof...(F) - 1>{});
      std::get<sizeof...(F) - 1>(all)();
      tg.wait();
    }
  }
  template <class Work, class Fn>
  static void spawn_each(std::size_t bytes, int k, const Work& work, const Fn& f) {
    if (k <= 0) return;
    if (k == 1) {
      f(0);
      return;
    }
    double total = 0;
    for (int i = 0; i < k; ++i) total += work(i);
    locus::task_group tg{locus::work_hint{total}, locus::size_hint{bytes}};
    for (int i = 0; i < k - 1; ++i) tg.run([&f, i] { f(i); }, locus::work_hint{work(i)});
    f(k - 1);
    tg.wait();
  }
  template <class Body>
  static void for_range(std::int64_t lo, std::int64_t hi, std::int64_t g, const Body& body) {
    locus::parallel_for(lo, hi, body, locus::grain{static_cast<std::size_t>(g)});
  }
  template <class T, class Body, class Combine>
  static T reduce(std::int64_t lo, std::int64_t hi, std::int64_t g, const T& identity,
                  const Body& body, const Combine& combine) {
    return locus::parallel_reduce(lo, hi, identity, body, combine,
                                  locus::grain{static_cast<std::size_t>(g)});
  }
  template <class Body>
  static void for_range_by_place(int places, std::int64_t lo, std::int64_t hi, std::int64_t g,
                                 const Body& body) {
    if (places < 2 || hi <= lo) return for_range(lo, hi, g, body);
    each_placed_part(places, lo, hi, g,
                     [&body, g](std::int64_t a, std::int64_t b, int) { for_range(a, b, g, body); });
  }
  // Child i of k at placement::place_of_part(i, k, places), queued (the spawner's own place's
  // child last); invoke when there is one place.
  template <class... F>
  static void invoke_by_place(int places, std::size_t bytes, child_ref<F>... c) {
    constexpr int k = sizeof...(F);
    if (places < 2 || k == 1) return invoke(bytes, c...);
    struct erased_child {
      const void* ref;
      double work;
      void (*call)(const void*);
    };
    const erased_child children[] = {erased_child{
        &c, c.work, [](const void* ref) { (*static_cast<const child_ref<F>*>(ref))(); }}...};
    locus::task_group tg{locus::work_hint{(c.work + ...)}, locus::size_hint{bytes}};
    placement::each_part_own_last(k, places, [&](int i) {
      const erased_child& child = children[i];
      tg.run([child] { child.call(child.ref); }, locus::work_hint{child.work},
             placement::hint_of_part(i, k, places), locus::parent_first);
    });
    tg.wait();
  }
  template <class T, class Body, class Combine>
  static T reduce_by_place(int places, std::int64_t lo, std::int64_t hi, std::int64_t g,
                           const T& identity, const Body& body, const Combine& combine) {
    if (places < 2 || hi <= lo) return reduce(lo, hi, g, identity, body, combine);
    std::vector<T> parts(static_cast<std::size_t>(places), identity);
    each_placed_part(places, lo, hi, g, [&](std::int64_t a, std::int64_t b, int k) {
      parts[static_cast<std::size_t>(k)] = reduce(a, b, g, identity, body, combine);
    });
    // The upper levels of the halving tree, combined here in its shape.
    const auto fold = [&](const auto& self, std::int64_t a, std::int64_t b, int first,
                          int count) -> T {
      if (count == 1 || b - a <= g) return parts[static_cast<std::size_t>(first)];
      const std::int64_t mid = a + (b - a) / 2;
      T left = self(self, a, mid, first, count / 2);
      T right = self(self, mid, b, first + count / 2, count - count / 2);
      return combine(std::move(left), std::move(right));
    };
    return fold(fold, lo, hi, 0, places);
  }

 private:
  // part(a, b, k) for every non-empty part k of placement::halving_parts, each in a queued child
  // hinted to place k (the spawner's own part queued last, so that its wait takes that one);
  // returns when all are done. The children are spawned flat from here: a subtree spanning
  // several places would be popped by its spawner, wherever that is, and no steal would move it.
  template <class Part>
  static void each_placed_part(int places, std::int64_t lo, std::int64_t hi, std::int64_t g,
                               const Part& part) {
    const std::vector<std::int64_t> bounds = placement::halving_parts(lo, hi, g, places);
    locus::task_group tg{locus::work_hint{static_cast<double>(hi - lo)}};
    placement::each_part_own_last(places, places, [&](int k) {
      const std::int64_t a = bounds[static_cast<std::size_t>(k)];
      const std::int64_t b = bounds[static_cast<std::size_t>(k) + 1];
      if (a >= b) return;
      tg.run([a, b, k, &part] { part(a, b, k); }, locus::work_hint{static_cast<double>(b - a)},
             locus::place{k}, locus::parent_first);
    });
    tg.wait();
  }
};

#if LOCUS_BENCH_PEERS

struct tbb_tasks : without_places<tbb_tasks> {
  static constexpr bool parallel = true;
  static constexpr bool child_first = false;

  template <class... F>
  static void invoke(std::size_t /*bytes*/, child_ref<F>... c) {
    static_assert(sizeof...(F) >= 1);
    if constexpr (sizeof...(F) == 1) {
      (c(), ...);
    } else {
      tbb::task_group tg;
      auto all = std::make_tuple(c...);
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (tg.run([f = std::get<I>(all)] { f(); }), ...);
      }
      (std::make_index_sequence<sizeof...(F) - 1>{});
      std::get<sizeof...(F) - 1>(all)();
      tg.wait();
    }
  }
  template <class Work, class Fn>
  static void spawn_each(std::size_t /*bytes*/, int k, const Work& /*work*/, const Fn& f) {
    if (k <= 0) return;
    tbb::task_group tg;
    for (int i = 0; i < k - 1; ++i) tg.run([&f, i] { f(i); });
    f(k - 1);
    tg.wait();
  }
  template <class Body>
  static void for_range(std::int64_t lo, std::int64_t hi, std::int64_t g, const Body& body) {
    tbb::parallel_for(
        tbb::blocked_range<std::int64_t>(lo, hi, static_cast<std::size_t>(g)),
        [&body](const tbb::blocked_range<std::int64_t>& r) { body(r.begin(), r.end()); },
        tbb::simple_partitioner{});
  }
  // parallel_deterministic_reduce with simple_partitioner splits blocked_range at its middle
  // while it is longer than g, folds each leaf from identity and joins left with right: the
  // halving tree of serial::reduce. (parallel_reduce would fold several leaves into one body
  // as its partitioner sees fit, a schedule-dependent shape.)
  template <class T, class Body, class Combine>
  static T reduce(std::int64_t lo, std::int64_t hi, std::int64_t g, const T& identity,
                  const Body& body, const Combine& combine) {
    return tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::int64_t>(lo, hi, static_cast<std::size_t>(g)), identity,
        [&body](const tbb::blocked_range<std::int64_t>& r, const T& init) {
          return body(r.begin(), r.end(), init);
        },
        combine, tbb::simple_partitioner{});
  }
};

namespace detail {
// One `omp task` running c; the task is a child of the caller's task, so the caller's taskwait
// joins it.
template <class F>
void omp_spawn(child_ref<F> c) {
#pragma omp task default(none) firstprivate(c)
  c();
}
}  // namespace detail

struct omp_tasks : without_places<omp_tasks> {
  static constexpr bool parallel = true;
  static constexpr bool child_first = false;

  template <class... F>
  static void invoke(std::size_t /*bytes*/, child_ref<F>... c) {
    static_assert(sizeof...(F) >= 1);
    if constexpr (sizeof...(F) == 1) {
      (c(), ...);
    } else {
      auto all = std::make_tuple(c...);
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (detail::omp_spawn(std::get<I>(all)), ...);
      }
      (std::make_index_sequence<sizeof...(F) - 1>{});
      std::get<sizeof...(F) - 1>(all)();
#pragma omp taskwait
    }
  }
  template <class Work, class Fn>
  static void spawn_each(std::size_t /*bytes*/, int k, const Work& /*work*/, const Fn& f) {
    if (k <= 0) return;
    const Fn* fp = &f;
    for (int i = 0; i < k - 1; ++i) {
#pragma omp task default(none) firstprivate(fp, i)
      (*fp)(i);
    }
    f(k - 1);
#pragma omp taskwait
  }
  // One task per block of g iterations (the last one shorter): a taskloop's own chunks are not
  // visible to its body, and grainsize(g) over single iterations would call body once per
  // iteration.
  template <class Body>
  static void for_range(std::int64_t lo, std::int64_t hi, std::int64_t g, const Body& body) {
    if (hi <= lo) return;
    const std::int64_t blocks = (hi - lo + g - 1) / g;
    const Body* bp = &body;
#pragma omp taskloop grainsize(1) default(none) firstprivate(bp, lo, hi, g, blocks)
    for (std::int64_t b = 0; b < blocks; ++b) (*bp)(lo + b * g, std::min(hi, lo + (b + 1) * g));
  }
  // The halving tree of serial::reduce, the left half an omp task: a taskloop reduction would
  // combine partial results in an unspecified order.
  template <class T, class Body, class Combine>
  static T reduce(std::int64_t lo, std::int64_t hi, std::int64_t g, const T& identity,
                  const Body& body, const Combine& combine) {
    if (hi <= lo) return identity;
    if (hi - lo <= g) return body(lo, hi, identity);
    const std::int64_t mid = lo + (hi - lo) / 2;
    T left = identity;
    T* lp = &left;
    const T* ip = &identity;
    const Body* bp = &body;
    const Combine* cp = &combine;
#pragma omp task default(none) firstprivate(lp, ip, bp, cp, lo, mid, g)
    *lp = reduce(lo, mid, g, *ip, *bp, *cp);
    T right = reduce(mid, hi, g, identity, body, combine);
#pragma omp taskwait
    return combine(std::move(left), std::move(right));
  }
};

#endif

// SplitMix64 (Steele, Lea, Flood 2014): the documented generator of the inputs of these
// benchmarks. next() returns the mixed value of state += 0x9e3779b97f4a7c15.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix(state_);
  }
  // Uniform double in [0, 1) from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

}  // namespace locus_bench::par
