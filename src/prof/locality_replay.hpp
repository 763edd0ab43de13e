// The replay engine of the locality model: the caches of a topology as LRU models, fed with line
// accesses of workers in a global order.
//
// Every cache node of the tree is one instance (an L2 shared by two cores is one model that both
// feed). A worker's access goes through the caches on its leaf's ancestor path from the innermost
// level outwards and stops at the first hit; a miss at one level is an access at the next, and a
// miss of the outermost cache goes to memory. Caches without a size (hwloc knows none) are left
// out. NUMA: each page's owner is the NUMA node of the worker that touched it first in the replay
// order (first-touch placement, at page granularity because that is what the OS places), unless
// a binding (locus/memory.hpp) in force when the replay first meets the page places it.
//
// Coherence (on unless the constructor turns it off): a write leaves the line only in the
// writer's caches, as an invalidation protocol does, so a later reader elsewhere misses. A miss
// whose line another cache of the same level holds is counted as supplied by a peer (seed 003's
// Table 4: lines obtained from other cores' caches).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "locus/locality.hpp"
#include "mem/page_home.hpp"
#include "mem/range_map.hpp"
#include "prof/locality_lru.hpp"
#include "topology/topology.hpp"

namespace locus::prof {

class locality_replay {
 public:
  // Workers 0 .. workers-1 run on leaves 0 .. workers-1 (as the runtime binds them). line_bytes
  // and page_bytes must be powers of two. Throws std::invalid_argument otherwise, or when the
  // topology has fewer leaves than workers.
  locality_replay(const topo::topology& t, int workers, std::size_t line_bytes,
                  std::size_t page_bytes = 4096, bool coherence = true);

  // Worker `w` reads (writes) [addr, addr + bytes): every line it overlaps, in address order.
  void access(int w, std::uintptr_t addr, std::size_t bytes, bool write = false);
  // `rows` ranges of `row_bytes`, row i at addr + i * stride.
  void access_rows(int w, std::uintptr_t addr, std::size_t row_bytes, std::size_t rows,
                   std::ptrdiff_t stride, bool write = false);
  // One line (address / line_bytes).
  void access_line(int w, std::uint64_t line, bool write = false);

  // From now on the pages of [begin, end) live where `home` says (a binding, which also moves
  // pages touched before it), or, without a home, are fresh again (unbound or unmapped): the
  // next worker to touch one places it. A model page (page_bytes) is homed by the first binding
  // that overlaps it.
  void set_home(std::uintptr_t begin, std::uintptr_t end, std::optional<mem::page_home> home);

  // Cache levels and NUMA counts so far (ranges, mapping and the unattributed counts are the
  // recorder's to fill).
  locality_report report() const;

  std::size_t line_bytes() const noexcept { return line_bytes_; }

 private:
  struct level_totals {
    int level = 0;
    int instances = 0;
    std::size_t cache_bytes = 0;
    std::uint64_t accesses = 0, misses = 0;
    std::uint64_t write_misses = 0, from_peers = 0, invalidations = 0;
  };
  struct worker_path {
    std::vector<std::size_t> caches;     // indices into caches_, innermost first
    std::vector<std::size_t> elsewhere;  // every other cache: where its writes invalidate
    int numa = 0;
    std::uint64_t last_page = UINT64_MAX;  // memo: runs of lines share a page
    bool last_remote = false;
  };
  struct cache_model {
    lru_cache lru;
    std::size_t level_index;         // into levels_
    std::vector<std::size_t> peers;  // the other caches of its level
  };

  bool remote(worker_path& p, std::uint64_t line);
  // Pages are numbered in units of the page or, when larger, the line (remote() counts by line).
  int page_unit_shift() const noexcept { return std::max(page_shift_, line_shift_); }
  // The NUMA node a page is first touched on: its binding's, else the toucher's.
  int first_owner(std::uint64_t page, int toucher) const;

  std::size_t line_bytes_;
  bool coherence_;
  int line_shift_;
  int page_shift_;
  std::vector<cache_model> caches_;
  std::vector<level_totals> levels_;  // innermost first
  std::vector<worker_path> paths_;
  std::unordered_map<std::uint64_t, int> page_owner_;
  mem::range_map<mem::page_home> homes_;  // bindings in force (by address)
  int numa_nodes_ = 1;
  std::uint64_t line_accesses_ = 0, remote_line_accesses_ = 0;
  std::uint64_t memory_accesses_ = 0, remote_memory_accesses_ = 0;
};

}  // namespace locus::prof
