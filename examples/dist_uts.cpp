// dist_uts: an Unbalanced Tree Search (UTS) across the ranks of an MPI job with
// locus::dist_taskq (docs/distributed.md; HotSLAW, seed 004 §3). The tree is implicit: a node is
// a 64-bit state, and its number of children and their states follow from that state alone, so
// any rank can expand any node. Rank 0 puts the root; tasks that have not started yet move to
// ranks that run out of work; each task's counts come back to the rank that put it.
//
//   mpirun -np 2 -x LOCUS_WORKERS=1 build/release/examples/dist_uts
//   (as root and with more ranks than cores: mpirun --allow-run-as-root --oversubscribe ...)
//
// Without mpirun it runs as one rank. Rank 0 verifies the counts against a serial search.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <locus/dist_taskq.hpp>
#include <locus/runtime.hpp>

namespace {

// A binomial tree (UTS's BIN): the root has root_children children; every other node has
// `m` children with probability q, else none. q * m < 1 keeps the tree finite; close to 1 it is
// very unbalanced: most subtrees are tiny, a few are huge.
constexpr int root_children = 2000;
constexpr int m = 4;
constexpr double q = 0.245;

// splitmix64's finaliser, applied a few times per node to stand in for UTS's SHA-1 (a node must
// cost something for the search to be worth spreading).
std::uint64_t mix(std::uint64_t x) {
  for (int round = 0; round < 16; ++round) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
  }
  return x;
}

std::uint64_t child_state(std::uint64_t parent, int i) {
  return mix(parent + 1 + i);
}

int num_children(std::uint64_t state, int height) {
  if (height == 0) return root_children;
  const double u = static_cast<double>(state >> 11) * 0x1p-53;  // uniform in [0, 1)
  return u < q ? m : 0;
}

// Inputs and outputs travel between ranks as bytes: plain structs, no pointers.
struct node {
  std::uint64_t state;
  int height;
};
struct counts {
  std::uint64_t nodes = 0, leaves = 0;
  int depth = 0;
};

counts add(counts a, const counts& b) {
  a.nodes += b.nodes;
  a.leaves += b.leaves;
  a.depth = std::max(a.depth, b.depth);
  return a;
}

locus::dist_taskq* tq = nullptr;  // the queue the task function puts into

// One task per node: put a task per child, wait for them, add up their counts.
void search(const node& n, counts& out) {
  const int k = num_children(n.state, n.height);
  if (k == 0) {
    out = {1, 1, n.height};
    return;
  }
  std::vector<counts> child(static_cast<std::size_t>(k));  // outputs: valid until the wait
  for (int i = 0; i < k; ++i) {
    tq->put(search, node{child_state(n.state, i), n.height + 1},
            child[static_cast<std::size_t>(i)]);
  }
  tq->wait();
  out = {1, 0, 0};
  for (const counts& c : child) out = add(out, c);
}

counts search_serial(const node& n) {
  const int k = num_children(n.state, n.height);
  if (k == 0) return {1, 1, n.height};
  counts total{1, 0, 0};
  for (int i = 0; i < k; ++i)
    total = add(total, search_serial({child_state(n.state, i), n.height + 1}));
  return total;
}

}  // namespace

int main() {
  bool ok = true;
  {
    // Collective: every rank creates the queue, with the same functions in the same order.
    locus::dist_taskq queue{locus::task_function(search)};
    tq = &queue;
    const node root{mix(42), 0};
    counts got;
    locus::root_exec([&] {
      if (queue.rank() == 0) queue.put(search, root, got);
      queue.wait();  // collective: returns on every rank once no task is left anywhere
    });
    const std::vector<locus::dist_rank_stats> ranks = queue.gather_stats();  // collective too
    if (queue.rank() == 0) {
      const counts want = search_serial(root);
      ok = got.nodes == want.nodes && got.leaves == want.leaves && got.depth == want.depth;
      for (const auto& r : ranks) {
        std::printf("  rank %d ran %llu tasks, %llu of them stolen from other ranks\n", r.rank,
                    static_cast<unsigned long long>(r.tasks),
                    static_cast<unsigned long long>(r.tasks_received));
      }
      std::printf("dist-uts: %llu nodes, %llu leaves, depth %d on %d rank(s) x %d worker(s), %s\n",
                  static_cast<unsigned long long>(got.nodes),
                  static_cast<unsigned long long>(got.leaves), got.depth, queue.ranks(),
                  locus::num_workers(), ok ? "ok" : "WRONG");
    }
  }  // destruction is collective as well
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
