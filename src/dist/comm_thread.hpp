// The process's communication thread: the one thread that calls MPI after initialisation
// (MPI_THREAD_FUNNELED: it also initialises and finalises MPI), driving every distributed queue
// of the process. Workers never block in MPI; they hand work to this thread through the queues'
// own lock-protected boxes, and it polls with non-blocking calls. When rounds find nothing to do
// it sleeps, longer and longer up to a bound, so that it leaves the cores to the workers (ranks x
// workers is usually the core count), but only while nothing waits for a message; a worker that
// needs it (hungry, an output to send) pokes it awake, and a rank of the same node that sends it
// a message rings its bell (node_doorbells.hpp). The bound is short (a poll a millisecond) only
// where some rank cannot ring: another node's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dist/node_doorbells.hpp"

namespace locus::detail {

// Something the communication thread drives: one distributed queue.
class comm_client {
 public:
  virtual ~comm_client() = default;
  // On the communication thread: makes progress (receives, sends, steals, termination); returns
  // whether anything happened, so that the thread knows when it may sleep.
  virtual bool progress() = 0;
  // On the communication thread, after a round with nothing to do: whether something waits for
  // what no bell announces (a thread of this process idled since the last call, a deadline, a
  // send or collective to complete); the thread then keeps its sleeps short.
  virtual bool awaited() noexcept = 0;
};

class comm_thread {
 public:
  // The process's communication thread, started with MPI on first use; null when the process
  // was not started by an MPI launcher (it then runs as the only rank).
  static comm_thread* instance();

  comm_thread(const comm_thread&) = delete;
  comm_thread& operator=(const comm_thread&) = delete;
  ~comm_thread();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // How many times the thread has woken from a sleep so far.
  std::uint64_t wakeups() const noexcept { return wakeups_.load(std::memory_order_relaxed); }

  // Runs fn on the communication thread and returns once it has run (setup and teardown).
  void call(std::function<void()> fn);
  // From any thread: ends the communication thread's current sleep, or its next one.
  void poke() noexcept;
  // Whether the thread may be about to sleep until rung: set (sequentially consistent) before it
  // looks at its clients' awaited(), cleared when that says to sleep short and after the sleep. A
  // thread that has just made awaited() true and then sees this pokes, so that either the sleep
  // is short or the poke ends it.
  bool resting_long() const noexcept { return resting_long_.load(std::memory_order_seq_cst); }
  // On the communication thread, after sending rank a message: wakes rank's communication
  // thread if it shares this node.
  void ring(int rank) noexcept { bells_->ring(rank); }
  // On the communication thread only.
  void add(comm_client* c);
  void remove(comm_client* c);

  // Ends the whole job: prints "locus: rank R: message" and calls MPI_Abort with status 1. From
  // any thread; a worker's call returns never (the communication thread aborts for it).
  [[noreturn]] void abort(const std::string& message);

 private:
  comm_thread();
  void run();

  std::thread thread_;
  std::thread::id id_;
  int rank_ = 0;
  int size_ = 1;

  std::mutex lock_;
  std::condition_variable ready_;
  bool started_ = false;
  std::string init_error_;
  std::vector<std::function<void()>> calls_;
  std::atomic<bool> has_calls_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> aborting_{false};
  std::string abort_message_;

  // Made and freed by the communication thread; the destructor's poke is the last one, and the
  // thread frees the bells only after it (stop_poked_).
  std::unique_ptr<node_doorbells> bells_;
  std::atomic<bool> stop_poked_{false};
  std::atomic<std::uint64_t> wakeups_{0};
  std::atomic<bool> resting_long_{false};

  std::vector<comm_client*> clients_;  // communication thread only
};

}  // namespace locus::detail
