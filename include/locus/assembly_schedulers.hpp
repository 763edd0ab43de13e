// The two private schedulers of seed 003 (§6, Fig. 9), as assemblies to fill with tasks:
//
// - table_assembly: the tasks of a table of steps x workers, each worker running its column one
//   step at a time, with a barrier of all the assembly's workers between steps (a static
//   schedule and mapping, in lockstep);
// - dependence_assembly: the tasks of a DAG, run by whichever of the assembly's workers takes
//   them from one ready queue shared by all of them (a dynamic schedule).
//
// Tasks are filled in before the assembly is run and run exactly once. A task that throws does
// not stop the others (a table's barriers are still kept; a DAG's tasks that depend on it do not
// run); the first exception reaches the task group's wait.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <vector>

#include "locus/assembly.hpp"

namespace locus {

class table_assembly : public assembly {
 public:
  // Throws std::invalid_argument unless width >= 1 and steps >= 0.
  table_assembly(int width, int steps, assembly_entry entry = assembly_entry::asynchronous);

  // The task worker `index` of the assembly runs at `step` (an empty cell does nothing). Throws
  // std::out_of_range outside the table.
  void set(int step, int index, std::function<void()> task);
  int steps() const noexcept { return steps_; }

  void execute(int index) final;
  // Its workers meet at the barrier between steps.
  bool workers_wait_for_each_other() const noexcept override {
    return steps_ > 1 || assembly::workers_wait_for_each_other();
  }

 private:
  void arrive_and_wait() noexcept;

  int steps_;
  std::vector<std::function<void()>> cells_;  // step-major
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
};

class dependence_assembly : public assembly {
 public:
  explicit dependence_assembly(int width, assembly_entry entry = assembly_entry::asynchronous);

  // Adds a task; returns its number (0, 1, ...).
  int add(std::function<void()> task);
  // `after` runs only once `before` has ended. Throws std::out_of_range for an unknown task and
  // std::invalid_argument for an edge that would close a cycle.
  void depend(int before, int after);
  std::size_t size() const noexcept { return tasks_.size(); }

  void execute(int index) final;

 private:
  struct task {
    std::function<void()> fn;
    std::vector<int> successors;
    int predecessors = 0;
    bool failed = false;  // it or one of its predecessors threw
  };
  // Ends task `t`: its successors whose last predecessor it was become ready.
  void finish(int t, bool failed);

  std::vector<task> tasks_;
  std::mutex lock_;
  std::vector<int> ready_;  // FIFO through `next_`
  std::size_t next_ = 0;
  std::vector<int> waiting_;  // predecessors not yet ended, per task
  std::size_t ended_ = 0;
  std::atomic<bool> all_ended_{false};
  bool started_ = false;
};

}  // namespace locus
