#include "prof/footprint.hpp"

#include <algorithm>
#include <utility>

#include "prof/mix64.hpp"

namespace locus::prof {
namespace {

using node = footprint_profile::node;

node* lowest_common_ancestor(node* a, node* b) noexcept {
  while (a->depth > b->depth) a = a->parent;
  while (b->depth > a->depth) b = b->parent;
  while (a != b) {
    a = a->parent;
    b = b->parent;
  }
  return a;
}

}  // namespace

footprint_profile::footprint_profile(int workers, std::size_t max_records, std::size_t line_bytes)
    : parts_(static_cast<std::size_t>(std::max(1, workers))),
      budget_(std::max<std::size_t>(256, max_records / parts_.size())),
      line_bytes_(line_bytes) {}

node* footprint_profile::add(int worker, std::uint64_t key, node* parent) {
  worker_part& w = parts_[static_cast<std::size_t>(worker)];
  node* p = parent != nullptr ? parent : &root_;
  const std::lock_guard hold(w.lock);
  node& n = w.nodes.emplace_back();
  n.key = key;
  n.parent = p;
  n.depth = p->depth + 1;
  return &n;
}

// The same rule at every scale: of each 64 lines, every k-th from an offset drawn for those 64;
// past one in 64, of each 64 such blocks every k / 64-th block from an offset drawn for those
// 64 blocks; and so on. A contiguous range is then counted exactly but for its two ends at any
// rate (drawing whole blocks at random would leave a range of n blocks a relative error of
// sqrt(k / 64n)), and a strided one without bias. The lines of a sparser sample are among those
// of a denser one, as thinning needs.
bool footprint_profile::sampled(std::uint64_t line, std::uint64_t mask) const noexcept {
  std::uint64_t index = line;
  for (std::uint64_t level = 0; mask != 0; ++level, index >>= 6, mask >>= 6) {
    // The level in the key: a block and a 64-block group of the same number draw apart.
    const std::uint64_t offset = mix64((index >> 6) ^ (level << 58));
    if (((index + offset) & mask & 63) != 0) return false;
  }
  return true;
}

void footprint_profile::thin(worker_part& w) {
  std::uint64_t mask = mask_.load(std::memory_order_relaxed);
  for (;;) {
    // Another worker may have thinned since this buffer filled: its mask may already do.
    std::erase_if(w.records, [&](const record& r) { return !sampled(r.line, mask); });
    if (w.records.size() <= budget_ / 4 * 3) return;
    const std::uint64_t halved = mask * 2 + 1;
    if (mask_.compare_exchange_strong(mask, halved, std::memory_order_relaxed)) mask = halved;
  }
}

void footprint_profile::touch(int worker, node* n, const void* p, std::size_t row_bytes,
                              std::size_t rows, std::ptrdiff_t stride) {
  if (row_bytes == 0) return;
  worker_part& w = parts_[static_cast<std::size_t>(worker)];
  node* group = n != nullptr ? n : &root_;
  const auto base = reinterpret_cast<std::uintptr_t>(p);
  const std::lock_guard hold(w.lock);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uintptr_t start =
        base + static_cast<std::uintptr_t>(static_cast<std::ptrdiff_t>(r) * stride);
    const std::uint64_t first = start / line_bytes_, last = (start + row_bytes - 1) / line_bytes_;
    for (std::uint64_t line = first; line <= last; ++line) {
      if (!sampled(line, mask_.load(std::memory_order_relaxed))) continue;
      w.records.push_back({line, group});
      if (w.records.size() >= budget_) thin(w);
    }
  }
}

std::uint64_t footprint_profile::recorded() const {
  std::uint64_t n = 0;
  for (const auto& w : parts_) n += w.records.size();
  return n;
}

std::size_t footprint_profile::groups() const {
  std::size_t n = 0;
  for (const auto& w : parts_) n += w.nodes.size();
  return n;
}

std::unordered_map<std::uint64_t, std::uint64_t> footprint_profile::footprints() {
  // Depth-first numbers: children listed per parent, then an explicit stack from the root.
  std::vector<node*> all{&root_};
  for (auto& w : parts_) {
    const std::lock_guard hold(w.lock);
    for (node& n : w.nodes) all.push_back(&n);
  }
  std::unordered_map<node*, std::vector<node*>> children;
  for (node* n : all) {
    n->lines = 0;
    if (n->parent != nullptr) children[n->parent].push_back(n);
  }
  std::vector<node*> by_order;
  by_order.reserve(all.size());
  std::vector<node*> stack{&root_};
  while (!stack.empty()) {
    node* n = stack.back();
    stack.pop_back();
    n->order = static_cast<std::uint32_t>(by_order.size());
    by_order.push_back(n);
    if (auto it = children.find(n); it != children.end()) {
      stack.insert(stack.end(), it->second.begin(), it->second.end());
    }
  }

  const std::uint64_t mask = mask_.load(std::memory_order_relaxed);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> touches;  // (line, order)
  for (auto& w : parts_) {
    const std::lock_guard hold(w.lock);
    for (const record& r : w.records) {
      if (sampled(r.line, mask)) touches.emplace_back(r.line, r.group->order);
    }
  }
  std::sort(touches.begin(), touches.end());
  for (std::size_t i = 0; i < touches.size(); ++i) {
    if (i > 0 && touches[i] == touches[i - 1]) continue;
    node* n = by_order[touches[i].second];
    ++n->lines;
    if (i > 0 && touches[i].first == touches[i - 1].first) {
      --lowest_common_ancestor(n, by_order[touches[i - 1].second])->lines;
    }
  }
  // Children after their parent in depth-first order: fold from the last one up.
  for (auto it = by_order.rbegin(); it != by_order.rend(); ++it) {
    if ((*it)->parent != nullptr) (*it)->parent->lines += (*it)->lines;
  }

  std::unordered_map<std::uint64_t, std::uint64_t> sizes;
  const std::uint64_t scale = line_bytes_ * (mask + 1);
  for (node* n : all) {
    if (n == &root_) continue;
    std::uint64_t& s = sizes[n->key];
    s = std::max(s, static_cast<std::uint64_t>(std::max<std::int64_t>(0, n->lines)) * scale);
  }
  return sizes;
}

}  // namespace locus::prof
