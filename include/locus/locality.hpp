// The locality model (DESIGN.md §6): code declares the memory its tasks read and write, locus
// records the declarations per worker while a session is open, and replays them afterwards
// through one LRU model per cache of the runtime's topology (the real machine, or a synthetic
// LOCUS_TOPOLOGY with its cache sizes). Use it where hardware counters are missing or to ask
// what a larger machine than this one would do.
//
//   locus::runtime rt{locus::options{.workers = 16, .topology = "pack:2 l3:1 l2:8 core:1 pu:1"}};
//   locus::locality::begin(rt);
//   rt.exec([&] {
//     for (int it = 0; it < iters; ++it) {
//       locus::parallel_for(0, blocks, [&](int b) {
//         locus::locality::leaf(b);                        // for mapping stability
//         locus::locality::touch_read(in + b * len, len * sizeof(double));
//         locus::locality::touch_write(out + b * len, len * sizeof(double));
//         ...
//       });
//       locus::locality::next_iteration();
//     }
//   });
//   locus::locality_report r = locus::locality::end();    // replays; r.to_json()
//
// LOCUS_LOCALITY=1 (or options::locality) opens a session when the runtime starts and prints the
// report to stderr when it is destroyed. Outside a session every declaration is one load of a
// global flag and one well-predicted branch: no call, no allocation, no thread-local lookup.
//
// What the model is (and is not): each cache is fully associative with true LRU replacement and
// capacity cache_bytes / line_bytes lines (no sets, no prefetching; a write allocates like a
// read). With coherence (the default), a write invalidates the line in every cache outside the
// writer's path, so a reader elsewhere misses afterwards. A declared range is replayed line by line
// as one unit at its place in a global order of declarations. Only declarations made by the
// session's workers are modeled; those from other threads are counted as unattributed, unless the
// session attributes them to a worker (session_options::attribute_outside_to).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace locus {

class runtime;

// Modeled accesses and misses of one cache level, summed over its instances.
struct locality_level {
  int level = 0;                   // 1 = L1, 2 = L2, ...
  int instances = 0;               // caches of this level on the workers' paths
  std::size_t cache_bytes = 0;     // capacity of one instance (the smallest, if they differ)
  std::uint64_t accesses = 0;      // line accesses that reached this level (missed all below)
  std::uint64_t misses = 0;        // of those, lines the cache did not hold
  std::uint64_t write_misses = 0;  // misses of writes (seed 003 Table 4's store-miss refills)
  // Misses whose line another cache of this level held: lines a real machine gets from another
  // core's cache rather than from the next level or memory (Table 4's lines from other caches).
  std::uint64_t from_peers = 0;
  std::uint64_t invalidations = 0;  // lines this level's caches lost to other workers' writes

  std::optional<double> miss_ratio() const;  // misses / accesses; empty without accesses
};

struct locality_report {
  std::size_t line_bytes = 0;  // the modeled line size
  std::size_t page_bytes = 0;  // the granularity of NUMA first touch
  std::uint64_t ranges = 0;    // declared ranges replayed (a strided declaration counts once)
  // Declarations not modeled: made on threads that are not workers of the session's runtime,
  // or lost because the log could not grow.
  std::uint64_t unattributed = 0;
  std::uint64_t dropped = 0;
  std::vector<locality_level> levels;  // innermost level first

  // NUMA: every line access by a worker, and those to pages first touched (within the session)
  // by a worker of another NUMA node, or bound to another place (locus/memory.hpp: a binding of
  // the session's runtime, made before the session or during it, places a page whoever touches
  // it first); the same for the accesses that missed every cache.
  int numa_nodes = 1;
  std::uint64_t line_accesses = 0, remote_line_accesses = 0;
  std::uint64_t memory_accesses = 0, remote_memory_accesses = 0;

  // Mapping stability: leaves declared in two consecutive iterations, and how many of them ran on
  // the same worker both times.
  std::uint64_t leaves_compared = 0, leaves_same = 0;

  std::optional<double> numa_remote_share() const;         // over line accesses
  std::optional<double> numa_remote_memory_share() const;  // over accesses that missed all caches
  std::optional<double> mapping_stability() const;         // leaves_same / leaves_compared

  // Adds the counts of `other` (reports of repetitions of one configuration); levels are matched
  // by level number.
  locality_report& operator+=(const locality_report& other);
  // One JSON object; shares without a denominator are null.
  std::string to_json() const;
  // A small table, what LOCUS_LOCALITY=1 prints at exit.
  std::string to_text() const;
};

