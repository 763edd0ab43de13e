// A futex word per rank of this node, in memory shared by the node's ranks: a rank that sends a
// message to another rank of its node rings that rank's bell, so that the receiver's
// communication thread can sleep until something arrives instead of waking every millisecond
// to poll. On a machine where every rank has one core, those polls are what the workers lose:
// each one preempts a worker, and a thousand a second cost a few percent of its cycles.
//
// The memory is a POSIX shared-memory object that the node's first rank creates and the others
// map, found by a name it broadcasts: of MPI it needs only the node's communicator
// (MPI_Comm_split_type), not a one-sided component that supports shared windows, and it is
// unmapped without a collective call.
//
// A bell's word counts rings in its upper bits; bit 0 says its owner sleeps (or is about to),
// so that a ring makes a system call only then. The futexes are shared across processes (not
// FUTEX_PRIVATE).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace locus::detail {

class node_doorbells {
 public:
  // Collective over MPI_COMM_WORLD, on the thread that calls MPI. Where the node's ranks cannot
  // share memory, no rank has a bell but this process's own (private) one.
  node_doorbells();
  ~node_doorbells();
  node_doorbells(const node_doorbells&) = delete;
  node_doorbells& operator=(const node_doorbells&) = delete;

  // Whether every rank of the job can be rung: then nothing arrives unannounced.
  bool covers_every_rank() const noexcept { return covers_every_rank_; }

  // From any thread of this process: rings rank's bell (this rank's own: a local wake-up); a
  // no-op for a rank of another node.
  void ring(int rank) noexcept;
  void ring_own() noexcept;

  // The owner's side: read the bell before looking for work, then sleep on what was read:
  // returns at once if the bell rang since, else at a ring or after `limit`.
  std::uint32_t own_value() const noexcept;
  void sleep(std::uint32_t seen, std::chrono::microseconds limit) noexcept;

 private:
  std::atomic<std::uint32_t>* own_;
  std::atomic<std::uint32_t> private_bell_{0};
  std::vector<std::atomic<std::uint32_t>*> by_rank_;  // null: another node's rank
  bool covers_every_rank_ = false;
  void* mapping_ = nullptr;
  std::size_t mapped_bytes_ = 0;
};

}  // namespace locus::detail
