#include "prof/workspan.hpp"

#include <time.h>

#include <algorithm>
#include <iterator>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace locus::prof {
namespace {

std::uint64_t now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// The time stamp counter costs a few nanoseconds where clock_gettime costs about twenty, and
// every spawn reads the clock twice; ticks are converted to seconds against the monotonic clock
// over the meter's lifetime.
std::uint64_t ticks() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return now_ns();
#endif
}

}  // namespace

workspan_meter::workspan_meter() : origin_ticks_(ticks()), origin_ns_(now_ns()) {
  frames_.reserve(256);
  groups_.reserve(256);
  strand_start_ = origin_ticks_;
}

void workspan_meter::close_strand(std::uint64_t now) noexcept {
  const std::uint64_t d = now > strand_start_ ? now - strand_start_ : 0;
  if (!frames_.empty()) {
    frame& f = frames_.back();
    f.work += d;
    f.prefix += d;
  }
  strand_start_ = now;
}

void workspan_meter::task_begin() noexcept {
  close_strand(ticks());
  try {
    frames_.emplace_back();
  } catch (...) {
    // Out of memory for one more frame: the child is measured as part of its parent's strand.
  }
}

void workspan_meter::task_end(const void* group) noexcept {
  close_strand(ticks());
  if (frames_.empty()) return;
  frame child = frames_.back();
  frames_.pop_back();
  // Groups the child left unjoined (a destructor always joins; this is for a throw past one).
  while (!groups_.empty() && groups_.back().depth > frames_.size()) {
    child.prefix = std::max(child.prefix, groups_.back().longest);
    groups_.pop_back();
  }
  if (frames_.empty()) {
    work_ += child.work;
    span_ += child.prefix;  // roots run one after the other
    ++roots_;
    return;
  }
  frame& parent = frames_.back();
  parent.work += child.work;
  const std::size_t depth = frames_.size();
  const std::uint64_t path = parent.prefix + child.prefix;
  auto it = groups_.rbegin();
  while (it != groups_.rend() && it->depth == depth && it->group != group) ++it;
  if (it != groups_.rend() && it->depth == depth) {
    it->longest = std::max(it->longest, path);
  } else {
    try {
      groups_.push_back(open_group{group, depth, path});
    } catch (...) {
      parent.prefix =
          std::max(parent.prefix, path);  // joined at once: a longer span, not a lost one
    }
  }
  strand_start_ = ticks();  // the bookkeeping above is not the parent's work
}

void workspan_meter::join(const void* group) noexcept {
  close_strand(ticks());
  if (frames_.empty()) return;
  const std::size_t depth = frames_.size();
  for (auto it = groups_.rbegin(); it != groups_.rend() && it->depth == depth; ++it) {
    if (it->group != group) continue;
    frame& f = frames_.back();
    f.prefix = std::max(f.prefix, it->longest);
    groups_.erase(std::next(it).base());
    break;
  }
}

workspan_result workspan_meter::result() const {
  const std::uint64_t dt = ticks() - origin_ticks_;
  const std::uint64_t dns = now_ns() - origin_ns_;
  const double seconds_per_tick =
      dt > 0 ? static_cast<double>(dns) * 1e-9 / static_cast<double>(dt) : 1e-9;
  workspan_result r;
  r.work_s = static_cast<double>(work_) * seconds_per_tick;
  r.span_s = static_cast<double>(span_) * seconds_per_tick;
  r.roots = roots_;
  return r;
}

void workspan_meter::reset() noexcept {
  work_ = 0;
  span_ = 0;
  roots_ = 0;
}

}  // namespace locus::prof