namespace locality {

struct session_options {
  // Line size of every modeled cache in bytes, a power of two; 0: options::locality_line /
  // LOCUS_LOCALITY_LINE when set, else the topology's innermost cache line, else 64.
  std::size_t line_bytes = 0;
  // Granularity of NUMA first touch; the OS places whole pages, so 4 KiB by default.
  std::size_t page_bytes = 4096;
  // Coherence: a write invalidates the line in the caches outside the writer's path. Off, every
  // cache keeps its copy (the model before coherence, for comparisons with figures taken so).
  bool coherence = true;
  // Declarations from threads that are not workers of the session's runtime: empty, they are
  // counted as unattributed; a worker index w, they are modeled as worker w's (on its processing
  // unit's caches and NUMA node). For code that runs outside the runtime on the calling thread,
  // such as a serial elision measured against the parallel version:
  //   locus::locality::begin(rt, {.attribute_outside_to = 0});
  //   run_serially();  // its declarations count as worker 0's
  // Several such threads may declare at once; they take turns on one log.
  std::optional<int> attribute_outside_to{};
};

// Opens a session on the workers of `rt` (clearing what an earlier session left). Call it while
// no task declares anything (outside rt.exec, or before the tasks that declare start). Throws
// std::logic_error when a session is already open, std::invalid_argument for a bad option (a line
// or page size that is not a power of two, attribute_outside_to not a worker of rt).
void begin(runtime& rt, const session_options& opts = {});
// Closes the session and replays what it recorded. Safe while tasks still run: declarations in
// flight finish first, later ones are ignored. Throws std::logic_error without an open session.
locality_report end();
// Whether a session is open.
bool recording() noexcept;

namespace detail {
// Non-zero while a session is open (session_bit) or a scheduler meters the bytes tasks declare
// (meter_bit: cats learns footprints from them). Relaxed loads suffice for the inline check: the
// recorder re-checks the session bit with a handshake that end() waits on.
inline constexpr unsigned char session_bit = 1, meter_bit = 2;
extern std::atomic<unsigned char> active;
void record_range(const void* p, std::size_t row_bytes, std::size_t rows, std::ptrdiff_t stride,
                  bool write) noexcept;
void record_leaf(std::uint64_t id, std::optional<std::uint64_t> iteration) noexcept;
void advance_iteration() noexcept;
}  // namespace detail

// The calling task reads (writes) [p, p + bytes).
inline void touch_read(const void* p, std::size_t bytes) noexcept {
  if (detail::active.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::record_range(p, bytes, 1, 0, false);
  }
}
inline void touch_write(const void* p, std::size_t bytes) noexcept {
  if (detail::active.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::record_range(p, bytes, 1, 0, true);
  }
}
// A 2-D block in one declaration: `rows` ranges of `row_bytes` bytes, row i starting at
// p + i * stride_bytes (a sub-block of a row-major matrix). Replayed row by row.
inline void touch_read_rows(const void* p, std::size_t row_bytes, std::size_t rows,
                            std::ptrdiff_t stride_bytes) noexcept {
  if (detail::active.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::record_range(p, row_bytes, rows, stride_bytes, false);
  }
}
inline void touch_write_rows(const void* p, std::size_t row_bytes, std::size_t rows,
                             std::ptrdiff_t stride_bytes) noexcept {
  if (detail::active.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::record_range(p, row_bytes, rows, stride_bytes, true);
  }
}

// Mapping stability of iterative code: a leaf task calls leaf(id) with an identity that is the
// same for "the same piece of work" in every iteration (a block index, a range start), and the
// code driving the iterations calls next_iteration() between them, after the join. A leaf that
// declares one id several times in one iteration counts once, with the worker of its first
// declaration. Iterations count from 0 at begin().
inline void leaf(std::uint64_t id) noexcept {
  if (detail::active.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::record_leaf(id, std::nullopt);
  }
}
// With an explicit iteration, for code whose iterations are not global phases (e.g. the repeated
// maps of one subarray in a recursive computation, where other subarrays are at other repeats).
inline void leaf(std::uint64_t id, std::uint64_t iteration) noexcept {
  if (detail::active.load(std::memory_order_relaxed)) [[unlikely]] {
    detail::record_leaf(id, iteration);
  }
}
inline void next_iteration() noexcept {
  if (detail::active.load(std::memory_order_relaxed)) [[unlikely]]
    detail::advance_iteration();
}

}  // namespace locality
}  // namespace locus
