// knapsack: 0/1 knapsack by branch and bound, the Cilk-5 `knapsack` example that CATS used (seed
// 002, Chen et al. ICS 2012, Table 1: "Knapsack, CPU-bound, 0-1 knapsack problem").
//
// Items are sorted by value/weight, best first. knapsack(i, c, v) explores item i with remaining
// capacity c and value v so far: infeasible (c < 0) and finished (no items or c == 0) nodes return;
// a node whose bound v + floor(c * value_i / weight_i) (Cilk's bound: the whole remaining capacity
// at item i's ratio) is below the best value found so far is pruned; otherwise the subproblems
// without and with item i run as two tasks, in that order (as in Cilk), and the node returns the
// better one and raises the shared best value so far (an atomic maximum; Cilk's racy global). Items
// with index >= `cutoff` are searched serially inside their task. `first=take` spawns the
// subproblem with the item first instead (greedy order; these inputs then become easy). As in
// Cilk, what gets pruned, and so the work, depends on the order in which solutions are found:
// parallel runs may explore more or fewer nodes than the serial elision (the same code without
// the spawns). The result reports the nodes visited (`nodes=`), so that a run's work inflation
// can be set against the extra nodes it searched: with the default inputs, 2 workers visit about
// 1.7x the serial node count (the thief takes the root's "with item 0" branch before good bounds
// exist).
//
// Peers (par_policy.hpp): the two subproblems are a tbb::task_group or omp task + taskwait, with
// the same cutoff and the same atomic best value. oneTBB and OpenMP run the inline child before
// a spawned one (help-first), locus the spawned one (child-first), so the peers spawn the second
// subproblem and search the first inline: every implementation explores in Cilk's order.
//
// Input (splitmix64, par_policy.hpp, seeded with `seed`): `n` items, weight uniform in [1, 1000],
// value = weight + uniform in [-`spread`, `spread`], at least 1 (weakly correlated, so the bound
// prunes slowly); capacity = half the total weight. Verified against the optimum of the dynamic
// program over capacities 0..capacity, computed in prepare().
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "benchmarks/par_policy.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace {

struct item {
  std::int64_t value, weight;
};

constexpr std::int64_t infeasible = std::numeric_limits<std::int64_t>::min();

struct problem {
  const item* items;
  int n;
  int cutoff;
  bool take_first;
  std::atomic<std::int64_t>* best_so_far;
};

