// cilksort: parallel mergesort with parallel merge, the Cilk-5 / BOTS `cilksort` used by NUMA-WS
// (seed 001, Deters et al. IISWC 2018: "parallel mergesort with parallel merge", Fig. 4, input
// 1.3e8 elements, base case 1k).
//
// sort(in, tmp, n): below `quick` elements, a serial quicksort (median-of-three, Hoare partition)
// that finishes ranges shorter than `insertion` by insertion sort. Otherwise the four quarters are
// sorted in parallel (four tasks), then quarters 1+2 and 3+4 are merged into tmp in parallel, then
// the two halves are merged back into in. merge(a, b, dest): the longer input is split at its
// middle element, the shorter one by binary search (lower bound) at that value, the middle element
// goes to its final place and both sides are merged in parallel; merges of fewer than `merge`
// elements in total are serial. Every child carries a work hint proportional to its element count
// and every task group a size hint of its working set (input and temporary bytes).
// The serial elision is the same recursion with the spawns removed.
//
// Places (seed 001 Fig. 4, MERGESORTTOP): with several places the locus version's top level
// sorts quarter k at place_of_part(k, 4) (placement.hpp), merges quarters 1+2 at the first
// quarter's place and 3+4 at the third's, and leaves the last merge unhinted; the input and
// temporary arrays are bound to the places of their quarters.
//
// Locality model (locus-bench --locality): every serial sort declares its range (read and
// written in place), every serial merge its two inputs and its output.
//
// Input: n int64 values, element i = splitmix64 (par_policy.hpp) seeded with `seed`, i-th output
// >> 33 (31-bit values, so large inputs have duplicates). Verified: the output is non-decreasing
// and has the multiset checksum of the input (sum of the values and sum of a 64-bit mix of each
// value, both mod 2^64), computed in prepare().
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <locus/assembly_schedulers.hpp>
#include <locus/flow_graph.hpp>
#include <locus/locality.hpp>
#include <locus/runtime.hpp>
#include <locus/task_group.hpp>

#include "benchmarks/par_policy.hpp"
#include "benchmarks/placement.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace {

using elem = std::int64_t;

struct cutoffs {
  std::int64_t quick;      // sorts below this many elements are serial
  std::int64_t merge;      // merges below this many elements (both inputs) are serial
  std::int64_t insertion;  // the serial quicksort leaves ranges below this to insertion sort
};

void insertion_sort(elem* lo, elem* hi) {
  for (elem* p = lo + 1; p < hi; ++p) {
    const elem v = *p;
    elem* q = p;
    for (; q > lo && *(q - 1) > v; --q) *q = *(q - 1);
    *q = v;
  }
}

elem median3(elem a, elem b, elem c) {
  if (a < b) return b < c ? b : (a < c ? c : a);
  return a < c ? a : (b < c ? c : b);
}

// Cilk's seqquick: quicksort the larger-than-insertion ranges, iterating on the right part.
void seq_quick(elem* lo, elem* hi, std::int64_t insertion) {
  while (hi - lo >= insertion && hi - lo > 2) {
    const elem pivot = median3(*lo, *(lo + (hi - lo) / 2), *(hi - 1));
    elem* i = lo - 1;
    elem* j = hi;
    for (;;) {  // Hoare partition: [lo, j] <= pivot <= (j, hi)
      do ++i;
      while (*i < pivot);
      do --j;
      while (*j > pivot);
      if (i >= j) break;
      std::swap(*i, *j);
    }
    seq_quick(lo, j + 1, insertion);
    lo = j + 1;
  }
  insertion_sort(lo, hi);
}

// Both heads stay in registers and only the side just taken is tested against its end and read
// again; a loop that reloaded both heads and tested both ends per element made the whole sort 7%
// slower than NUMA-WS's serial cilksort (bench/README).
void seq_merge(const elem* a, const elem* a_end, const elem* b, const elem* b_end, elem* dest) {
  if (a < a_end && b < b_end) {
    elem x = *a, y = *b;
    for (;;) {
      if (y < x) {
        *dest++ = y;
        if (++b == b_end) break;
        y = *b;
      } else {
        *dest++ = x;
        if (++a == a_end) break;
        x = *a;
      }
    }
  }
  dest = std::copy(a, a_end, dest);
  std::copy(b, b_end, dest);
}

