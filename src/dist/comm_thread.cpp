#include "dist/comm_thread.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <stdexcept>

namespace locus::detail {
namespace {

// Whether an MPI launcher started this process. Without one, MPI_Init would start a singleton
// job (slow, and it fails where the launcher's daemons cannot run); a program started on its own
// runs as the only rank instead, without MPI.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE",
                        "MPI_LOCALNRANKS", "SLURM_PROCID"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

}  // namespace

comm_thread* comm_thread::instance() {
  static const std::unique_ptr<comm_thread> the = []() -> std::unique_ptr<comm_thread> {
    if (!launched_by_mpi()) return nullptr;
    return std::unique_ptr<comm_thread>(new comm_thread());
  }();
  return the.get();
}

comm_thread::comm_thread() {
  thread_ = std::thread([this] { run(); });
  std::unique_lock hold(lock_);
  ready_.wait(hold, [this] { return started_; });
  if (!init_error_.empty()) {
    hold.unlock();
    thread_.join();
    throw std::runtime_error(init_error_);
  }
}

comm_thread::~comm_thread() {
  stop_.store(true, std::memory_order_release);
  poke();
  stop_poked_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

void comm_thread::call(std::function<void()> fn) {
  if (std::this_thread::get_id() == id_) {
    fn();
    return;
  }
  std::promise<void> done;
  auto ran = done.get_future();
  {
    const std::lock_guard hold(lock_);
    calls_.emplace_back([&] {
      fn();
      done.set_value();
    });
    has_calls_.store(true, std::memory_order_release);
  }
  poke();
  ran.wait();
}

void comm_thread::poke() noexcept {
  // Null only where initialisation failed, and then the thread has already ended.
  if (bells_) bells_->ring_own();
}

void comm_thread::add(comm_client* c) {
  clients_.push_back(c);
}

void comm_thread::remove(comm_client* c) {
  clients_.erase(std::remove(clients_.begin(), clients_.end(), c), clients_.end());
}

void comm_thread::abort(const std::string& message) {
  const std::string line = "locus: rank " + std::to_string(rank_) + ": " + message + "\n";
  if (std::this_thread::get_id() == id_) {
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }
  {
    const std::lock_guard hold(lock_);
    if (!aborting_.load(std::memory_order_relaxed)) abort_message_ = line;  // the first one wins
    aborting_.store(true, std::memory_order_release);
  }
  poke();
  // The communication thread ends the job within one of its rounds; this thread has nothing
  // left to do meanwhile.
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

void comm_thread::run() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  {
    const std::lock_guard hold(lock_);
    id_ = std::this_thread::get_id();
    if (provided < MPI_THREAD_FUNNELED) {
      init_error_ =
          "locus::dist_taskq: the MPI library does not provide MPI_THREAD_FUNNELED, which the "
          "communication thread needs";
    } else {
      MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
      MPI_Comm_size(MPI_COMM_WORLD, &size_);
      bells_ = std::make_unique<node_doorbells>();
    }
    started_ = true;
  }
  ready_.notify_all();
  if (!init_error_.empty()) {
    MPI_Finalize();
    return;
  }

  // While something here waits for what no bell announces (a reply from another node, a
  // deadline, a send to complete), it sleeps 50 us between rounds. Otherwise, where every rank of
  // the job can ring it, it sleeps until rung (at most 20 ms): every message and every poke
  // rings, and a worker is not preempted by a thousand polls a second. Where a rank of another
  // node may send unannounced, it sleeps from 50 us doubling to 1 ms, restarting at 50 us after
  // every round that did something: a busy victim answers a steal request within a millisecond,
  // and round trips stay short while requests flow.
  constexpr std::chrono::microseconds shortest_rest{50};
  constexpr std::chrono::microseconds longest_polling_rest{1000};
  constexpr std::chrono::microseconds longest_rest{20'000};
  const bool every_rank_rings = bells_->covers_every_rank();
  std::chrono::microseconds rest_span{0};
  while (!stop_.load(std::memory_order_acquire)) {
    const std::uint32_t bell = bells_->own_value();
    if (aborting_.load(std::memory_order_acquire)) {
      std::string line;
      {
        const std::lock_guard hold(lock_);
        line = abort_message_;
      }
      std::fputs(line.c_str(), stderr);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
      std::_Exit(1);
    }
    bool busy = false;
    if (has_calls_.load(std::memory_order_acquire)) {
      std::vector<std::function<void()>> calls;
      {
        const std::lock_guard hold(lock_);
        calls.swap(calls_);
        has_calls_.store(false, std::memory_order_relaxed);
      }
      for (auto& c : calls) c();
      busy = true;
    }
    // A client may remove itself while progressing: iterate over a copy.
    const std::vector<comm_client*> clients = clients_;
    for (comm_client* c : clients) busy = c->progress() || busy;
    if (busy) {
      rest_span = std::chrono::microseconds(0);
      continue;
    }
    if (every_rank_rings) resting_long_.store(true, std::memory_order_seq_cst);
    bool awaited = false;
    for (comm_client* c : clients) awaited = c->awaited() || awaited;
    if (awaited) resting_long_.store(false, std::memory_order_relaxed);
    if (awaited || (!every_rank_rings && rest_span.count() == 0)) {
      rest_span = shortest_rest;
    } else {
      rest_span = every_rank_rings ? longest_rest : std::min(rest_span * 2, longest_polling_rest);
    }
    bells_->sleep(bell, rest_span);
    resting_long_.store(false, std::memory_order_relaxed);
    wakeups_.store(wakeups_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  // The destructor's poke rings this process's bell, which lives in the memory unmapped here.
  while (!stop_poked_.load(std::memory_order_acquire)) std::this_thread::yield();
  bells_.reset();
  MPI_Finalize();
}

}  // namespace locus::detail
