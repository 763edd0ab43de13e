// Unhooked children (detail::task_frame::children_unhooked): the core spawns the children of a
// task whose policy says its groups need no hooks without asking the policy; each child starts
// with a copy of its parent's record. A group whose hooks began keeps them. Checked with adws,
// whose tasks on one worker's unit have unhooked children, by reading the record each task runs
// with.
#include <gtest/gtest.h>

#include <cstdlib>

#include "locus/locus.hpp"
#include "sched/multilevel.hpp"
#include "sched/worker.hpp"

namespace {

using locus::detail::task_frame;

struct task_view {
  double lo = 0, hi = 0;
  int depth = 0, level = 0;
  bool set = false;
  bool children_unhooked = false;
  void* group = nullptr;
};

task_view running_state() {
  task_frame& f = locus::detail::frame_of(*locus::detail::current_worker()->running);
  const auto& t = locus::detail::multilevel::state_of(f);
  return {t.range.lo, t.range.hi, t.depth, t.level, t.set, f.children_unhooked, t.group};
}

struct seen {
  task_view state{};
  int worker = -1;
};

TEST(UnhookedChildren, ChildrenOfAnUnhookedTaskInheritItsStateAndAHookedGroupStaysHooked) {
  ::setenv("LOCUS_ADWS_STEAL", "0", 1);
  locus::runtime rt{locus::options{
      .sched = "adws", .workers = 2, .topology = "pack:1 l3:1(size=8MB) l2:2(size=1MB) pu:1"}};
  seen root_after_first, first, second, grandchild, grandchild_sibling;
  rt.exec([&] {
    locus::task_group tg{locus::work_hint{2.0}};
    // [1, 2): worker 1's; the root goes on with [0, 1), which lies on worker 0 alone.
    tg.run([&] { first = {running_state(), locus::this_worker()}; }, locus::work_hint{1.0});
    root_after_first = {running_state(), locus::this_worker()};
    // The root's children are unhooked now, but its group began with hooks: this child is still
    // planned.
    tg.run(
        [&] {
          second = {running_state(), locus::this_worker()};
          locus::task_group nested;
          nested.run([&] { grandchild = {running_state(), locus::this_worker()}; });
          nested.run([&] { grandchild_sibling = {running_state(), locus::this_worker()}; });
          nested.wait();
        },
        locus::work_hint{1.0});
    tg.wait();
  });

  EXPECT_EQ(first.worker, 1);
  EXPECT_DOUBLE_EQ(first.state.lo, 1.0);
  EXPECT_DOUBLE_EQ(first.state.hi, 2.0);
  EXPECT_TRUE(first.state.children_unhooked);
  EXPECT_NE(first.state.group, nullptr);

  EXPECT_TRUE(root_after_first.state.children_unhooked);
  EXPECT_DOUBLE_EQ(root_after_first.state.hi, 1.0);

  EXPECT_EQ(second.worker, 0);
  EXPECT_DOUBLE_EQ(second.state.lo, 0.0);
  EXPECT_DOUBLE_EQ(second.state.hi, 1.0);
  EXPECT_TRUE(second.state.children_unhooked);
  // Spawned through on_spawn: a member of the root's plan, whose end makes that group dominant.
  EXPECT_EQ(second.state.group, first.state.group);

  for (const seen* s : {&grandchild, &grandchild_sibling}) {
    EXPECT_EQ(s->worker, 0);
    EXPECT_DOUBLE_EQ(s->state.lo, second.state.lo);
    EXPECT_DOUBLE_EQ(s->state.hi, second.state.hi);
    EXPECT_EQ(s->state.depth, second.state.depth);
    EXPECT_EQ(s->state.level, second.state.level);
    EXPECT_TRUE(s->state.set);
    EXPECT_TRUE(s->state.children_unhooked);
    EXPECT_EQ(s->state.group, second.state.group);  // a copy of the parent's record
  }
}

// A task that spans workers has hooked children: its groups get plans, and their children are
// planned (different ranges, a group record) rather than inheriting the creator's.
TEST(UnhookedChildren, TaskSpanningWorkersIsHookedAndItsChildrenArePlanned) {
  ::setenv("LOCUS_ADWS_STEAL", "0", 1);
  locus::runtime rt{locus::options{
      .sched = "adws", .workers = 4, .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) pu:1"}};
  seen creator, child;
  rt.exec([&] {
    locus::task_group outer{locus::work_hint{2.0}};
    outer.run([] {}, locus::work_hint{1.0});            // [2, 4) goes to worker 2
    creator = {running_state(), locus::this_worker()};  // [0, 2): workers 0 and 1
    locus::task_group inner{locus::work_hint{2.0}};
    inner.run([] {}, locus::work_hint{1.0});  // [1, 2) goes to worker 1
    inner.run([&] { child = {running_state(), locus::this_worker()}; }, locus::work_hint{1.0});
    inner.wait();
    outer.wait();
  });
  EXPECT_FALSE(creator.state.children_unhooked);
  EXPECT_DOUBLE_EQ(creator.state.hi, 2.0);
  EXPECT_EQ(child.worker, 0);
  EXPECT_DOUBLE_EQ(child.state.lo, 0.0);
  EXPECT_DOUBLE_EQ(child.state.hi, 1.0);
  EXPECT_GT(child.state.depth, creator.state.depth);
  EXPECT_NE(child.state.group, nullptr);
}

}  // namespace

namespace {

// A parent-first child inherits its parent's range but belongs to the group that queued it, not
// to its parent's group: its end must not count as the parent's (ADWS: a cross-worker child
// finishing makes its group dominant). The parent waits for the first group while the second
// group's child is at the bottom of its deque, so it parks and both children run as queued tasks
// (with the state they were queued with) rather than inline on its stack.
TEST(UnhookedChildren, ParentFirstChildBelongsToTheGroupThatQueuedIt) {
  ::setenv("LOCUS_ADWS_STEAL", "0", 1);
  locus::runtime rt{locus::options{
      .sched = "adws", .workers = 4, .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) pu:1"}};
  seen parent, first, second;
  rt.exec([&] {
    locus::task_group outer{locus::work_hint{2.0}};
    outer.run([] {}, locus::work_hint{1.0});  // [2, 4) goes to worker 2
    outer.run(
        [&] {
          parent = {running_state(), locus::this_worker()};  // [0, 2), a member of outer
          locus::task_group a;
          locus::task_group b;
          a.run([&] { first = {running_state(), locus::this_worker()}; }, locus::parent_first);
          b.run([&] { second = {running_state(), locus::this_worker()}; }, locus::parent_first);
          a.wait();
          b.wait();
        },
        locus::work_hint{1.0});
    outer.wait();
  });
  EXPECT_EQ(parent.worker, 0);
  EXPECT_NE(parent.state.group, nullptr);
  for (const seen* s : {&first, &second}) {
    EXPECT_EQ(s->worker, 0);
    EXPECT_DOUBLE_EQ(s->state.lo, parent.state.lo);
    EXPECT_DOUBLE_EQ(s->state.hi, parent.state.hi);
    EXPECT_NE(s->state.group, nullptr);  // its own group's plan ([0, 2) spans two workers)
    EXPECT_NE(s->state.group, parent.state.group);
  }
  EXPECT_NE(first.state.group, second.state.group);
}

}  // namespace
