#include "sched/cats_profile.hpp"

#include <algorithm>
#include <limits>

namespace locus::detail::cats {

const char* source_name(source s) noexcept {
  switch (s) {
    case source::misses:
      return "misses";
    case source::hints:
      return "hints";
    case source::declared:
      return "declared";
    case source::none:
      break;
  }
  return "none";
}

std::uint64_t profile_node::measured_soid() const noexcept {
  if (ended) return measured;
  return own.load(std::memory_order_relaxed) + children_measured.load(std::memory_order_relaxed);
}

std::uint64_t profile_node::hinted_soid() const noexcept {
  if (ended) return hinted;
  return hint != 0 ? hint : children_hinted.load(std::memory_order_relaxed);
}

profile::profile(int workers, std::size_t max_nodes)
    : arenas_(static_cast<std::size_t>(std::max(workers, 1))) {
  const std::size_t each = std::max<std::size_t>(max_nodes / arenas_.size(), 1);
  for (arena& a : arenas_) a.room = each;
}

profile_node* profile::add(int worker, std::uint64_t id, profile_node* parent) {
  arena& a = arenas_[static_cast<std::size_t>(worker)];
  if (a.room == 0) return nullptr;
  --a.room;
  profile_node& n = a.nodes.emplace_back();
  n.id = id;
  n.parent = parent;
  // Only the root is added without a parent, before any other task of the iteration runs.
  if (parent == nullptr && root_ == nullptr) root_ = &n;
  return &n;
}

void profile::end(profile_node& n) noexcept {
  n.measured =
      n.own.load(std::memory_order_relaxed) + n.children_measured.load(std::memory_order_acquire);
  n.hinted = n.hint != 0 ? n.hint : n.children_hinted.load(std::memory_order_acquire);
  n.ended = true;
  if (n.parent != nullptr) {
    n.parent->children_measured.fetch_add(n.measured, std::memory_order_acq_rel);
    n.parent->children_hinted.fetch_add(n.hinted, std::memory_order_acq_rel);
  }
}

cmpi_vote profile::vote_cmpi(double threshold, std::uint64_t line_bytes) const noexcept {
  cmpi_vote v;
  for (const arena& a : arenas_) {
    for (const profile_node& n : a.nodes) {
      const std::uint64_t instructions = n.instructions.load(std::memory_order_relaxed);
      if (instructions == 0) continue;
      const std::uint64_t misses = n.own.load(std::memory_order_relaxed) / line_bytes;
      ++v.tasks;
      if (static_cast<double>(misses) < threshold * static_cast<double>(instructions)) {
        ++v.cpu_bound;
      }
      v.misses += misses;
      v.instructions += instructions;
    }
  }
  return v;
}

bool profile::any_measured() const noexcept {
  for (const arena& a : arenas_) {
    for (const profile_node& n : a.nodes) {
      if (n.own.load(std::memory_order_relaxed) != 0) return true;
    }
  }
  return false;
}

bool profile::any_hint() const noexcept {
  for (const arena& a : arenas_) {
    for (const profile_node& n : a.nodes) {
      if (n.hint != 0) return true;
    }
  }
  return false;
}

namespace {
std::uint64_t size_by(const profile_node& n, source by) noexcept {
  return by == source::hints ? n.hinted_soid() : n.measured_soid();
}
}  // namespace

partition_counts profile::partition(source by, std::uint64_t cache_bytes) {
  partition_counts counts;
  frozen_.clear();
  for (const arena& a : arenas_) {
    for (const profile_node& n : a.nodes) {
      const std::uint64_t size = size_by(n, by);
      // Fig. 6: a root has no parent, and counts as one whose data does not fit.
      const std::uint64_t parent_size =
          n.parent != nullptr ? size_by(*n.parent, by) : std::numeric_limits<std::uint64_t>::max();
      tier t = tier::intra;
      if (size >= cache_bytes) {
        t = tier::inter;
        ++counts.inter;
      } else if (parent_size >= cache_bytes) {
        t = tier::leaf;
        ++counts.leaves;
      }
      ++counts.nodes;
      frozen_[n.id] = t;
    }
  }
  return counts;
}

tier profile::tier_of(std::uint64_t id) const noexcept {
  const auto it = frozen_.find(id);
  return it != frozen_.end() ? it->second : tier::unknown;
}

std::uint64_t profile::root_size(source by) const noexcept {
  return root_ != nullptr ? size_by(*root_, by) : 0;
}

}  // namespace locus::detail::cats
