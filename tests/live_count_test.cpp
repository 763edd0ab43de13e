// The per-thread slots of taskq's live count: unique among live threads, given back at exit,
// overflowing into the shared shard, and given back safely by threads that exit during static
// destruction.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <latch>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "taskq/live_count.hpp"

namespace {

using locus::detail::live_count;

TEST(LiveCount, SlotsOfLiveThreadsAreDistinctAndTheRestShareTheOverflowShard) {
  constexpr unsigned threads = live_count::shards + 6;
  std::vector<unsigned> slots(threads);
  std::latch all_hold(threads);
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      slots[i] = live_count::acquire_slot();
      all_hold.arrive_and_wait();  // every thread holds its slot at once
    });
  }
  for (auto& t : pool) t.join();
  std::set<unsigned> own;
  unsigned overflow = 0;
  for (const unsigned s : slots) {
    if (s >= live_count::shards) {
      ++overflow;
    } else {
      EXPECT_TRUE(own.insert(s).second) << "slot " << s << " held by two live threads";
    }
  }
  EXPECT_GE(overflow, threads - live_count::shards);
  EXPECT_EQ(own.size() + overflow, threads);

  // Given back at exit: a new thread gets one of them, not the overflow shard.
  unsigned later = live_count::shards;
  std::thread([&] { later = live_count::acquire_slot(); }).join();
  EXPECT_LT(later, live_count::shards);
  EXPECT_TRUE(own.contains(later));
}

// A thread joined by a static object's destructor exits after every static constructed after
// that object is gone; its slot must still go back without touching freed memory.
class joined_at_exit {
 public:
  joined_at_exit()
      : thread_([this] {
          wait_for(1);
          (void)live_count::acquire_slot();
          advance_to(2);
          wait_for(3);
        }) {}
  // After construction, so that whatever keeps the slots is made after this object (and so
  // destroyed before it, if it is destroyed at all).
  void take_a_slot() {
    advance_to(1);
    wait_for(2);
  }
  ~joined_at_exit() {
    advance_to(3);
    thread_.join();
  }

 private:
  void advance_to(int stage) {
    {
      const std::lock_guard hold(lock_);
      stage_ = stage;
    }
    changed_.notify_all();
  }
  void wait_for(int stage) {
    std::unique_lock hold(lock_);
    changed_.wait(hold, [&] { return stage_ >= stage; });
  }

  std::mutex lock_;
  std::condition_variable changed_;
  int stage_ = 0;
  std::thread thread_;
};

TEST(LiveCountDeathTest, AThreadExitingDuringStaticDestructionGivesItsSlotBack) {
  // A fresh process (not a fork of this one, where earlier tests made the statics already).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        static joined_at_exit joiner;
        joiner.take_a_slot();
        // A slot given back before exit, so that whatever keeps free slots holds one.
        std::thread([] { (void)live_count::acquire_slot(); }).join();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