void declare_merge(const elem* a, const elem* a_end, const elem* b, const elem* b_end, elem* dest) {
  namespace loc = locus::locality;
  const auto na = static_cast<std::size_t>(a_end - a), nb = static_cast<std::size_t>(b_end - b);
  loc::touch_read(a, na * sizeof(elem));
  loc::touch_read(b, nb * sizeof(elem));
  loc::touch_write(dest, (na + nb) * sizeof(elem));
}

void declare_sort(elem* in, std::int64_t n) {
  namespace loc = locus::locality;
  loc::touch_read(in, static_cast<std::size_t>(n) * sizeof(elem));
  loc::touch_write(in, static_cast<std::size_t>(n) * sizeof(elem));
}

template <class P>
void merge(const elem* a, const elem* a_end, const elem* b, const elem* b_end, elem* dest,
           const cutoffs& c) {
  if (a_end - a < b_end - b) {
    std::swap(a, b);
    std::swap(a_end, b_end);
  }
  const std::int64_t n = (a_end - a) + (b_end - b);
  if (n < c.merge) {
    declare_merge(a, a_end, b, b_end, dest);
    seq_merge(a, a_end, b, b_end, dest);
    return;
  }
  // a is the longer (non-empty) input.
  const elem* split_a = a + (a_end - a) / 2;
  const elem* split_b = std::lower_bound(b, b_end, *split_a);
  elem* dest_mid = dest + (split_a - a) + (split_b - b);
  *dest_mid = *split_a;
  const double left = static_cast<double>(dest_mid - dest);
  P::invoke(static_cast<std::size_t>(n) * 2 * sizeof(elem),
            par::child(left, [&] { merge<P>(a, split_a, b, split_b, dest, c); }),
            par::child(static_cast<double>(n) - left,
                       [&] { merge<P>(split_a + 1, a_end, split_b, b_end, dest_mid + 1, c); }));
}

template <class P>
void sort(elem* in, elem* tmp, std::int64_t n, const cutoffs& c) {
  if (n < c.quick) {
    declare_sort(in, n);
    seq_quick(in, in + n, c.insertion);
    return;
  }
  const std::int64_t q = n / 4;
  elem *a = in, *b = a + q, *cc = b + q, *d = cc + q, *end = in + n;
  elem *ta = tmp, *tb = ta + q, *tc = tb + q, *td = tc + q;
  const std::size_t bytes = static_cast<std::size_t>(n) * 2 * sizeof(elem);
  const double wq = static_cast<double>(q), wl = static_cast<double>(n - 3 * q);
  P::invoke(bytes, par::child(wq, [&] { sort<P>(a, ta, q, c); }),
            par::child(wq, [&] { sort<P>(b, tb, q, c); }),
            par::child(wq, [&] { sort<P>(cc, tc, q, c); }),
            par::child(wl, [&] { sort<P>(d, td, n - 3 * q, c); }));
  P::invoke(bytes, par::child(2 * wq, [&] { merge<P>(a, b, b, cc, ta, c); }),
            par::child(wq + wl, [&] { merge<P>(cc, d, d, end, tc, c); }));
  merge<P>(ta, tc, tc, tmp + n, in, c);
}

// NUMA-WS's MERGESORTTOP (seed 001 Fig. 4) on `places` places; sort<locus_tasks> on one.
void sort_top(elem* in, elem* tmp, std::int64_t n, const cutoffs& c, int places) {
  using P = par::locus_tasks;
  if (places < 2 || n < c.quick) {
    sort<P>(in, tmp, n, c);
    return;
  }
  const std::int64_t q = n / 4;
  const auto at = [places](int quarter) { return placement::hint_of_part(quarter, 4, places); };
  const std::size_t bytes = static_cast<std::size_t>(n) * 2 * sizeof(elem);
  const double wq = static_cast<double>(q);
  {
    locus::task_group tg{locus::work_hint{static_cast<double>(n)}, locus::size_hint{bytes}};
    placement::each_part_own_last(4, places, [&](int k) {
      const std::int64_t lo = k * q, len = k == 3 ? n - 3 * q : q;
      tg.run([=, &c] { sort<P>(in + lo, tmp + lo, len, c); },
             locus::work_hint{static_cast<double>(len)}, at(k), locus::parent_first);
    });
    tg.wait();
  }
  {
    // Quarters 1+2 merged at the first one's place, 3+4 at the third's.
    elem *a = in, *b = a + q, *cc = b + q, *d = cc + q, *end = in + n;
    locus::task_group tg{locus::work_hint{static_cast<double>(n)}, locus::size_hint{bytes}};
    const auto merge_place = [&at](int half) { return at(2 * half).id; };
    placement::each_part_own_last(2, merge_place, [&](int half) {
      if (half == 0) {
        tg.run([=, &c] { merge<P>(a, b, b, cc, tmp, c); }, locus::work_hint{2 * wq}, at(0),
               locus::parent_first);
      } else {
        tg.run([=, &c] { merge<P>(cc, d, d, end, tmp + 2 * q, c); },
               locus::work_hint{static_cast<double>(n) - 2 * wq}, at(2), locus::parent_first);
      }
    });
    tg.wait();
  }
  merge<P>(tmp, tmp + 2 * q, tmp + 2 * q, tmp + n, in, c);
}

