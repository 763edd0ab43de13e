// A worker's stack cache: clean stacks go to a few spare slots, last in first out, and a slot
// keeps the stack it gave out, so that giving the same one back only moves the count. These
// tests give back other stacks than the one a slot remembers, which must not be lost or handed
// out twice.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "ult/stack.hpp"

namespace {

using locus::ult::stack;
using locus::ult::stack_arena;
using locus::ult::stack_pool;

class StackPool : public ::testing::Test {
 protected:
  StackPool() : arena_(64 * 1024), pool_(arena_) {}
  std::vector<stack*> acquire(std::size_t n) {
    std::vector<stack*> got;
    for (std::size_t i = 0; i < n; ++i) got.push_back(pool_.acquire());
    return got;
  }
  stack_arena arena_;
  stack_pool pool_;
};

TEST_F(StackPool, ASpareGivenBackByItsTakerIsTheNextOneTaken) {
  const std::vector<stack*> s = acquire(2);
  pool_.release_clean(s[0]);
  pool_.release_clean(s[1]);
  ASSERT_TRUE(pool_.has_spare());
  stack* taken = pool_.take_spare();
  EXPECT_EQ(taken, s[1]);
  pool_.release_clean(taken);
  EXPECT_EQ(pool_.take_spare(), s[1]);
  EXPECT_EQ(pool_.take_spare(), s[0]);
  EXPECT_FALSE(pool_.has_spare());
}

TEST_F(StackPool, ASlotThatGaveOutOneStackTakesAnotherBackInItsPlace) {
  const std::vector<stack*> s = acquire(2);
  pool_.release_clean(s[0]);
  EXPECT_EQ(pool_.take_spare(), s[0]);
  // s[0] is in use elsewhere now (a stolen continuation's child keeps it); s[1] comes back.
  pool_.release_clean(s[1]);
  ASSERT_TRUE(pool_.has_spare());
  EXPECT_EQ(pool_.take_spare(), s[1]);
  EXPECT_FALSE(pool_.has_spare());
}

TEST_F(StackPool, StacksBeyondTheSpareSlotsGoToTheFreeListAndNoneIsHandedOutTwice) {
  const std::vector<stack*> s = acquire(12);
  const std::size_t left_in_list = pool_.cached();
  for (stack* one : s) pool_.release_clean(one);
  EXPECT_EQ(pool_.cached(), left_in_list + 12);
  // Take every spare, give them back, and draw everything out again: each of the twelve exactly
  // once, besides what the free list held before.
  std::vector<stack*> spares;
  while (pool_.has_spare()) spares.push_back(pool_.take_spare());
  EXPECT_EQ(spares.size(), 8u);
  // In the order taken, the reverse of the slots': no slot finds the stack it remembers.
  for (stack* one : spares) pool_.release_clean(one);
  std::multiset<stack*> out;
  while (pool_.has_spare()) out.insert(pool_.take_spare());
  const std::size_t listed = pool_.cached();
  for (std::size_t i = 0; i < listed; ++i) out.insert(pool_.acquire());
  for (stack* one : s) EXPECT_EQ(out.count(one), 1u) << "stack " << one;
  EXPECT_EQ(out.size(), listed + 8);
}

std::set<std::uintptr_t> top_offsets_in_page(stack_arena& arena, std::size_t count) {
  std::set<std::uintptr_t> offsets;
  for (stack* s = arena.allocate_chain(count); s != nullptr; s = s->next_free) {
    const auto top = reinterpret_cast<std::uintptr_t>(s->top());
    EXPECT_EQ(top % 16, 0u);
    EXPECT_LE(s->size, arena.stack_bytes());
    EXPECT_GE(s->size + 4096, arena.stack_bytes());
    offsets.insert(top % 4096);
  }
  return offsets;
}

TEST(StackArena, TopsOfLargeStacksAreStaggeredOverAPage) {
  stack_arena arena(256 * 1024);
  EXPECT_EQ(top_offsets_in_page(arena, 16).size(), 8u);
}

TEST(StackArena, SmallStacksKeepAllTheirRoom) {
  stack_arena arena(16 * 1024);
  const std::set<std::uintptr_t> offsets = top_offsets_in_page(arena, 16);
  EXPECT_EQ(offsets.size(), 1u);
  for (stack* s = arena.allocate_chain(4); s != nullptr; s = s->next_free) {
    EXPECT_EQ(s->size, arena.stack_bytes());
  }
}

}  // namespace
