// Stands in for another process on the workers' PUs: marks each given contention watch
// contended at once and every 0.5 ms after, from a thread of its own, until destroyed.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "sched/clock.hpp"
#include "sched/cpu_contention.hpp"

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

}  // namespace locus_test