// ---- through task assemblies (seed 003 §6, Fig. 8 and 9)
//
// The array is cut into 4^L leaves of about tao_leaf elements. A QuickMerge assembly sorts four
// consecutive leaves in place, merges them pairwise into tmp and the two halves back; a Merge
// assembly does the same with four sorted blocks; QuickMerges at level 0 and Merges above make a
// flow graph of fan-in 4 (the paper splits each merge only once: here each pairwise merge is
// two independent parts and the last one four, cut where the merged order puts them, so that an
// assembly has four tasks at every stage). Private scheduler: `dep` (a DAG: a pairwise merge
// after its two sorts, the last merge after both pairs) or `tab` (the three stages as steps of a
// table, a barrier between them). Width tao_width, and tao_top_width for the top tao_top levels
// (the paper's hybrid, Table 3: 4+1 is tao_top=1). Level l's node i is placed on worker
// i * workers / nodes(l), so that consecutive parts of the array stay on neighbouring workers.
struct tao_plan {
  std::int64_t leaf;
  bool table;
  int width, top, top_width;
  std::int64_t insertion;
};

// How many of the first k elements of the merge of a and b come from a (ties from a first, as
// seq_merge takes them).
std::int64_t taken_from_a(const elem* a, std::int64_t na, const elem* b, std::int64_t nb,
                          std::int64_t k) {
  std::int64_t lo = std::max<std::int64_t>(0, k - nb), hi = std::min(k, na);
  while (lo < hi) {
    const std::int64_t i = lo + (hi - lo) / 2;
    if (b[k - i - 1] < a[i]) {
      hi = i;
    } else {
      lo = i + 1;
    }
  }
  return lo;
}

// Part `part` of `parts` of the merge of [a, a + na) and [b, b + nb) into dest.
void merge_part(const elem* a, std::int64_t na, const elem* b, std::int64_t nb, elem* dest,
                int part, int parts) {
  const std::int64_t n = na + nb, k0 = n * part / parts, k1 = n * (part + 1) / parts;
  const std::int64_t i0 = taken_from_a(a, na, b, nb, k0), i1 = taken_from_a(a, na, b, nb, k1);
  const elem *pa = a + i0, *pa_end = a + i1, *pb = b + (k0 - i0), *pb_end = b + (k1 - i1);
  declare_merge(pa, pa_end, pb, pb_end, dest + k0);
  seq_merge(pa, pa_end, pb, pb_end, dest + k0);
}

// The twelve tasks of one assembly over blocks [cut[0], cut[4]): stage 0 sorts the four blocks
// (QuickMerge only), stage 1 merges blocks 0+1 and 2+3 into tmp in two parts each, stage 2 merges
// the halves back in four parts. Task (stage, t) for t in 0..3.
struct assembly_stages {
  elem* in;
  elem* tmp;
  std::array<std::int64_t, 5> cut;
  std::int64_t insertion;

  void sort(int t) const {
    declare_sort(in + cut[t], cut[t + 1] - cut[t]);
    seq_quick(in + cut[t], in + cut[t + 1], insertion);
  }
  void pair(int t) const {
    const int first = t / 2 * 2;  // blocks first, first + 1
    merge_part(in + cut[first], cut[first + 1] - cut[first], in + cut[first + 1],
               cut[first + 2] - cut[first + 1], tmp + cut[first], t % 2, 2);
  }
  void last(int t) const {
    merge_part(tmp + cut[0], cut[2] - cut[0], tmp + cut[2], cut[4] - cut[2], in + cut[0], t, 4);
  }
};

