// The footprint of every subtree of a tree of task groups: the distinct bytes its tasks touch,
// from the ranges they declare to the locality model (locus/locality.hpp) during one profiled
// iteration. Learned size hints (sched/size_learning.hpp) give a group its footprint as its
// size_hint.
//
// Why distinct bytes and not the sum of what each task declares (Eq. 1 of seed 002 over
// declarations): a blocked matrix product's leaves each read their blocks of A and B, so the sum
// over a product of order n counts A and B n / leaf times, where the working set a cache must
// hold is each of them once.
//
// Every (line, group) pair a task declares is recorded, in its worker's buffer, while the
// iteration runs in whatever order the schedule gives; footprints() then counts, for every
// subtree, the lines touched in it with the offline method for distinct elements per subtree:
// number the groups in depth-first order, sort each line's groups by that number, and for each
// two consecutive ones take one away at their lowest common ancestor. A subtree is a run of
// consecutive numbers, so what is left in it is one per line it touched.
//
// A bounded budget of records: past it, lines are sampled by address (the sampled set halves
// each time the budget fills, the same for every worker), and each sampled line stands for
// `sample_every()` lines.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace locus::prof {

class footprint_profile {
 public:
  struct node {
    std::uint64_t key = 0;
    node* parent = nullptr;
    std::uint32_t depth = 0;
    std::uint32_t order = 0;  // depth-first number (footprints())
    std::int64_t lines = 0;   // distinct lines of its subtree (footprints())
  };

  // `max_records` lines recorded at most, shared evenly among `workers` buffers.
  footprint_profile(int workers, std::size_t max_records, std::size_t line_bytes);
  footprint_profile(const footprint_profile&) = delete;
  footprint_profile& operator=(const footprint_profile&) = delete;

  // The node of the whole iteration (the root task's own touches and its groups').
  node* root() noexcept { return &root_; }
  // A node for the group named `key`, under `parent`, from `worker`'s arena.
  node* add(int worker, std::uint64_t key, node* parent);
  // A task of group `n` touched `rows` ranges of `row_bytes` bytes, `stride` bytes apart, from
  // `p`; recorded in `worker`'s buffer.
  void touch(int worker, node* n, const void* p, std::size_t row_bytes, std::size_t rows,
             std::ptrdiff_t stride);

  // Once no task adds or touches any more: the distinct bytes of each named group's subtree (the
  // largest where two groups share a name).
  std::unordered_map<std::uint64_t, std::uint64_t> footprints();
  // How many lines one recorded line stands for (1 until the budget filled).
  std::uint64_t sample_every() const noexcept { return mask_.load(std::memory_order_relaxed) + 1; }
  std::uint64_t recorded() const;
  std::size_t groups() const;

 private:
  struct record {
    std::uint64_t line;
    node* group;
  };
  struct alignas(64) worker_part {
    std::mutex lock;  // uncontended: against a finishing thread, not other workers
    std::deque<node> nodes;
    std::vector<record> records;
  };
  bool sampled(std::uint64_t line, std::uint64_t mask) const noexcept;
  // `w`'s buffer is full: sample half as many lines (unless another worker just did) and drop
  // what is no longer sampled.
  void thin(worker_part& w);

  std::vector<worker_part> parts_;
  std::size_t budget_;  // records per worker
  std::size_t line_bytes_;
  std::atomic<std::uint64_t> mask_{0};
  node root_;
};

}  // namespace locus::prof
