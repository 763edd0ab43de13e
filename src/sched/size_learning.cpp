#include "sched/size_learning.hpp"

#include <exception>
#include <utility>

#include "prof/locality_hooks.hpp"
#include "prof/mix64.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/task_frame.hpp"
#include "sched/worker.hpp"

namespace locus::detail {
namespace {

constexpr std::uint64_t root_key = root_path;

// The group the running task's own work counts towards: the innermost one it has open, else
// the one it is a child of.
const group_state* group_of_running(const worker& w) noexcept {
  const ult::stack& s = *w.running;
  return static_cast<const group_state*>(s.owner_scope != nullptr ? s.owner_scope : s.owner_note);
}

// What a task declares goes to the learner of the runtime it runs on, if that one profiles.
void learn_declaration(const void* p, std::size_t row_bytes, std::size_t rows,
                       std::ptrdiff_t stride) noexcept {
  worker* w = current_worker();
  if (w == nullptr || w->rt.learner == nullptr) return;
  try {
    w->rt.learner->touched(*w, p, row_bytes, rows, stride);
  } catch (const std::exception&) {
    // Out of memory for records: the profile lacks these lines, the program goes on.
  }
}

}  // namespace

size_learner::size_learner(size_hint_source source, std::size_t max_records, std::size_t line_bytes,
                           int workers)
    : source_(source), max_records_(max_records), line_bytes_(line_bytes), workers_(workers) {
  prof::set_declaration_sink(&learn_declaration);
}

size_learner::~size_learner() {
  if (metering_) prof::declared_bytes_meter(false);
}

std::uint64_t size_learner::name_of_new_group(worker& w) noexcept {
  task_frame& creator = frame_of(*w.running);
  const group_state* parent = group_of_running(w);
  ++creator.groups_started;
  const std::uint64_t place_in_creator =
      creator.path() | static_cast<std::uint64_t>(creator.groups_started) << 48;
  return prof::mix64((parent != nullptr ? parent->learn_key : root_key) ^
                     prof::mix64(place_in_creator));
}

void size_learner::group_begins(worker& w, group_state& g) {
  g.learn_key = name_of_new_group(w);
  g.learn_node = nullptr;
  g.learn_outer = const_cast<group_state*>(group_of_running(w));
  w.running->owner_scope = &g;
  if (source_ == size_hint_source::none) {
    g.size_bytes = 0;
    return;
  }
  const bool replace = source_ == size_hint_source::learn_all;
  switch (phase_.load(std::memory_order_acquire)) {
    case phase::profiling: {
      if (replace) g.size_bytes = 0;
      const auto* parent = static_cast<const group_state*>(g.learn_outer);
      auto* parent_node = static_cast<prof::footprint_profile::node*>(
          parent != nullptr ? parent->learn_node : nullptr);
      g.learn_node = profile_->add(w.index, g.learn_key, parent_node);
      return;
    }
    case phase::learned: {
      if (!replace && g.size_bytes != 0) return;
      looked_up_.fetch_add(1, std::memory_order_relaxed);
      const auto it = sizes_.find(g.learn_key);
      if (it == sizes_.end()) {
        g.size_bytes = 0;
        unknown_.fetch_add(1, std::memory_order_relaxed);
        unknown_in_root_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      g.size_bytes = static_cast<std::size_t>(it->second);
      applied_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    case phase::fresh:
      if (replace) g.size_bytes = 0;
      return;
  }
}

void size_learner::group_ends(worker& w, group_state& g) noexcept {
  // Only on the stack it was begun on: a child that spawned into its parent's group first has
  // it as its own group already.
  ult::stack& s = *w.running;
  if (s.owner_scope == &g) s.owner_scope = g.learn_outer != s.owner_note ? g.learn_outer : nullptr;
}

void size_learner::root_begins(worker& w) {
  looked_up_.store(0, std::memory_order_relaxed);
  unknown_in_root_.store(0, std::memory_order_relaxed);
  if (source_ == size_hint_source::none) return;
  if (phase_.load(std::memory_order_acquire) != phase::fresh) return;
  // No task of an earlier profile runs between roots.
  profile_ = std::make_unique<prof::footprint_profile>(workers_, max_records_, line_bytes_);
  sizes_.clear();
  profiled_root_ = w.running;
  profile_began_ns_ = clock_ns();
  profiles_.fetch_add(1, std::memory_order_relaxed);
  if (!metering_) {
    prof::declared_bytes_meter(true);
    metering_ = true;
  }
  phase_.store(phase::profiling, std::memory_order_release);
}

void size_learner::root_ends(worker& w) {
  switch (phase_.load(std::memory_order_acquire)) {
    case phase::profiling:
      if (w.running == profiled_root_) finish_profiling();
      return;
    case phase::learned: {
      // Most of its groups unknown: another program, or this one changed its shape.
      const std::uint64_t looked = looked_up_.load(std::memory_order_relaxed);
      if (looked != 0 && 2 * unknown_in_root_.load(std::memory_order_relaxed) > looked) {
        phase_.store(phase::fresh, std::memory_order_release);
      }
      return;
    }
    case phase::fresh:
      return;
  }
}

void size_learner::iteration_ends(worker& /*w*/) {
  if (phase_.load(std::memory_order_acquire) == phase::profiling) finish_profiling();
}

void size_learner::relearn() noexcept {
  if (phase_.load(std::memory_order_acquire) == phase::learned) {
    phase_.store(phase::fresh, std::memory_order_release);
  }
}

void size_learner::finish_profiling() {
  if (metering_) {
    prof::declared_bytes_meter(false);
    metering_ = false;
  }
  sizes_ = profile_->footprints();
  {
    const std::lock_guard hold(report_lock_);
    report_.groups = profile_->groups();
    report_.named = sizes_.size();
    report_.recorded = profile_->recorded();
    report_.sample_every = profile_->sample_every();
    report_.profile_ns = clock_ns() - profile_began_ns_;
  }
  phase_.store(phase::learned, std::memory_order_release);
  // Nothing reads the nodes once the phase has changed: the profile's memory goes now.
  profile_.reset();
}

void size_learner::touched(worker& w, const void* p, std::size_t row_bytes, std::size_t rows,
                           std::ptrdiff_t stride) {
  if (phase_.load(std::memory_order_acquire) != phase::profiling) return;
  const group_state* g = group_of_running(w);
  auto* node = static_cast<prof::footprint_profile::node*>(g != nullptr ? g->learn_node : nullptr);
  profile_->touch(w.index, node, p, row_bytes, rows, stride);
}

std::vector<policy_figure> size_learner::figures() const {
  const std::lock_guard hold(report_lock_);
  return {
      {"size_hint_profiles", static_cast<double>(profiles_.load(std::memory_order_relaxed))},
      {"size_hint_groups_profiled", static_cast<double>(report_.groups)},
      {"size_hint_names", static_cast<double>(report_.named)},
      {"size_hint_profile_ms", static_cast<double>(report_.profile_ns) / 1e6},
      {"size_hint_records", static_cast<double>(report_.recorded)},
      {"size_hint_sample_every", static_cast<double>(report_.sample_every)},
      {"size_hints_applied", static_cast<double>(applied_.load(std::memory_order_relaxed))},
      {"size_hints_unknown", static_cast<double>(unknown_.load(std::memory_order_relaxed))},
  };
}

}  // namespace locus::detail