std::unique_ptr<locus::assembly> make_stage_assembly(const assembly_stages& s, bool sorts,
                                                     bool table, int width) {
  if (table) {
    // Each stage takes ceil(4 / width) steps; task t of a stage runs in column t % width.
    const int per_stage = (4 + width - 1) / width;
    const int stages = sorts ? 3 : 2;
    auto a = std::make_unique<locus::table_assembly>(width, stages * per_stage);
    int stage = 0;
    const auto fill = [&](auto task) {
      for (int t = 0; t < 4; ++t)
        a->set(stage * per_stage + t / width, t % width, [s, t, task] { task(s, t); });
      ++stage;
    };
    if (sorts) fill([](const assembly_stages& x, int t) { x.sort(t); });
    fill([](const assembly_stages& x, int t) { x.pair(t); });
    fill([](const assembly_stages& x, int t) { x.last(t); });
    return a;
  }
  auto a = std::make_unique<locus::dependence_assembly>(width);
  std::array<int, 4> sort_ids{}, pair_ids{};
  if (sorts) {
    for (int t = 0; t < 4; ++t)
      sort_ids[static_cast<std::size_t>(t)] = a->add([s, t] { s.sort(t); });
  }
  for (int t = 0; t < 4; ++t) {
    pair_ids[static_cast<std::size_t>(t)] = a->add([s, t] { s.pair(t); });
    if (sorts) {
      a->depend(sort_ids[static_cast<std::size_t>(t / 2 * 2)],
                pair_ids[static_cast<std::size_t>(t)]);
      a->depend(sort_ids[static_cast<std::size_t>(t / 2 * 2 + 1)],
                pair_ids[static_cast<std::size_t>(t)]);
    }
  }
  for (int t = 0; t < 4; ++t) {
    const int last = a->add([s, t] { s.last(t); });
    for (const int p : pair_ids) a->depend(p, last);
  }
  return a;
}

void sort_tao(elem* in, elem* tmp, std::int64_t n, const tao_plan& plan) {
  int levels = 1;
  while (n / (std::int64_t{1} << (2 * (levels + 1))) >= plan.leaf && levels < 20) ++levels;
  const std::int64_t leaves = std::int64_t{1} << (2 * levels);
  const int workers = locus::num_workers();
  locus::flow_graph g;
  std::vector<locus::flow_graph::node> below;
  for (int level = 0; level < levels; ++level) {
    const std::int64_t nodes = leaves >> (2 * (level + 1));
    const std::int64_t blocks_per_node = std::int64_t{1} << (2 * (level + 1));  // leaves
    const int width = std::min(workers, level >= levels - plan.top ? plan.top_width : plan.width);
    std::vector<locus::flow_graph::node> here;
    for (std::int64_t i = 0; i < nodes; ++i) {
      assembly_stages s{in, tmp, {}, plan.insertion};
      for (int q = 0; q <= 4; ++q) {
        const std::int64_t leaf_at = i * blocks_per_node + q * blocks_per_node / 4;
        s.cut[static_cast<std::size_t>(q)] = n * leaf_at / leaves;
      }
      auto a = make_stage_assembly(s, level == 0, plan.table, width);
      a->place_on(static_cast<int>(i * workers / nodes));
      here.push_back(g.add(std::move(a)));
      if (level > 0) {
        for (int q = 0; q < 4; ++q)
          g.make_edge(below[static_cast<std::size_t>(4 * i + q)], here.back());
      }
    }
    below = std::move(here);
  }
  g.run();
}

struct checksum {
  std::uint64_t sum = 0, mixed = 0;
  bool operator==(const checksum&) const = default;
};

checksum multiset_checksum(std::span<const elem> v) {
  checksum s;
  for (const elem x : v) {
    s.sum += static_cast<std::uint64_t>(x);
    s.mixed += par::splitmix64::mix(static_cast<std::uint64_t>(x));
  }
  return s;
}

class cilksort_instance final : public instance {
 public:
  cilksort_instance(std::int64_t n, cutoffs c, std::uint64_t seed, tao_plan plan)
      : c_(c),
        plan_(plan),
        seed_(seed),
        data_(static_cast<std::size_t>(n)),
        tmp_(static_cast<std::size_t>(n)) {
    fill();
    expected_ = multiset_checksum(data_);
  }

  void reset() override { fill(); }

  void place(data_placement& where) override {
    placement::bind_parts(where, data_.data(), data_.size(), 4);
    placement::bind_parts(where, tmp_.data(), tmp_.size(), 4);
  }

