// PMU counters per worker thread: perf_event groups opened by each thread for itself, started
// and stopped together around a measured region, read as locus::pmu_value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "locus/stats.hpp"
#include "prof/perf_event.hpp"
#include "prof/pmu_events.hpp"

namespace locus::prof {

// The counters of one thread: a perf group per request group. Opened on the thread it counts
// (pid 0: no thread id to publish, and the open's cost stays out of any measured region);
// started, stopped and read from any thread.
class thread_counters {
 public:
  thread_counters() = default;
  // Opens `requests` for the calling thread. A refused counter is kept with the kernel's reason;
  // when the first counter of a group is refused the next accepted one leads the group.
  static thread_counters open_here(const std::vector<counter_request>& requests,
                                   open_fn opener = &open_for_this_thread);

  // RESET and enable every group; counts from now on.
  void start() noexcept;
  void stop() noexcept;
  // The current counts become zero (runtime::reset_stats), running or not.
  void rebaseline() noexcept;
  // One value per request, in request order.
  std::vector<pmu_value> read() const;

 private:
  struct member {
    std::size_t request;
    event_fd fd;
    std::uint64_t id = 0;
  };
  struct group {
    std::vector<member> members;  // members[0] leads
    group_sample base;            // where the counts and times stood at start / rebaseline
  };
  struct slot {
    std::string name, event, unavailable;
    int group = -1;  // index into groups_, -1 when refused
  };
  static void sample(const group& g, group_sample& out) noexcept;

  std::vector<slot> slots_;
  std::vector<group> groups_;
  bool started_ = false;
};

// The counters of every worker of a runtime (LOCUS_PMU=1); does nothing when disabled.
class pmu_session {
 public:
  pmu_session(bool enabled, int workers);
  bool enabled() const noexcept { return enabled_; }
  // Worker `index`, on its own thread before it runs tasks.
  void open_on_this_thread(int index);
  void start() noexcept;
  void stop() noexcept;
  void rebaseline() noexcept;
  std::vector<pmu_value> read(int index) const;

 private:
  const bool enabled_;
  std::vector<counter_request> requests_;
  std::vector<thread_counters> threads_;  // element i written once, by worker i
  mutable std::mutex mutex_;              // start / stop / rebaseline against reads
};

}  // namespace locus::prof
