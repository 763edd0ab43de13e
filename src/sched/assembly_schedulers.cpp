#include "locus/assembly_schedulers.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "sched/cpu_relax.hpp"
#include "sched/dag_reach.hpp"

namespace locus {

using detail::spin_until;

// ---- table

table_assembly::table_assembly(int width, int steps, assembly_entry entry)
    : assembly(width, entry), steps_(steps) {
  if (steps < 0) {
    throw std::invalid_argument("locus::table_assembly: a table needs 0 or more steps, not " +
                                std::to_string(steps));
  }
  cells_.resize(static_cast<std::size_t>(steps) * static_cast<std::size_t>(width));
}

void table_assembly::set(int step, int index, std::function<void()> task) {
  if (step < 0 || step >= steps_ || index < 0 || index >= width()) {
    throw std::out_of_range("locus::table_assembly::set: cell (" + std::to_string(step) + ", " +
                            std::to_string(index) + ") outside a table of " +
                            std::to_string(steps_) + " steps x " + std::to_string(width()) +
                            " workers");
  }
  cells_[static_cast<std::size_t>(step) * static_cast<std::size_t>(width()) +
         static_cast<std::size_t>(index)] = std::move(task);
}

void table_assembly::arrive_and_wait() noexcept {
  const int generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == width()) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    return;
  }
  spin_until([&] { return generation_.load(std::memory_order_acquire) != generation; });
}

void table_assembly::execute(int index) {
  std::exception_ptr mine;
  for (int step = 0; step < steps_; ++step) {
    const std::function<void()>& cell =
        cells_[static_cast<std::size_t>(step) * static_cast<std::size_t>(width()) +
               static_cast<std::size_t>(index)];
    if (cell) {
      try {
        cell();
      } catch (...) {
        if (!mine) mine = std::current_exception();
      }
    }
    // The barrier is kept whatever happened: the other workers wait at it.
    if (step + 1 < steps_) arrive_and_wait();
  }
  if (mine) std::rethrow_exception(mine);
}

// ---- dependence

dependence_assembly::dependence_assembly(int width, assembly_entry entry)
    : assembly(width, entry) {}

int dependence_assembly::add(std::function<void()> fn) {
  tasks_.push_back(task{std::move(fn), {}, 0, false});
  return static_cast<int>(tasks_.size()) - 1;
}

void dependence_assembly::depend(int before, int after) {
  const int n = static_cast<int>(tasks_.size());
  if (before < 0 || before >= n || after < 0 || after >= n) {
    throw std::out_of_range("locus::dependence_assembly::depend: no task " +
                            std::to_string(before < 0 || before >= n ? before : after) + " of " +
                            std::to_string(n));
  }
  const auto successors = [this](std::size_t t) -> const std::vector<int>& {
    return tasks_[t].successors;
  };
  if (before == after || detail::reaches(tasks_.size(), static_cast<std::size_t>(after),
                                         static_cast<std::size_t>(before), successors)) {
    throw std::invalid_argument("locus::dependence_assembly::depend: " + std::to_string(before) +
                                " -> " + std::to_string(after) + " closes a cycle");
  }
  tasks_[static_cast<std::size_t>(before)].successors.push_back(after);
  ++tasks_[static_cast<std::size_t>(after)].predecessors;
}

void dependence_assembly::finish(int t, bool failed) {
  const std::lock_guard hold(lock_);
  for (const int s : tasks_[static_cast<std::size_t>(t)].successors) {
    if (failed) tasks_[static_cast<std::size_t>(s)].failed = true;
    if (--waiting_[static_cast<std::size_t>(s)] == 0) ready_.push_back(s);
  }
  if (++ended_ == tasks_.size()) all_ended_.store(true, std::memory_order_release);
}

void dependence_assembly::execute(int /*index*/) {
  {
    const std::lock_guard hold(lock_);
    if (!started_) {
      started_ = true;
      waiting_.resize(tasks_.size());
      for (std::size_t t = 0; t < tasks_.size(); ++t) {
        waiting_[t] = tasks_[t].predecessors;
        if (waiting_[t] == 0) ready_.push_back(static_cast<int>(t));
      }
      if (tasks_.empty()) all_ended_.store(true, std::memory_order_release);
    }
  }
  std::exception_ptr mine;
  for (;;) {
    int t = -1;
    bool skip = false;
    {
      const std::lock_guard hold(lock_);
      if (next_ < ready_.size()) {
        t = ready_[next_++];
        skip = tasks_[static_cast<std::size_t>(t)].failed;
      }
    }
    if (t < 0) {
      if (all_ended_.load(std::memory_order_acquire)) break;
      // Tasks still run on other workers; theirs may make more ready.
      spin_until([&] {
        const std::lock_guard hold(lock_);
        return next_ < ready_.size() || all_ended_.load(std::memory_order_acquire);
      });
      continue;
    }
    bool failed = skip;
    if (!skip) {
      try {
        tasks_[static_cast<std::size_t>(t)].fn();
      } catch (...) {
        if (!mine) mine = std::current_exception();
        failed = true;
      }
    }
    finish(t, failed);
  }
  if (mine) std::rethrow_exception(mine);
}

}  // namespace locus
