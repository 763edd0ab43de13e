// Task assemblies (seed 003: Pericàs, "Scalable and Locality-aware Resource Management with Task
// Assembly Objects", §3): a unit of work run by several workers at once. An assembly has a width
// and an execute(index) that each of `width` workers calls once, index 0 .. width - 1; the
// workers share the smallest part of the machine around the one that schedules it (or around
// the worker it is placed on) that holds that many, so its tasks share a cache. What happens
// inside is the assembly's own affair: its private scheduler (locus/assembly_schedulers.hpp
// has two of the paper's), or any locus code, task groups included.
//
//   struct sum_rows final : locus::assembly {
//     sum_rows() : assembly(4) {}
//     void execute(int index) override { ... rows index, index + 4, ... }
//   };
//   locus::task_group tg;
//   locus::run_assembly(tg, std::make_unique<sum_rows>());
//   tg.wait();  // the assembly has ended; its exceptions are rethrown here
//
// Every scheduler runs assemblies; `tao` (LOCUS_SCHED=tao) is the paper's global scheduler
// around them.
#pragma once

#include <cstdint>
#include <memory>

#include "locus/task_group.hpp"

namespace locus {

// How an assembly's workers enter execute: each as soon as it reaches the assembly
// (asynchronous), or all together once the last of them has reached it (synchronous: an entry
// barrier, for private schedulers that assume all their workers are there, such as a table run
// in lockstep).
enum class assembly_entry : std::uint8_t { asynchronous, synchronous };

class assembly {
 public:
  // Throws std::invalid_argument unless width >= 1.
  explicit assembly(int width, assembly_entry entry = assembly_entry::asynchronous);
  virtual ~assembly() = default;
  assembly(const assembly&) = delete;
  assembly& operator=(const assembly&) = delete;

  int width() const noexcept { return width_; }
  assembly_entry entry() const noexcept { return entry_; }

  // Called once by each of the assembly's workers, each with its own index in [0, width).
  virtual void execute(int index) = 0;
  // Called once, after the last execute has returned (or thrown), on the worker it ran on.
  virtual void cleanup() {}
  // Whether a worker in execute may wait for the others to get there (an entry barrier, or
  // barriers of the assembly's own): such an assembly reaches all its workers' assembly queues
  // in one order with every other, which is what keeps racing ones from deadlocking; one whose
  // workers never wait for each other may start where it is taken at once.
  virtual bool workers_wait_for_each_other() const noexcept {
    return entry_ == assembly_entry::synchronous;
  }

  // Initial placement (seed 003 §3.2): the assembly's workers are those around `worker`
  // instead of around the worker that takes it. Set before run_assembly; -1: none.
  void place_on(int worker) noexcept { placed_on_ = worker; }
  int placed_on() const noexcept { return placed_on_; }

 private:
  int width_;
  assembly_entry entry_;
  int placed_on_ = -1;
};

// Runs `a` as a child of `tg`, queued (parent-first) like a simple task: tg.wait() returns once
// its last execute has returned and its cleanup has run, and rethrows the first exception one
// of its execute calls threw (the others are dropped, counted in the runtime's statistics). An
// assembly wider than the runtime, or placed on a worker it does not have, fails the same way
// with std::invalid_argument.
void run_assembly(task_group& tg, std::unique_ptr<assembly> a);

}  // namespace locus
