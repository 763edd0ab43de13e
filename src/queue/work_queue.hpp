// The contract of a worker's queue of ready work, which a scheduler policy may replace (the
// default is the Chase-Lev deque below): the owner pushes and pops at one end, any thread steals
// the oldest items from the other, one or several at a time. A steal that finds nothing says
// whether the queue was empty or a concurrent operation won the race for the item it saw (Lace's
// three-valued steal), so that a thief can tell a busy victim from an idle one.
//
// A queue that keeps part of its items private to the owner (a split queue: no synchronisation on
// the private part) decides itself when to make them stealable: a thief that finds the public
// part dry records that in the queue, and the owner's next push or pop moves work across (Lace's
// split request). The core calls only the operations below.
#pragma once

#include <cstddef>
#include <cstdint>

#include "queue/chase_lev_deque.hpp"

namespace locus::queue {

enum class steal_status : std::uint8_t {
  taken,      // at least one item moved to the thief
  empty,      // nothing to take
  lost_race,  // there was an item, and another thief or the owner took it first
};

template <class T>
class work_queue {
 public:
  work_queue() = default;
  work_queue(const work_queue&) = delete;
  work_queue& operator=(const work_queue&) = delete;
  virtual ~work_queue() = default;

  // Owner only: adds `item` at the owner's end.
  virtual void push(T item) = 0;
  // Owner only: removes and returns the newest item, or a null T when there is none.
  virtual T pop() = 0;
  // Any thread: moves up to `max` (>= 1) of the oldest items to out[0 .. n), oldest first, and
  // returns n; sets *why to taken, or, when n is 0, to empty or lost_race.
  virtual std::size_t steal(T* out, std::size_t max, steal_status* why) = 0;
  // Any thread: the number of items, approximate unless the owner asks with no thief at work.
  virtual std::size_t size() const noexcept = 0;
  // Any thread: how many items a thief could take now, approximate (less than size() for a queue
  // that keeps some private to its owner).
  virtual std::size_t stealable() const noexcept { return size(); }
  // Any thread: whether the oldest item was pushed marked (a continuation, for the core's
  // queues); a hint, false for a queue that does not keep marks.
  virtual bool oldest_marked() const noexcept { return false; }
  bool empty() const noexcept { return size() == 0; }
};

// The default queue: the Chase-Lev deque, where each stolen item is its own compare-and-swap (a
// chunk is taken item by item, oldest first, and may come out shorter than asked when the owner
// or other thieves take items meanwhile). `deque` is public so that the owner's spawn path can
// reach it without a virtual call.
template <class T>
class chase_lev_queue final : public work_queue<T> {
 public:
  explicit chase_lev_queue(std::size_t initial_capacity = 256) : deque(initial_capacity) {}

  void push(T item) override { deque.push(item); }
  T pop() override {
    const auto item = deque.pop();
    return item ? *item : T{};
  }
  std::size_t steal(T* out, std::size_t max, steal_status* why) override {
    std::size_t n = 0;
    bool lost = false;
    while (n < max) {
      const auto item = deque.steal(&lost);
      if (!item) break;
      out[n++] = *item;
    }
    *why = n > 0 ? steal_status::taken : lost ? steal_status::lost_race : steal_status::empty;
    return n;
  }
  std::size_t size() const noexcept override { return static_cast<std::size_t>(deque.size()); }
  bool oldest_marked() const noexcept override { return deque.oldest_marked(); }

  chase_lev_deque<T> deque;
};

}  // namespace locus::queue
