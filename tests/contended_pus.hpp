// Stands in for another process on the workers' PUs: marks each given contention watch
// contended at once and every 0.5 ms after, from a thread of its own, until destroyed.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <thread>
#include <utility>
#include <vector>

#include "locus/locus.hpp"
#include "sched/clock.hpp"
#include "sched/cpu_contention.hpp"
#include "sched/worker.hpp"

namespace locus_test {

class contended_pus {
 public:
  explicit contended_pus(std::vector<locus::detail::cpu_contention_watch*> watches)
      : watches_(std::move(watches)) {
    note();
    neighbour_ = std::thread([this] {
      while (!done_.load()) {
        note();
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
    });
  }
  contended_pus(const contended_pus&) = delete;
  contended_pus& operator=(const contended_pus&) = delete;
  ~contended_pus() {
    done_ = true;
    neighbour_.join();
  }

 private:
  void note() {
    for (auto* w : watches_) w->note_contended(locus::detail::clock_ns());
  }
  std::vector<locus::detail::cpu_contention_watch*> watches_;
  std::atomic<bool> done_{false};
  std::thread neighbour_;
};

// The contention watches of a two-worker runtime's workers, each taken from a task it runs:
// `round(note_mine)` runs inside rt.exec, and its tasks call note_mine() (a round may leave a
// worker without a task, so there are up to 100). Empty when a worker never noted its watch.
template <class Round>
std::vector<locus::detail::cpu_contention_watch*> watches_of_both_workers(locus::runtime& rt,
                                                                          Round round) {
  std::array<std::atomic<locus::detail::cpu_contention_watch*>, 2> seen{};
  const auto note_mine = [&seen] {
    const auto w = static_cast<std::size_t>(locus::this_worker());
    if (w < seen.size()) seen[w] = &locus::detail::current_worker()->cpu_watch;
  };
  for (int i = 0; i < 100 && (seen[0] == nullptr || seen[1] == nullptr); ++i) {
    rt.exec([&] { round(note_mine); });
  }
  if (seen[0] == nullptr || seen[1] == nullptr) return {};
  return {seen[0].load(), seen[1].load()};
}

}  // namespace locus_test