void raise_best(std::atomic<std::int64_t>& best, std::int64_t v) {
  std::int64_t cur = best.load(std::memory_order_relaxed);
  while (v > cur && !best.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

// What a search returns: the best value found (infeasible if none) and the nodes it visited,
// counted on the way back so that no counter is shared between workers.
struct outcome {
  std::int64_t value = infeasible;
  std::int64_t nodes = 0;
};

template <class P>
outcome knapsack(const problem& pr, int i, std::int64_t c, std::int64_t v) {
  if (c < 0) return {infeasible, 1};
  if (i == pr.n || c == 0) return {v, 1};
  const item& e = pr.items[i];
  if (v + c * e.value / e.weight < pr.best_so_far->load(std::memory_order_relaxed)) {
    return {infeasible, 1};  // pruned
  }
  if constexpr (P::parallel) {
    if (i >= pr.cutoff) return knapsack<par::serial>(pr, i, c, v);
  }
  outcome without, with;
  const auto skip = [&] { without = knapsack<P>(pr, i + 1, c, v); };
  const auto take = [&] { with = knapsack<P>(pr, i + 1, c - e.weight, v + e.value); };
  // The spawning worker searches the first subproblem (skip, or take with first=take) first, as
  // in Cilk, and leaves the other to thieves: a child-first policy spawns it, the help-first
  // peers run it inline. The bounds found first decide the work, so in the other order the
  // peers would search greedily, as first=take does.
  if (pr.take_first == P::child_first) {
    P::invoke(0, par::child(1, take), par::child(1, skip));
  } else {
    P::invoke(0, par::child(1, skip), par::child(1, take));
  }
  const std::int64_t best = std::max(with.value, without.value);
  raise_best(*pr.best_so_far, best);
  return {best, 1 + with.nodes + without.nodes};
}

// The reference: best[c] = the most value with weight at most c.
std::int64_t dynamic_program(const std::vector<item>& items, std::int64_t capacity) {
  std::vector<std::int64_t> best(static_cast<std::size_t>(capacity) + 1, 0);
  for (const item& it : items) {
    for (std::int64_t c = capacity; c >= it.weight; --c) {
      const auto k = static_cast<std::size_t>(c);
      best[k] = std::max(best[k], best[k - static_cast<std::size_t>(it.weight)] + it.value);
    }
  }
  return best[static_cast<std::size_t>(capacity)];
}

class knapsack_instance final : public instance {
 public:
  knapsack_instance(int n, std::int64_t spread, int cutoff, bool take_first, std::uint64_t seed)
      : cutoff_(cutoff), take_first_(take_first) {
    par::splitmix64 rng(seed);
    std::int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      const auto w = static_cast<std::int64_t>(rng.next() % 1000) + 1;
      const auto d =
          static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(2 * spread + 1));
      items_.push_back({std::max<std::int64_t>(1, w + d - spread), w});
      total += w;
    }
    // Best ratio first; exact comparison, ties by weight then value (a total order up to equal
    // items, so the order is the same everywhere).
    std::sort(items_.begin(), items_.end(), [](const item& a, const item& b) {
      if (a.value * b.weight != b.value * a.weight) return a.value * b.weight > b.value * a.weight;
      if (a.weight != b.weight) return a.weight < b.weight;
      return a.value < b.value;
    });
    capacity_ = total / 2;
    expected_ = dynamic_program(items_, capacity_);
  }

  void reset() override {
    best_so_far_.store(infeasible);
    result_ = {};
  }

  void run(const run_context& ctx) override {
    const problem pr{items_.data(), static_cast<int>(items_.size()), cutoff_, take_first_,
                     &best_so_far_};
    switch (ctx.which) {
      case impl::serial:
        result_ = knapsack<par::serial>(pr, 0, capacity_, 0);
        break;
      case impl::locus:
        result_ = knapsack<par::locus_tasks>(pr, 0, capacity_, 0);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        result_ = knapsack<par::tbb_tasks>(pr, 0, capacity_, 0);
        break;
      case impl::omp:
        result_ = knapsack<par::omp_tasks>(pr, 0, capacity_, 0);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    v.result = "value=" + std::to_string(result_.value) + " nodes=" + std::to_string(result_.nodes);
    v.ok = result_.value == expected_;
    if (!v.ok) v.message = "the dynamic program finds the optimum " + std::to_string(expected_);
    return v;
  }

 private:
  int cutoff_;
  bool take_first_;
  std::vector<item> items_;
  std::int64_t capacity_ = 0;
  std::int64_t expected_ = 0;
  std::atomic<std::int64_t> best_so_far_{infeasible};
  outcome result_;
};

}  // namespace

benchmark make_knapsack_benchmark() {
  benchmark b;
  b.name = "knapsack";
  b.description =
      "Cilk-5 0/1 knapsack (CATS): branch and bound, a task for each of the without/with "
      "subproblems down to item `cutoff`, pruning against a shared best value. Verified against "
      "a dynamic program.";
  b.params = {
      param_spec::integer("n", "items", {"44", "54", "60"}, 1, 1000),
      param_spec::integer("spread", "value = weight + uniform in [-spread, spread] (at least 1)",
                          {"20", "20", "20"}, 0, 1000),
      param_spec::integer("cutoff",
                          "items with index >= cutoff are searched serially in their task",
                          {"12", "12", "12"}, 0, 1000),
      param_spec::choice("first",
                         "skip: the subproblem without the item is spawned first (Cilk); take: the "
                         "one with it (greedy first)",
                         {"skip", "skip", "skip"}, {"skip", "take"}),
      param_spec::integer("seed", "splitmix64 seed of the items", {"1", "1", "1"}, 0, 2147483647),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    return std::make_unique<knapsack_instance>(
        static_cast<int>(p.integer("n")), p.integer("spread"),
        static_cast<int>(p.integer("cutoff")), p.text("first") == "take",
        static_cast<std::uint64_t>(p.integer("seed")));
  };
  return b;
}

}  // namespace locus_bench
