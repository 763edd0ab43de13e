// One distributed queue's engine on one rank: the pool of migratable tasks (HotSLAW's public
// queue portion), the tasks that came from other ranks, the outputs on their way back, and the
// communication thread's side of the steal protocol and of termination detection.
//
// Which tasks migrate: a put finds room in the pool (LOCUS_DIST_POOL tasks) and comes from a task
// no deeper than the shallowest one already there (or, while a thief's request waits for the
// pool to fill, has no output), and is offered: its input is copied into a record kept in the
// pool, and a small task that claims the record is queued parent-first in the putter's group.
// Whoever comes first takes the record: a local worker running the claiming task runs the task
// there; the communication thread answering a thief ships it (only queued, never started tasks
// move). Other puts are the plain taskq's. The putter's join waits for shipped tasks with an
// output through its frame's remote_pending, which an arriving output decrements; shipped
// output-less tasks are left to the collective top-level wait. Tasks that came from other ranks
// wait in the same pool, as the shallowest of all, until a waiting thread of this rank runs them
// or a thief takes them on (their outputs still go straight to their origin).
//
// Threads: the pool is shared under a lock; everything about MPI belongs to the communication
// thread (comm_thread.hpp).
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "dist/comm_thread.hpp"
#include "dist/dist_config.hpp"
#include "dist/termination.hpp"
#include "locus/dist_taskq.hpp"
#include "taskq/taskq_impl.hpp"

namespace locus::detail {

// A task kept migratable: a put of this rank (frame set) or a task from another rank (frame null:
// its output goes back to (origin, handle)). `state` changes only under the pool's lock.
struct pool_record {
  enum class state { queued, claimed, shipped };
  const taskq_function* fn = nullptr;
  std::uint32_t index = 0;
  std::unique_ptr<std::byte[]> input;
  std::uint32_t depth = 0;  // the putter's; 0 for a task from another rank
  void* out = nullptr;
  taskq_frame* frame = nullptr;
  int origin = 0;
  std::uint64_t handle = 0;
  state st = state::queued;
};

class dist_engine final : public taskq_remote, public comm_client {
 public:
  // Collective: every rank creates its engines in the same order.
  dist_engine(taskq_impl& q, comm_thread& comm, const dist_config& config);
  // Collective: returns once every rank has begun destroying this queue and no message of it is
  // in flight.
  ~dist_engine() override;
  dist_engine(const dist_engine&) = delete;
  dist_engine& operator=(const dist_engine&) = delete;

  int rank() const noexcept { return comm_.rank(); }
  int ranks() const noexcept { return comm_.size(); }

  // taskq_remote (workers).
  // Only puts no deeper than the shallowest queued record: the pool holds the biggest pieces of
  // work, and a worker that descends below them puts plainly instead of refilling the pool
  // with small tasks that it would claim back at once.
  // While a thief waits for this rank's answer (wanted_), every output-less put is offered until
  // the pool holds enough to answer it. (Not puts with an output: each of those that leaves
  // makes its putter's join wait on another rank, and deep ones are small.)
  bool wants_offer(const taskq_frame& f, std::size_t out_size) const noexcept override {
    return pool_size_.load(std::memory_order_relaxed) < config_.pool &&
           (f.depth <= shallowest_.load(std::memory_order_relaxed) ||
            (out_size == 0 && wanted_.load(std::memory_order_relaxed)));
  }
  void offer(taskq_frame& f, const taskq_function& fn, const void* in, void* out) override;
  void help() noexcept override;

  // comm_client (communication thread).
  bool progress() override;
  bool awaited() noexcept override;

  // The top level. begin_epoch: the calling rank will put nothing more at the top level until
  // the epoch it returns has ended; await_epoch helps until that is so everywhere.
  std::uint64_t begin_epoch() noexcept;
  void await_epoch(std::uint64_t epoch) noexcept;
  bool all_empty() noexcept;
  // Runs one task that came from another rank; returns whether there was one.
  bool run_import() noexcept;
  // This rank found nothing to run: the communication thread may look for work elsewhere.
  // The communication thread sleeps short while a thread waits here; one that has just begun to
  // wait wakes it from a long sleep (comm_thread::resting_long).
  void hungry() noexcept {
    waited_.store(true, std::memory_order_seq_cst);
    if (!hungry_.exchange(true, std::memory_order_relaxed) || comm_.resting_long()) comm_.poke();
  }
  [[noreturn]] void fail(std::exception_ptr error) noexcept;

  dist_rank_stats stats() const;
  void reset_stats();
  std::vector<dist_rank_stats> gather_stats();
  // Collective: every rank's bytes (the same count everywhere) on rank 0, in rank order.
  std::vector<std::byte> gather(std::span<const std::byte> mine);

