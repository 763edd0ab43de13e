#include "prof/pmu.hpp"

#include <algorithm>
#include <cmath>

namespace locus::prof {
namespace {

constexpr std::size_t max_group_events = 16;  // what read_group accepts

const char* const not_started =
    "not started: counting covers only the region between runtime::pmu_start() and "
    "pmu_stop() (locus-bench --pmu does that around each measured repetition)";

const std::uint64_t* count_of(const group_sample& s, std::uint64_t id) {
  for (const auto& [i, v] : s.values) {
    if (i == id) return &v;
  }
  return nullptr;
}

}  // namespace

thread_counters thread_counters::open_here(const std::vector<counter_request>& requests,
                                           open_fn opener) {
  thread_counters tc;
  int max_group = -1;
  for (const auto& r : requests) max_group = std::max(max_group, r.group);
  // Request group number -> index in groups_ (-1 until its leader opens).
  std::vector<int> group_index(static_cast<std::size_t>(max_group + 1), -1);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const counter_request& r = requests[i];
    slot s;
    s.name = r.name;
    int& gi = group_index[static_cast<std::size_t>(r.group)];
    std::string reasons;
    for (const event_spec& spec : r.candidates) {
      const bool as_member = gi >= 0;
      if (as_member &&
          tc.groups_[static_cast<std::size_t>(gi)].members.size() >= max_group_events) {
        reasons += (reasons.empty() ? "" : "; ") + spec.label + ": group full";
        continue;
      }
      const int leader =
          as_member ? tc.groups_[static_cast<std::size_t>(gi)].members[0].fd.get() : -1;
      const int fd = opener(spec, leader);
      if (fd < 0) {
        reasons += (reasons.empty() ? "" : "; ") + refusal_reason(spec, -fd, as_member);
        continue;
      }
      member m{i, event_fd(fd)};
      if (!event_id(fd, m.id)) {
        reasons += (reasons.empty() ? "" : "; ") + spec.label + ": the kernel gave no event id";
        continue;
      }
      if (!as_member) {
        gi = static_cast<int>(tc.groups_.size());
        tc.groups_.emplace_back();
        tc.groups_.back().base.values.reserve(max_group_events);
      }
      tc.groups_[static_cast<std::size_t>(gi)].members.push_back(std::move(m));
      s.group = gi;
      s.event = spec.label;
      break;
    }
    if (s.group < 0) {
      if (!r.no_event_reason.empty()) {
        reasons += (reasons.empty() ? "" : "; ") + r.no_event_reason;
      }
      s.unavailable = reasons.empty() ? "no event to count it" : reasons;
    }
    tc.slots_.push_back(std::move(s));
  }
  return tc;
}

void thread_counters::sample(const group& g, group_sample& out) noexcept {
  if (!read_group(g.members[0].fd.get(), out)) out = {};
}

void thread_counters::start() noexcept {
  for (group& g : groups_) {
    group_reset(g.members[0].fd.get());
    // RESET zeroes the counts but not the enabled and running times: those are measured from
    // here.
    sample(g, g.base);
    group_enable(g.members[0].fd.get());
  }
  started_ = true;
}

void thread_counters::stop() noexcept {
  for (group& g : groups_) group_disable(g.members[0].fd.get());
}

void thread_counters::rebaseline() noexcept {
  for (group& g : groups_) sample(g, g.base);
}

std::vector<pmu_value> thread_counters::read() const {
  std::vector<group_sample> now(groups_.size());
  std::vector<bool> read_ok(groups_.size());
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    now[g].values.reserve(max_group_events);
    read_ok[g] = read_group(groups_[g].members[0].fd.get(), now[g]);
  }
  std::vector<pmu_value> out;
  out.reserve(slots_.size());
  std::size_t index = 0;
  for (const slot& s : slots_) {
    pmu_value v;
    v.name = s.name;
    v.event = s.event;
    if (s.group < 0) {
      v.unavailable = s.unavailable;
    } else if (!started_) {
      v.unavailable = not_started;
    } else if (!read_ok[static_cast<std::size_t>(s.group)]) {
      v.unavailable = s.event + ": reading the counter group failed";
    } else {
      const group& g = groups_[static_cast<std::size_t>(s.group)];
      const group_sample& n = now[static_cast<std::size_t>(s.group)];
      std::uint64_t id = 0;
      for (const member& m : g.members) {
        if (m.request == index) id = m.id;
      }
      v.enabled_ns = n.enabled_ns - g.base.enabled_ns;
      v.running_ns = n.running_ns - g.base.running_ns;
      const std::uint64_t* now_count = count_of(n, id);
      const std::uint64_t* base_count = count_of(g.base, id);
      const std::uint64_t count =
          now_count != nullptr && base_count != nullptr ? *now_count - *base_count : 0;
      if (now_count == nullptr || base_count == nullptr) {
        v.unavailable = s.event + ": missing from the group's read (or from its start)";
      } else if (v.enabled_ns > 0 && v.running_ns == 0) {
        v.unavailable = s.event +
                        ": enabled but never on the PMU (its counters were taken, e.g. by the "
                        "NMI watchdog or another perf user)";
      } else if (v.running_ns < v.enabled_ns) {
        // Multiplexed: extrapolate to the whole enabled time, as perf stat does.
        v.value = static_cast<std::uint64_t>(
            std::llround(static_cast<long double>(count) * v.enabled_ns / v.running_ns));
      } else {
        v.value = count;
      }
    }
    out.push_back(std::move(v));
    ++index;
  }
  return out;
}

pmu_session::pmu_session(bool enabled, int workers) : enabled_(enabled) {
  if (!enabled_) return;
  requests_ = default_counters(this_cpu());
  threads_.resize(static_cast<std::size_t>(workers));
}

void pmu_session::open_on_this_thread(int index) {
  if (!enabled_) return;
  threads_[static_cast<std::size_t>(index)] = thread_counters::open_here(requests_);
}

void pmu_session::start() noexcept {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  for (auto& t : threads_) t.start();
}

void pmu_session::stop() noexcept {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  for (auto& t : threads_) t.stop();
}

void pmu_session::rebaseline() noexcept {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  for (auto& t : threads_) t.rebaseline();
}

std::vector<pmu_value> pmu_session::read(int index) const {
  if (!enabled_) return {};
  std::lock_guard lock(mutex_);
  return threads_[static_cast<std::size_t>(index)].read();
}

}  // namespace locus::prof
