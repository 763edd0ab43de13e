// One single-entry mailbox per worker, for policies that hand a ready item to one chosen worker
// through their own queues (NUMA-WS's pushes, ws's hand-back at a join): a put succeeds only into
// an empty box, and whoever takes the item (its worker, or a thief or the sender taking it back)
// takes it with one exchange or compare-and-swap. Each box has its own cache line.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "locus/detail/spawn.hpp"

namespace locus::detail {

class mailboxes {
 public:
  explicit mailboxes(int workers = 0)
      : boxes_(std::make_unique<box[]>(static_cast<std::size_t>(workers))) {}

  // Puts `item` into `worker`'s box if it is empty (seq_cst, for has_work on a worker about to
  // sleep); false if it held an item.
  bool put(int worker, work_item* item) noexcept {
    work_item* empty = nullptr;
    return at(worker).compare_exchange_strong(empty, item, std::memory_order_seq_cst);
  }
  // The item in `worker`'s box, taken out; null if it was empty.
  work_item* take(int worker) noexcept {
    std::atomic<work_item*>& b = at(worker);
    if (b.load(std::memory_order_relaxed) == nullptr) return nullptr;
    return b.exchange(nullptr, std::memory_order_acq_rel);
  }
  // Takes `item` out of `worker`'s box if it is still there.
  bool take_back(int worker, work_item* item) noexcept {
    return at(worker).compare_exchange_strong(item, nullptr, std::memory_order_acq_rel);
  }
  // Whether `worker`'s box holds `item` (relaxed: a hint).
  bool holds(int worker, const work_item* item) const noexcept {
    return at(worker).load(std::memory_order_relaxed) == item;
  }
  // Whether `worker`'s box holds anything, read with seq_cst as put writes it.
  bool full(int worker) const noexcept {
    return at(worker).load(std::memory_order_seq_cst) != nullptr;
  }

 private:
  struct alignas(64) box {
    std::atomic<work_item*> item{nullptr};
  };
  std::atomic<work_item*>& at(int worker) const noexcept {
    return boxes_[static_cast<std::size_t>(worker)].item;
  }
  std::unique_ptr<box[]> boxes_;
};

}  // namespace locus::detail