 private:
  struct outgoing {
    MPI_Request request;
    std::vector<std::byte> bytes;
  };
  struct result {
    int origin;
    std::uint64_t handle;
    std::vector<std::byte> bytes;
  };
  struct counters {
    std::atomic<std::uint64_t> steals_sent{0}, steals_sent_node{0}, steals_served{0},
        steals_refused{0};
    std::atomic<std::uint64_t> tasks_sent{0}, tasks_received{0}, outputs_sent{0};
    std::atomic<std::uint64_t> bytes_sent{0}, bytes_received{0};
    std::atomic<std::uint64_t> idle_ns{0};
    std::atomic<std::uint64_t> puts_base{0};
    std::atomic<std::uint64_t> wakeups_base{0};
  };

  static constexpr std::uint32_t no_record = ~std::uint32_t{0};
  // The handle of a shipped output-less task: no output goes back for it.
  static constexpr std::uint64_t no_result = 0;

  // Under pool_lock_.
  void pool_add(std::shared_ptr<pool_record> r);
  std::shared_ptr<pool_record> pool_remove(std::deque<std::shared_ptr<pool_record>>::iterator at);
  void pool_changed() noexcept;

  void claim_and_run(const std::shared_ptr<pool_record>& t);
  void run_imported(pool_record& t) noexcept;
  void idle() noexcept;

  // Communication thread only.
  void send(int to, int tag, std::vector<std::byte> bytes);
  void handle(int from, int tag, const std::vector<std::byte>& msg);
  // Answers a steal request now, or (may_defer) defers it while the pool fills.
  void serve_steal(int thief, bool may_defer);
  bool serve_deferred();
  std::size_t eligible_for(int thief) const;  // under pool_lock_
  void take_tasks(const std::vector<std::byte>& msg);
  void take_result(const std::vector<std::byte>& msg);
  bool passive() const noexcept;
  bool receive();
  bool send_results();
  bool complete_sends();
  std::uint64_t node_key() const;  // equal for ranks on one node
  bool try_steal();
  bool detect_termination();
  bool teardown();

  taskq_impl& q_;
  comm_thread& comm_;
  const dist_config config_;
  counters stats_;

  // Shared between workers and the communication thread.
  std::mutex pool_lock_;
  std::deque<std::shared_ptr<pool_record>> pool_;     // oldest first
  std::map<std::uint32_t, std::size_t> pool_depths_;  // records in pool_ by depth
  std::size_t pool_imported_ = 0;                     // records in pool_ from other ranks
  std::atomic<std::size_t> pool_size_{0};
  std::atomic<std::uint32_t> shallowest_{no_record};  // the least depth in pool_
  std::atomic<std::size_t> imported_{0};              // pool_imported_, read without the lock
  std::mutex results_lock_;
  std::vector<result> results_;
  std::atomic<bool> has_results_{false};
  std::atomic<bool> hungry_{false};
  // A thief's request waits for this rank's puts to fill the pool up to fill_target_ (only in a
  // queue with output-less functions, the puts that fill it).
  std::atomic<bool> wanted_{false};
  const std::size_t fill_target_;
  const bool fills_;
  // With fills, a rank asks for more once fewer imports than this wait (before they run out).
  const std::size_t prefetch_below_;
  std::atomic<bool> waited_{false};  // a thread idled since the communication thread last looked
  std::atomic<std::uint64_t> entered_{0};
  std::atomic<std::uint64_t> done_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> finished_{false};
  std::uint64_t testing_ = 0;  // the epoch all_empty() tests, 0 when none (top level only)

  // Communication thread only.
  MPI_Comm comm_world_ = MPI_COMM_NULL;  // this queue's duplicate of MPI_COMM_WORLD
  // Setup: this queue's communicator, and every rank's node (a key per rank).
  std::array<MPI_Request, 2> setup_{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  bool ready_ = false;
  std::uint64_t node_key_ = 0;
  std::vector<std::uint64_t> node_keys_;
  // Victims, HotSLAW's HVS one level up: ranks on this node first; after as many empty answers
  // in a row as they are, one request to a rank of another node.
  std::vector<int> near_, far_;
  std::size_t near_misses_ = 0;
  bool request_near_ = false;
  termination term_;
  std::deque<outgoing> sends_;
  std::unordered_map<std::uint64_t, std::shared_ptr<pool_record>> shipped_;
  std::uint64_t next_handle_ = 1;
  bool request_out_ = false;
  // Requests answered once the pool holds fill_target_ records, or at the deadline with what it
  // holds then.
  std::vector<int> deferred_;
  std::chrono::steady_clock::time_point deferred_until_{};
  std::chrono::steady_clock::time_point next_steal_{};
  std::chrono::microseconds backoff_{0};
  std::minstd_rand rng_;
  MPI_Request barrier_ = MPI_REQUEST_NULL;
  bool barrier_posted_ = false;

  // gather: posted by a worker through comm_thread::call, completed by progress().
  MPI_Request gather_ = MPI_REQUEST_NULL;
  std::vector<std::byte> gather_send_, gather_recv_;
  std::promise<void> gathered_;
};

}  // namespace locus::detail
