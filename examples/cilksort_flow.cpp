// cilksort_flow: a sort built as a flow graph of task assemblies (TAO, seed 003 §6, Fig. 8-9)
// under the tao scheduler. An assembly is one unit of work run by `width` workers at once with
// its own private scheduler; a flow graph runs each assembly once its predecessors have ended.
//
//   QuickMerge (level 0): sorts four blocks in place, merges them pairwise into tmp, merges the
//              two halves back: a dependence_assembly (a small DAG, one shared ready queue).
//   Merge (levels 1..): merges its four sorted quarters the same way: a table_assembly (the two
//              pairwise merges in one step, a barrier, the last merge in the next).
//
// Four QuickMerges feed each Merge, four Merges the next level, up to one at the root. Each
// assembly is placed on a worker in proportion to its position in the array, so neighbouring
// parts of the array start on neighbouring workers (the paper's placement API).
//
//   build/release/examples/cilksort_flow [levels]     (LOCUS_TAO_STEAL=0: placement only)
//
// Verified against std::sort.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include <locus/locus.hpp>

namespace {

using key = std::uint32_t;

// Four consecutive blocks of `in`, [cut[0], cut[1]) ... [cut[3], cut[4]); tmp is as large as in.
struct quad {
  key* in;
  key* tmp;
  std::array<std::size_t, 5> cut;

  void sort(int b) const { std::sort(in + cut[b], in + cut[b + 1]); }
  // Blocks 2h and 2h + 1 merged into tmp.
  void merge_pair(int h) const {
    std::merge(in + cut[2 * h], in + cut[2 * h + 1], in + cut[2 * h + 1], in + cut[2 * h + 2],
               tmp + cut[2 * h]);
  }
  // The two merged halves in tmp merged back into in.
  void merge_halves() const {
    std::merge(tmp + cut[0], tmp + cut[2], tmp + cut[2], tmp + cut[4], in + cut[0]);
  }
};

// QuickMerge: four sorts, two pairwise merges each after its two sorts, the last merge after both.
std::unique_ptr<locus::assembly> quick_merge(const quad& s, int width) {
  auto a = std::make_unique<locus::dependence_assembly>(width);
  std::array<int, 4> sorts{};
  for (int b = 0; b < 4; ++b) sorts[b] = a->add([s, b] { s.sort(b); });
  const int last = a->add([s] { s.merge_halves(); });
  for (int h = 0; h < 2; ++h) {
    const int pair = a->add([s, h] { s.merge_pair(h); });
    a->depend(sorts[2 * h], pair);
    a->depend(sorts[2 * h + 1], pair);
    a->depend(pair, last);
  }
  return a;
}

// Merge: a table of steps x workers; the steps are separated by a barrier of its workers.
std::unique_ptr<locus::assembly> merge(const quad& s, int width) {
  const int pair_steps = (2 + width - 1) / width;  // one step when two workers take both pairs
  auto a = std::make_unique<locus::table_assembly>(width, pair_steps + 1);
  for (int h = 0; h < 2; ++h) a->set(h / width, h % width, [s, h] { s.merge_pair(h); });
  a->set(pair_steps, 0, [s] { s.merge_halves(); });
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const int levels = argc > 1 ? std::atoi(argv[1]) : 3;  // 4^levels leaf blocks
  if (levels < 1 || levels > 8) {
    std::fprintf(stderr, "cilksort_flow: levels must be in 1..8\n");
    return EXIT_FAILURE;
  }
  const std::size_t n = std::size_t{1} << 20;
  std::vector<key> keys(n), tmp(n);
  std::mt19937 rng{7};
  for (auto& k : keys) k = static_cast<key>(rng());
  std::vector<key> expected = keys;
  std::sort(expected.begin(), expected.end());

  locus::runtime rt{locus::options{.sched = "tao"}};
  const int workers = rt.num_workers();
  const int width = std::min(2, workers);  // the paper's best uniform width (dep-2)

  locus::flow_graph g;
  const std::size_t leaves = std::size_t{1} << (2 * levels);
  std::vector<locus::flow_graph::node> below;  // the previous level's assemblies, in order
  int quick_merges = 0, merges = 0;
  for (int level = 0; level < levels; ++level) {
    const std::size_t nodes = leaves >> (2 * (level + 1));
    const std::size_t span = leaves / nodes;  // leaf blocks per assembly
    std::vector<locus::flow_graph::node> here;
    for (std::size_t i = 0; i < nodes; ++i) {
      quad s{keys.data(), tmp.data(), {}};
      for (std::size_t b = 0; b <= 4; ++b) s.cut[b] = n * (i * span + b * span / 4) / leaves;
      auto a = level == 0 ? quick_merge(s, width) : merge(s, width);
      (level == 0 ? quick_merges : merges) += 1;
      a->place_on(static_cast<int>(i * static_cast<std::size_t>(workers) / nodes));
      here.push_back(g.add(std::move(a)));
      // Fan-in of four: this assembly starts once the four that sorted its quarters ended.
      for (std::size_t b = 0; level > 0 && b < 4; ++b) g.make_edge(below[4 * i + b], here.back());
    }
    below = std::move(here);
  }
  rt.exec([&] { g.run(); });  // every assembly once, each after its predecessors

  const bool ok = keys == expected;
  std::printf(
      "cilksort-flow: sorted %zu keys through %d QuickMerge and %d Merge assemblies of "
      "width %d under %s on %d workers, %s\n",
      n, quick_merges, merges, width, rt.scheduler().c_str(), workers, ok ? "ok" : "WRONG");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
