#include "prof/locality_replay.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <stdexcept>
#include <string>

namespace locus::prof {

locality_replay::locality_replay(const topo::topology& t, int workers, std::size_t line_bytes,
                                 std::size_t page_bytes, bool coherence)
    : line_bytes_(line_bytes), coherence_(coherence) {
  if (!std::has_single_bit(line_bytes) || !std::has_single_bit(page_bytes)) {
    throw std::invalid_argument("locality model: line size " + std::to_string(line_bytes) +
                                " and page size " + std::to_string(page_bytes) +
                                " must be powers of two");
  }
  if (workers < 1 || workers > t.num_leaves()) {
    throw std::invalid_argument("locality model: " + std::to_string(workers) +
                                " workers on a topology of " + std::to_string(t.num_leaves()) +
                                " processing units");
  }
  line_shift_ = std::countr_zero(line_bytes);
  page_shift_ = std::countr_zero(page_bytes);
  const auto& nodes = t.nodes();

  std::map<int, std::size_t> level_of;  // cache level -> index into levels_, innermost first
  for (int w = 0; w < workers; ++w) {
    for (int a : t.ancestors(w)) {
      const topo::node& n = nodes[static_cast<std::size_t>(a)];
      if (n.kind == topo::node_kind::cache && n.cache_bytes != 0)
        level_of.emplace(n.cache_level, 0);
    }
  }
  for (auto& [level, index] : level_of) {
    index = levels_.size();
    levels_.push_back(level_totals{.level = level});
  }

  std::map<int, std::size_t> model_of;  // topology node -> index into caches_
  paths_.resize(static_cast<std::size_t>(workers));
  for (int w = 0; w < workers; ++w) {
    worker_path& p = paths_[static_cast<std::size_t>(w)];
    p.numa = t.numa_of(w);
    for (int a : t.ancestors(w)) {
      const topo::node& n = nodes[static_cast<std::size_t>(a)];
      if (n.kind != topo::node_kind::cache || n.cache_bytes == 0) continue;
      auto [it, fresh] = model_of.emplace(a, caches_.size());
      if (fresh) {
        const std::size_t li = level_of.at(n.cache_level);
        level_totals& lt = levels_[li];
        ++lt.instances;
        lt.cache_bytes =
            lt.cache_bytes == 0 ? n.cache_bytes : std::min(lt.cache_bytes, n.cache_bytes);
        caches_.push_back(cache_model{lru_cache(n.cache_bytes / line_bytes), li, {}});
      }
      p.caches.push_back(it->second);
    }
    // The ancestor path runs outwards already; sorting by level guards against a tree that
    // lists a cache above a larger one.
    std::stable_sort(p.caches.begin(), p.caches.end(), [&](std::size_t a, std::size_t b) {
      return caches_[a].level_index < caches_[b].level_index;
    });
  }
  for (std::size_t a = 0; a < caches_.size(); ++a) {
    for (std::size_t b = 0; b < caches_.size(); ++b) {
      if (a != b && caches_[a].level_index == caches_[b].level_index) caches_[a].peers.push_back(b);
    }
  }
  for (worker_path& p : paths_) {
    for (std::size_t c = 0; c < caches_.size(); ++c) {
      if (std::find(p.caches.begin(), p.caches.end(), c) == p.caches.end())
        p.elsewhere.push_back(c);
    }
  }
  numa_nodes_ = std::max(1, t.num_numa());
}

int locality_replay::first_owner(std::uint64_t page, int toucher) const {
  if (homes_.empty()) return toucher;
  const int shift = page_unit_shift();
  const auto begin = static_cast<std::uintptr_t>(page << shift);
  const mem::page_home* home =
      homes_.first_overlapping(begin, begin + (std::uintptr_t{1} << shift));
  return home != nullptr ? home->place_of(page) % numa_nodes_ : toucher;
}

bool locality_replay::remote(worker_path& p, std::uint64_t line) {
  const std::uint64_t page = line >> (page_shift_ - std::min(page_shift_, line_shift_));
  if (page != p.last_page) {
    p.last_page = page;
    auto [it, fresh] = page_owner_.try_emplace(page, p.numa);
    if (fresh) it->second = first_owner(page, p.numa);
    p.last_remote = it->second != p.numa;
  }
  return p.last_remote;
}

void locality_replay::set_home(std::uintptr_t begin, std::uintptr_t end,
                               std::optional<mem::page_home> home) {
  if (begin >= end) return;
  if (home) {
    homes_.assign(begin, end, *home);
  } else {
    homes_.erase(begin, end);
  }
  // Pages already placed in the range are placed again at their next touch.
  const std::uint64_t first = begin >> page_unit_shift();
  const std::uint64_t last = (end - 1) >> page_unit_shift();
  if (last - first + 1 <= page_owner_.size()) {
    for (std::uint64_t page = first; page <= last; ++page) page_owner_.erase(page);
  } else {
    std::erase_if(page_owner_,
                  [&](const auto& kv) { return kv.first >= first && kv.first <= last; });
  }
  for (worker_path& p : paths_) p.last_page = UINT64_MAX;
}

void locality_replay::access_line(int w, std::uint64_t line, bool write) {
  worker_path& p = paths_[static_cast<std::size_t>(w)];
  const bool far = remote(p, line);
  ++line_accesses_;
  remote_line_accesses_ += far ? 1 : 0;
  bool hit = false;
  for (std::size_t c : p.caches) {
    cache_model& m = caches_[c];
    level_totals& lt = levels_[m.level_index];
    ++lt.accesses;
    if (m.lru.access(line)) {
      hit = true;
      break;
    }
    ++lt.misses;
    lt.write_misses += write ? 1 : 0;
    for (std::size_t peer : m.peers) {
      if (caches_[peer].lru.contains(line)) {
        ++lt.from_peers;
        break;
      }
    }
  }
  if (!hit) {
    ++memory_accesses_;
    remote_memory_accesses_ += far ? 1 : 0;
  }
  if (write && coherence_) {
    for (std::size_t c : p.elsewhere) {
      if (caches_[c].lru.erase(line)) ++levels_[caches_[c].level_index].invalidations;
    }
  }
}

void locality_replay::access(int w, std::uintptr_t addr, std::size_t bytes, bool write) {
  if (bytes == 0) return;
  const std::uint64_t first = static_cast<std::uint64_t>(addr) >> line_shift_;
  const std::uint64_t last = (static_cast<std::uint64_t>(addr) + bytes - 1) >> line_shift_;
  for (std::uint64_t l = first; l <= last; ++l) access_line(w, l, write);
}

void locality_replay::access_rows(int w, std::uintptr_t addr, std::size_t row_bytes,
                                  std::size_t rows, std::ptrdiff_t stride, bool write) {
  for (std::size_t r = 0; r < rows; ++r) {
    access(w, addr + static_cast<std::uintptr_t>(static_cast<std::ptrdiff_t>(r) * stride),
           row_bytes, write);
  }
}

locality_report locality_replay::report() const {
  locality_report r;
  r.line_bytes = line_bytes_;
  r.page_bytes = std::size_t{1} << page_shift_;
  for (const level_totals& lt : levels_) {
    r.levels.push_back(locality_level{lt.level, lt.instances, lt.cache_bytes, lt.accesses,
                                      lt.misses, lt.write_misses, lt.from_peers, lt.invalidations});
  }
  r.numa_nodes = numa_nodes_;
  r.line_accesses = line_accesses_;
  r.remote_line_accesses = remote_line_accesses_;
  r.memory_accesses = memory_accesses_;
  r.remote_memory_accesses = remote_memory_accesses_;
  return r;
}

}  // namespace locus::prof
