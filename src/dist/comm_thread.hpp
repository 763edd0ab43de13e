// The process's communication thread: the one thread that calls MPI after initialisation
// (MPI_THREAD_FUNNELED: it also initialises and finalises MPI), driving every distributed queue
// of the process. Workers never block in MPI; they hand work to this thread through the queues'
// own lock-protected boxes, and it polls with non-blocking calls. When rounds find nothing to do
// it sleeps, longer and longer up to a bound, so that it leaves the cores to the workers (ranks x
// workers is usually the core count), but only while no thread waits for a message; a worker
// that needs it (hungry, an output to send) pokes it awake.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace locus::detail {

// Something the communication thread drives: one distributed queue.
class comm_client {
 public:
  virtual ~comm_client() = default;
  // On the communication thread: makes progress (receives, sends, steals, termination); returns
  // whether anything happened, so that the thread knows when it may sleep.
  virtual bool progress() = 0;
  // On the communication thread, after a round with nothing to do: whether a thread of this
  // process has waited for the network since the last call (then the thread keeps its sleeps
  // short, since nothing wakes it when a message arrives).
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

  // Runs fn on the communication thread and returns once it has run (setup and teardown).
  void call(std::function<void()> fn);
  // From any thread: ends the communication thread's current sleep, or its next one.
  void poke() noexcept;
  // On the communication thread only.
  void add(comm_client* c);
  void remove(comm_client* c);

  // Ends the whole job: prints "locus: rank R: message" and calls MPI_Abort with status 1. From
  // any thread; a worker's call returns never (the communication thread aborts for it).
  [[noreturn]] void abort(const std::string& message);

 private:
  comm_thread();
  void run();
  void rest(std::chrono::microseconds span);

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

  std::mutex sleep_lock_;
  std::condition_variable woken_;
  bool poked_ = false;  // under sleep_lock_

  std::vector<comm_client*> clients_;  // communication thread only
};

}  // namespace locus::detail
