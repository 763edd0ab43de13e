// What CATS learns from a program's first iteration (seed 002: Chen, Guo, Huang, ICS 2012;
// §3.2): every task, named by its id (cats.cpp: the i-th child of task S is S.i), with the size of
// the data its subtree touches, its SOID (Eq. 1: the bytes the task touched itself plus its
// children's SOIDs), and from those sizes each task's tier against the shared cache of a package
// (§3.2.2, Fig. 6). cats.cpp profiles and schedules with it.
//
// A task's bytes come from one of three sources, chosen after the iteration in this order:
// - misses: private last-level cache misses times the line size, measured per task (the paper's
//   PMU counters; a test hook injects them);
// - hints: the size_hint of the first group the task creates, else the sum of its children's;
// - declared: the bytes the task declared to the locality model (locus/locality.hpp), measured
//   like misses.
// The table is written during the profiling iteration (nodes in per-worker arenas, so that no
// lock is taken on the spawn path) and frozen afterwards into a map read without locks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace locus::detail::cats {

// inter: above the cut (parent-first, package pools, head cores only); leaf: a leaf inter-socket
// task, the root of an intra-socket subtree; intra: inside such a subtree.
enum class tier : std::uint8_t { unknown, inter, leaf, intra };

enum class source : std::uint8_t { none, misses, hints, declared };
const char* source_name(source s) noexcept;

struct profile_node {
  std::uint64_t id = 0;
  profile_node* parent = nullptr;
  // Bytes measured while the task ran, with those of its descendants that have no node.
  std::atomic<std::uint64_t> own{0};
  // Instructions counted while it ran (the PMU's, or a test's), likewise: with `own` misses,
  // its cache misses per instruction (§3.5).
  std::atomic<std::uint64_t> instructions{0};
  // The SOIDs of its children that have ended, by measurement and by hints.
  std::atomic<std::uint64_t> children_measured{0};
  std::atomic<std::uint64_t> children_hinted{0};
  // The size_hint of the first group the task created; written by the task itself.
  std::uint64_t hint = 0;
  bool ended = false;
  std::uint64_t measured = 0, hinted = 0;  // its SOIDs, once ended

  std::uint64_t measured_soid() const noexcept;
  std::uint64_t hinted_soid() const noexcept;
};

struct partition_counts {
  std::uint64_t nodes = 0, inter = 0, leaves = 0;
};

// §3.5 over the tasks that counted instructions: how many there were, how many had fewer cache
// misses per instruction than the threshold (CPU-bound tasks), and the totals.
struct cmpi_vote {
  std::uint64_t tasks = 0, cpu_bound = 0, misses = 0, instructions = 0;
  double cmpi() const noexcept {
    return instructions != 0 ? static_cast<double>(misses) / static_cast<double>(instructions) : 0;
  }
};

class profile {
 public:
  // At most `max_nodes` tasks get a node, shared evenly among the workers' arenas.
  profile(int workers, std::size_t max_nodes);
  profile(const profile&) = delete;
  profile& operator=(const profile&) = delete;

  // A node for the task with id `id`, a child of `parent` (nullptr for a root), from `worker`'s
  // arena (only that worker's thread calls this for it); nullptr when the arena is full: the task
  // then counts towards its nearest ancestor with a node.
  profile_node* add(int worker, std::uint64_t id, profile_node* parent);
  // The task of `n` has ended: its SOIDs (Eq. 1) are final and added to its parent's.
  static void end(profile_node& n) noexcept;

  // Each task's own misses (`own` / line_bytes) per instruction against `threshold`.
  cmpi_vote vote_cmpi(double threshold, std::uint64_t line_bytes) const noexcept;

  // Whether any task measured bytes, or created a group with a size hint.
  bool any_measured() const noexcept;
  bool any_hint() const noexcept;

  // After the iteration (every task but the one calling it has ended): sizes by `by`, tiers
  // against `cache_bytes`, frozen for lookups from any thread. The nodes are kept.
  partition_counts partition(source by, std::uint64_t cache_bytes);
  // The tier of the task with id `id` (unknown if the profiled iteration had no such task).
  tier tier_of(std::uint64_t id) const noexcept;
  // The SOID of the first root added, by `by`.
  std::uint64_t root_size(source by) const noexcept;

 private:
  struct alignas(64) arena {
    std::deque<profile_node> nodes;
    std::size_t room = 0;
  };
  std::vector<arena> arenas_;
  profile_node* root_ = nullptr;
  std::unordered_map<std::uint64_t, tier> frozen_;
};

}  // namespace locus::detail::cats
