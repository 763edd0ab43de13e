// locus::dist_taskq: one locus::taskq stitched from per-process queues over MPI (HotSLAW §3,
// DESIGN.md §8). Each process (an MPI rank) runs its own locus runtime and workers; tasks that
// have not started yet move between ranks when a rank runs out of work.
//
//   void fib_task(const int& n, long& out) { ... q->put(fib_task, n - 1, x); ... q->wait(); }
//   int main() {
//     locus::dist_taskq q{locus::task_function(fib_task)};   // collective, same order everywhere
//     long r = 0;
//     locus::root_exec([&] {
//       if (q.rank() == 0) q.put(fib_task, 30, r);
//       q.wait();            // collective at the top level: returns when no task exists anywhere
//     });                    // r is defined on rank 0
//   }
//
// The verbs are taskq's (put, wait, fence, execute, steal, all_empty) with these additions:
//  - Construction is collective: every rank creates its queues in the same order with the same
//    functions in the same order (a task crosses ranks as its function's index). Destruction is
//    collective too, after the last top-level wait.
//  - A task's input is copied when it is put and travels with it when it is stolen; its output
//    bytes come back to the rank of the task that put it, into the output buffer put named, by the
//    time the wait that joins the task returns. Inputs and outputs must therefore be plain bytes:
//    no pointers into one process's memory (they mean nothing on another rank).
//  - wait() at the top level is collective: every rank calls it, and it returns on every rank once
//    no task of the queue exists anywhere, neither queued, running, nor in flight between ranks
//    (Dijkstra-Safra termination detection). all_empty() is the non-blocking form of the same
//    test, for HotSLAW's `while (!all_empty()) { execute() || steal(); }` loop.
//  - Only plain puts migrate; put_after and fenced puts stay on the rank that put them.
//  - A task without an output (`void f(const In&)`, or an output size of 0) that moved to another
//    rank is joined by the collective top-level wait, not by its putter's join: nothing of it
//    comes back, so the putter's rank does not wait on another rank's work (HotSLAW's UTS form:
//    tasks that put their children and keep their counts per rank, gathered after the wait).
//  - With more than one rank, an exception that leaves a task that came from another rank, or
//    the top-level wait, ends the whole job (MPI_Abort) with a message naming the rank and the
//    error: the rank that waits for that task may be elsewhere. With one rank (a program started
//    without mpirun, or mpirun -np 1), the queue is a plain taskq and wait() rethrows.
//
// Configuration (environment): LOCUS_DIST_STEAL (half: a thief takes half of the victim's
// migratable tasks, the default; one; or a count), LOCUS_DIST_POOL (how many queued tasks per rank
// are kept migratable at most, default 4096), LOCUS_DIST_NODE_SIZE (ranks per node to assume
// instead of the processor names MPI reports). docs/distributed.md describes the protocol.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "locus/taskq.hpp"

namespace locus {

namespace detail {
class dist_engine;
}

// One rank's counters since the queue was created (or reset_stats).
struct dist_rank_stats {
  int rank = 0;
  std::uint64_t tasks = 0;             // tasks run on this rank
  std::uint64_t steals_sent = 0;       // steal requests this rank sent
  std::uint64_t steals_sent_node = 0;  // of them, to ranks on its own node
  std::uint64_t steals_served = 0;     // requests it answered with tasks
  std::uint64_t steals_refused = 0;    // requests it answered with none
  std::uint64_t tasks_sent = 0;        // tasks that left this rank
  std::uint64_t tasks_received = 0;    // tasks that came to it
  std::uint64_t outputs_sent = 0;      // outputs of tasks from other ranks it sent back
  std::uint64_t bytes_sent = 0;        // task and output bytes sent
  std::uint64_t bytes_received = 0;    // task and output bytes received
  double idle_seconds = 0;             // time its waits found nothing to run
  // Times its communication thread woke (a ring, a poke or a sleep's end): what that thread
  // takes from the workers' cores.
  std::uint64_t comm_wakeups = 0;
};

class dist_taskq {
 public:
  explicit dist_taskq(std::initializer_list<taskq_function> functions);
  explicit dist_taskq(std::span<const taskq_function> functions);
  dist_taskq(const dist_taskq&) = delete;
  dist_taskq& operator=(const dist_taskq&) = delete;
  ~dist_taskq();

  int rank() const noexcept;
  int ranks() const noexcept;

  void put(task_fn fn, const void* in, void* out) { q_.put(fn, in, out); }
  template <class In, class Out>
  void put(void (*fn)(const In&, Out&), const std::type_identity_t<In>& in, Out& out) {
    q_.put(fn, in, out);
  }
  template <class In>
  void put(void (*fn)(const In&), const std::type_identity_t<In>& in) {
    q_.put(fn, in);
  }

  bool execute() { return q_.execute(); }
  bool steal();
  void wait();
  void fence() { q_.fence(); }
  bool all_empty();

  dist_rank_stats stats() const;
  void reset_stats();
  // Collective: every rank's stats on rank 0 (in rank order), an empty vector elsewhere.
  std::vector<dist_rank_stats> gather_stats();

  // Collective: every rank's `mine` on rank 0 (in rank order), an empty vector elsewhere. For
  // what the ranks computed apart, e.g. the counts output-less tasks kept per rank, after the
  // top-level wait.
  template <class T>
  requires std::is_trivially_copyable_v<T> std::vector<T> gather(const T& mine) {
    const std::vector<std::byte> bytes = gather_bytes(std::as_bytes(std::span(&mine, 1)));
    std::vector<T> all(bytes.size() / sizeof(T));
    if (!all.empty()) std::memcpy(all.data(), bytes.data(), bytes.size());
    return all;
  }
  // The same for `mine.size()` bytes from every rank (the same count everywhere).
  std::vector<std::byte> gather_bytes(std::span<const std::byte> mine);

 private:
  taskq q_;
  std::unique_ptr<detail::dist_engine> engine_;  // null with one rank
};

}  // namespace locus