  void run(const run_context& ctx) override {
    elem* in = data_.data();
    elem* tmp = tmp_.data();
    const auto n = static_cast<std::int64_t>(data_.size());
    switch (ctx.which) {
      case impl::serial:
        sort<par::serial>(in, tmp, n, c_);
        break;
      case impl::locus:
        sort_top(in, tmp, n, c_, ctx.places);
        break;
      case impl::tao:
        sort_tao(in, tmp, n, plan_);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        sort<par::tbb_tasks>(in, tmp, n, c_);
        break;
      case impl::omp:
        sort<par::omp_tasks>(in, tmp, n, c_);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    const auto unsorted = std::is_sorted_until(data_.begin(), data_.end());
    const checksum got = multiset_checksum(data_);
    v.result = "sum=" + std::to_string(got.sum) + " mix=" + std::to_string(got.mixed);
    if (unsorted != data_.end()) {
      v.message = "not sorted at index " + std::to_string(unsorted - data_.begin());
    } else if (!(got == expected_)) {
      v.message = "not a permutation of the input: checksum sum=" + std::to_string(expected_.sum) +
                  " mix=" + std::to_string(expected_.mixed) + " expected";
    } else {
      v.ok = true;
    }
    return v;
  }

 private:
  void fill() {
    par::splitmix64 rng(seed_);
    for (elem& x : data_) x = static_cast<elem>(rng.next() >> 33);
  }

  cutoffs c_;
  tao_plan plan_;
  std::uint64_t seed_;
  std::vector<elem> data_, tmp_;
  checksum expected_;
};

}  // namespace

benchmark make_cilksort_benchmark() {
  benchmark b;
  b.name = "cilksort";
  b.description =
      "Cilk/BOTS cilksort (NUMA-WS): 4-way parallel mergesort with parallel merge (binary-search "
      "split), serial quicksort + insertion sort at the leaves, of 31-bit random int64s. Verified "
      "sorted and a permutation of the input (multiset checksum).";
  b.params = {
      param_spec::integer("n", "elements to sort (NUMA-WS used 1.3e8)",
                          {"262144", "5000000", "130000000"}, 1, 400000000),
      param_spec::integer("quick", "sorts of fewer elements are a serial quicksort (Cilk 2048)",
                          {"2048", "2048", "2048"}, 4, 1LL << 40),
      param_spec::integer("merge", "merges of fewer elements in total are serial (Cilk 2048)",
                          {"2048", "2048", "2048"}, 2, 1LL << 40),
      param_spec::integer("insertion",
                          "the serial quicksort leaves ranges below this to insertion "
                          "sort (Cilk 20)",
                          {"20", "20", "20"}, 1, 1 << 20),
      param_spec::integer("seed", "splitmix64 seed of the input", {"1", "1", "1"}, 0, 2147483647),
  };
  b.params.push_back(param_spec::integer(
      "tao_leaf", "tao only: elements per in-place sort at least (the array is cut into 4^L)",
      {"8192", "32768", "32768"}, 16, 1LL << 40));
  b.params.push_back(param_spec::choice("tao_sched",
                                        "tao only: private scheduler, dep (a DAG) or tab (a table)",
                                        {"dep", "dep", "dep"}, {"dep", "tab"}));
  b.params.push_back(param_spec::integer(
      "tao_width", "tao only: assembly width (at most the runtime's)", {"2", "2", "2"}, 1, 4));
  b.params.push_back(param_spec::integer("tao_top", "tao only: top levels of width tao_top_width",
                                         {"0", "0", "0"}, 0, 20));
  b.params.push_back(param_spec::integer("tao_top_width", "tao only: width of the top levels",
                                         {"4", "4", "4"}, 1, 4));
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.on_request = {impl::tao};
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    const cutoffs c{p.integer("quick"), p.integer("merge"), p.integer("insertion")};
    const tao_plan plan{p.integer("tao_leaf"),
                        p.text("tao_sched") == "tab",
                        static_cast<int>(p.integer("tao_width")),
                        static_cast<int>(p.integer("tao_top")),
                        static_cast<int>(p.integer("tao_top_width")),
                        p.integer("insertion")};
    return std::make_unique<cilksort_instance>(p.integer("n"), c,
                                               static_cast<std::uint64_t>(p.integer("seed")), plan);
  };
  return b;
}

}  // namespace locus_bench
