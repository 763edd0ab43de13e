// The schedule of a worker that finds no work (src/sched/idle_schedule.hpp): spin, yield, sleep,
// and only a short spin while another process shares the runtime's PUs.
#include <gtest/gtest.h>

#include "sched/idle_schedule.hpp"

namespace {

using locus::detail::idle_schedule;
using locus::detail::idle_step;

TEST(IdleSchedule, AQuietWorkerSpinsThenYieldsThenSleeps) {
  EXPECT_EQ(idle_schedule::after(1, false), idle_step::spin);
  EXPECT_EQ(idle_schedule::after(191, false), idle_step::spin);
  EXPECT_EQ(idle_schedule::after(192, false), idle_step::yield);
  EXPECT_EQ(idle_schedule::after(223, false), idle_step::yield);
  EXPECT_EQ(idle_schedule::after(224, false), idle_step::sleep);
  EXPECT_EQ(idle_schedule::after(1000, false), idle_step::sleep);
}

TEST(IdleSchedule, OnASharedMachineAWorkerYieldsAfterAFewRounds) {
  EXPECT_EQ(idle_schedule::after(1, true), idle_step::spin);
  EXPECT_EQ(idle_schedule::after(23, true), idle_step::spin);
  // Where a quiet worker still spins, it gives its CPU to the OS.
  EXPECT_EQ(idle_schedule::after(24, true), idle_step::yield);
  EXPECT_EQ(idle_schedule::after(191, true), idle_step::yield);
  // It does not sleep any sooner: a posted task still finds it awake as often.
  EXPECT_EQ(idle_schedule::after(223, true), idle_step::yield);
  EXPECT_EQ(idle_schedule::after(224, true), idle_step::sleep);
}

}  // namespace
