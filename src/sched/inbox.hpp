// A worker's inbox: work other workers handed to it, in two first-in first-out lanes (one taken
// before the worker's own queue, one after it). Any thread puts; only the owner takes. A gang's
// members go into several inboxes at once, under all of their locks taken in worker order
// (gang.cpp), so that any two gangs reach every worker they share in the same order.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>

#include "locus/detail/spawn.hpp"
#include "sched/context.hpp"
#include "sched/spin_lock.hpp"

namespace locus::detail {

class inbox {
 public:
  void put(work_item* item, lane where) {
    const std::lock_guard hold(lock_);
    put_locked(item, where);
  }
  // With lock() held.
  void put_locked(work_item* item, lane where) {
    auto i = static_cast<std::size_t>(where);
    lanes_[i].push_back(item);
    // seq_cst: a sleeper announces itself, then reads this count (see runtime_impl::sleep).
    count_[i].fetch_add(1, std::memory_order_seq_cst);
  }
  work_item* take(lane where) {
    auto i = static_cast<std::size_t>(where);
    if (count_[i].load(std::memory_order_acquire) == 0) return nullptr;
    const std::lock_guard hold(lock_);
    if (lanes_[i].empty()) return nullptr;
    work_item* item = lanes_[i].front();
    lanes_[i].pop_front();
    count_[i].fetch_sub(1, std::memory_order_relaxed);
    return item;
  }
  bool has(lane where) const noexcept {
    return count_[static_cast<std::size_t>(where)].load(std::memory_order_acquire) != 0;
  }
  bool empty() const noexcept {
    return count_[0].load(std::memory_order_seq_cst) == 0 &&
           count_[1].load(std::memory_order_seq_cst) == 0;
  }
  spin_lock& lock() noexcept { return lock_; }

 private:
  spin_lock lock_;
  std::deque<work_item*> lanes_[2];
  std::atomic<std::size_t> count_[2]{};
};

}  // namespace locus::detail
