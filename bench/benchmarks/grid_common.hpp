// Shared pieces of the grid benchmarks: heat2d (ADWS) and the CATS family heat, sor, ge and
// their unbalanced -ub variants.
//
// - grid: a rows x cols array of doubles in one std::vector, row-major with an optional padding
//   of whole doubles at the end of every row.
// - fill_uniform: the documented deterministic input generator (splitmix64, fixed seeds).
// - split_rows: the recursive row decomposition of the CATS benchmarks. CATS (seed 002, §4.2)
//   divides a task's rows into parts until a leaf has at most `cutoff` rows (8 in the paper).
//   row_shape::balanced halves every range; row_shape::unbalanced is the branching of the
//   paper's Algorithm 1 ("heat-ub"): a procedure of the first kind splits [lo, hi) at the middle
//   into a second-kind child (lower half) and a first-kind child (upper half); one of the second
//   kind splits into quarters, of kinds first, first, second, first. Every iteration of an
//   iterative benchmark builds the same tree, so task identifiers by spawn path repeat.
//   The locus version gives each group a work hint (its rows times the work of a row) and a size
//   hint (the bytes of its rows plus halo), and each child a work hint for its own rows. The
//   oneTBB and OpenMP versions spawn the same tree with tbb::task_group and omp task / taskwait.
// - compare_grids: bit-exact comparison against a serial reference, with a checksum.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <locus/memory.hpp>
#include <locus/runtime.hpp>
#include <locus/task_group.hpp>

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

#include "benchmarks/placement.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench::grid_bench {

// ---- storage ------------------------------------------------------------------------------------

class grid {
 public:
  grid() = default;
  grid(int rows, int cols, int pad_doubles = 0)
      : rows_(rows),
        cols_(cols),
        stride_(static_cast<std::size_t>(cols) + static_cast<std::size_t>(pad_doubles)),
        data_(static_cast<std::size_t>(rows) * stride_, 0.0) {}

  int rows() const noexcept { return rows_; }
  int cols() const noexcept { return cols_; }
  std::size_t stride() const noexcept { return stride_; }
  double* row(int i) noexcept { return data_.data() + static_cast<std::size_t>(i) * stride_; }
  const double* row(int i) const noexcept {
    return data_.data() + static_cast<std::size_t>(i) * stride_;
  }
  double& at(int i, int j) noexcept { return row(i)[j]; }
  double at(int i, int j) const noexcept { return row(i)[j]; }
  // Copies the contents of another grid of the same shape.
  void assign(const grid& other) { data_ = other.data_; }

 private:
  int rows_ = 0, cols_ = 0;
  std::size_t stride_ = 0;
  std::vector<double> data_;
};

// ---- inputs -------------------------------------------------------------------------------------

// splitmix64 (Steele, Lea, Flood 2014): the state advances by 0x9e3779b97f4a7c15 and every
// output is a finalised copy of it.
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

// Every element of g (row by row, left to right) uniform in [lo, hi) from splitmix64(seed).
inline void fill_uniform(grid& g, std::uint64_t seed, double lo, double hi) {
  splitmix64 rng(seed);
  for (int i = 0; i < g.rows(); ++i) {
    double* r = g.row(i);
    for (int j = 0; j < g.cols(); ++j) r[j] = lo + (hi - lo) * rng.uniform();
  }
}

// ---- kernels ------------------------------------------------------------------------------------

// One explicit (FTCS) step of the heat equation u_t = u_xx + u_yy on the block rows [r0, r1) x
// columns [c0, c1) of a grid whose ring of boundary cells stays fixed:
//   next = u + cx (u[i-1][j] - 2u + u[i+1][j]) + cy (u[i][j-1] - 2u + u[i][j+1]),
// with cx = dt/dx^2 and cy = dt/dy^2 (stable for cx + cy <= 1/2). Out of line, so that every
// implementation runs the very same machine code and results compare bit for bit.
[[gnu::noinline]] inline void heat_step_block(const grid& cur, grid& next, int r0, int r1, int c0,
                                              int c1, double cx, double cy) {
  for (int i = r0; i < r1; ++i) {
    const double* __restrict up = cur.row(i - 1);
    const double* __restrict mid = cur.row(i);
    const double* __restrict down = cur.row(i + 1);
    double* __restrict out = next.row(i);
    for (int j = c0; j < c1; ++j) {
      out[j] = mid[j] + cx * (up[j] - 2.0 * mid[j] + down[j]) +
               cy * (mid[j - 1] - 2.0 * mid[j] + mid[j + 1]);
    }
  }
}

// ---- row decomposition (CATS) -------------------------------------------------------------------

enum class row_shape { balanced, unbalanced };

struct row_plan {
  row_shape shape = row_shape::balanced;
  int cutoff = 8;                 // a range of at most this many rows is a leaf
  int first = 0;                  // rows below `first` are done: ranges wholly below are skipped
  double work_per_row = 1.0;      // work hint of one (active) row
  std::size_t bytes_per_row = 0;  // size hint of one (active) row
  std::size_t extra_bytes = 0;    // size hint added per group: halo rows, a pivot row
};

namespace detail {

struct row_range {
  int lo, hi;
  bool second_kind;  // Algorithm 1's heat2 (quarters); always false when balanced
};

// The children of [lo, hi) of the given kind; returns how many (2 or 4).
inline int children(const row_plan& p, const row_range& r, std::array<row_range, 4>& out) {
  if (p.shape == row_shape::unbalanced && r.second_kind) {
    const int quad = (r.hi - r.lo) / 4;
    out[0] = {r.lo, r.lo + quad, false};
    out[1] = {r.lo + quad, r.lo + 2 * quad, false};
    out[2] = {r.lo + 2 * quad, r.lo + 3 * quad, true};
    out[3] = {r.lo + 3 * quad, r.hi, false};
    return 4;
  }
  const int mid = r.lo + (r.hi - r.lo) / 2;
  out[0] = {r.lo, mid, p.shape == row_shape::unbalanced};
  out[1] = {mid, r.hi, false};
  return 2;
}

inline int active_rows(const row_plan& p, const row_range& r) {
  return std::max(0, r.hi - std::max(r.lo, p.first));
}

// Runs the leaf if r is one (at most p.cutoff rows) and says whether it was.
template <class Leaf>
bool at_leaf(const row_plan& p, const row_range& r, const Leaf& leaf) {
  if (r.hi - r.lo > p.cutoff) return false;
  const int lo = std::max(r.lo, p.first);
  if (lo < r.hi) leaf(lo, r.hi);
  return true;
}

// The children of r that have rows to update, in row order; returns how many. Children that are
// empty or wholly done spawn nothing (quarters of fewer than 4 rows are empty; GE's rows above
// the pivot are done).
inline int live_children(const row_plan& p, const row_range& r, std::array<row_range, 4>& live) {
  std::array<row_range, 4> kids{};
  const int k = children(p, r, kids);
  int m = 0;
  for (int i = 0; i < k; ++i) {
    if (kids[i].hi > kids[i].lo && active_rows(p, kids[i]) > 0) live[m++] = kids[i];
  }
  return m;
}

template <class Leaf>
void split_serial(const row_plan& p, const row_range& r, const Leaf& leaf) {
  if (at_leaf(p, r, leaf)) return;
  std::array<row_range, 4> live{};
  const int m = live_children(p, r, live);
  for (int i = 0; i < m; ++i) split_serial(p, live[i], leaf);
}

template <class Leaf>
void split_locus(const row_plan& p, const row_range& r, const Leaf& leaf) {
  if (at_leaf(p, r, leaf)) return;
  std::array<row_range, 4> live{};
  const int m = live_children(p, r, live);
  const int rows = active_rows(p, r);
  locus::task_group tg{
      locus::work_hint{p.work_per_row * rows},
      locus::size_hint{static_cast<std::size_t>(rows) * p.bytes_per_row + p.extra_bytes}};
  for (int i = 0; i + 1 < m; ++i) {
    tg.run([&p, &leaf, c = live[i]] { split_locus(p, c, leaf); },
           locus::work_hint{p.work_per_row * active_rows(p, live[i])});
  }
  if (m > 0) split_locus(p, live[m - 1], leaf);
  tg.wait();
}

#if LOCUS_BENCH_PEERS

// The peers spawn the same children in the same order, the last one inline, and join them all.
template <class Leaf>
void split_tbb(const row_plan& p, const row_range& r, const Leaf& leaf) {
  if (at_leaf(p, r, leaf)) return;
  std::array<row_range, 4> live{};
  const int m = live_children(p, r, live);
  tbb::task_group tg;
  for (int i = 0; i + 1 < m; ++i) tg.run([&p, &leaf, c = live[i]] { split_tbb(p, c, leaf); });
  if (m > 0) split_tbb(p, live[m - 1], leaf);
  tg.wait();
}

// Pointers, so that each task's firstprivate copies are a word each; they stay valid because
// the taskwait below outlives every task spawned here.
template <class Leaf>
void split_omp(const row_plan* p, const row_range& r, const Leaf* leaf) {
  if (at_leaf(*p, r, *leaf)) return;
  std::array<row_range, 4> live{};
  const int m = live_children(*p, r, live);
  for (int i = 0; i + 1 < m; ++i) {
    const row_range c = live[i];
#pragma omp task default(none) firstprivate(p, c, leaf)
    split_omp(p, c, leaf);
  }
  if (m > 0) split_omp(p, live[m - 1], leaf);
#pragma omp taskwait
}

#endif

}  // namespace detail

// Calls leaf(lo, hi) on the leaves of the decomposition of [lo, hi) described by p, rows below
// p.first excluded, with the implementation `which`: serially in row order (the serial elision),
// as locus tasks (no place hints), or as oneTBB task_group / OpenMP task + taskwait tasks (inside
// the region's single) spawning the same tree, since CATS's benchmarks are recursive Cilk
// spawns, not parallel loops.
template <class Leaf>
void split_rows(impl which, const row_plan& p, int lo, int hi, const Leaf& leaf) {
  const detail::row_range all{lo, hi, false};
  switch (which) {
    case impl::serial:
      detail::split_serial(p, all, leaf);
      break;
    case impl::locus:
      detail::split_locus(p, all, leaf);
      break;
#if LOCUS_BENCH_PEERS
    case impl::tbb:
      detail::split_tbb(p, all, leaf);
      break;
    case impl::omp:
      detail::split_omp(&p, all, &leaf);
      break;
#endif
    default:
      break;
  }
}

// Row k of [lo, hi) cut into `parts` parts of equal rows: the first row of part k.
inline int place_part_begin(int lo, int hi, int k, int parts) {
  return lo + static_cast<int>(static_cast<std::int64_t>(hi - lo) * k / parts);
}

// split_rows(impl::locus, ...) with the place hints of NUMA-WS (seed 001 §V: only the top level
// carries them): with several places, [lo, hi) is first cut into one part of equal rows per place,
// part k a queued child hinted to place k (placement.hpp), and each part is split as usual below
// it.
template <class Leaf>
void split_rows_by_place(const row_plan& p, int lo, int hi, int places, const Leaf& leaf) {
  if (places < 2) return split_rows(impl::locus, p, lo, hi, leaf);
  const detail::row_range all{lo, hi, false};
  const int rows = detail::active_rows(p, all);
  locus::task_group tg{
      locus::work_hint{p.work_per_row * rows},
      locus::size_hint{static_cast<std::size_t>(rows) * p.bytes_per_row + p.extra_bytes}};
  placement::each_part_own_last(places, places, [&](int k) {
    const detail::row_range part{place_part_begin(lo, hi, k, places),
                                 place_part_begin(lo, hi, k + 1, places), false};
    if (detail::active_rows(p, part) == 0) return;
    tg.run([&p, &leaf, part] { detail::split_locus(p, part, leaf); },
           locus::work_hint{p.work_per_row * detail::active_rows(p, part)}, locus::place{k},
           locus::parent_first);
  });
  tg.wait();
}

// Binds g's rows to rt's places the way split_rows_by_place cuts [lo, hi) (rows before lo go
// with part 0, rows from hi on with the last part), so that a part's rows live on its place.
inline void bind_rows_by_place(data_placement& where, grid& g, int lo, int hi) {
  const int places = where.num_places();
  if (places < 2) return;
  for (int k = 0; k < places; ++k) {
    const int first = k == 0 ? 0 : place_part_begin(lo, hi, k, places);
    const int last = k + 1 == places ? g.rows() : place_part_begin(lo, hi, k + 1, places);
    if (last > first) {
      where.bind(g.row(first), static_cast<std::size_t>(last - first) * g.stride() * sizeof(double),
                 k);
    }
  }
}

inline std::string shape_text(row_shape s) {
  return s == row_shape::balanced
             ? "rows halved recursively"
             : "rows split unevenly as in CATS Algorithm 1 (a first-kind range into a "
               "second-kind lower half and a first-kind upper half, a second-kind range into "
               "quarters of kinds first, first, second, first)";
}

// ---- verification -------------------------------------------------------------------------------

inline double checksum(const grid& g) {
  double s = 0;
  for (int i = 0; i < g.rows(); ++i) {
    const double* r = g.row(i);
    for (int j = 0; j < g.cols(); ++j) s += r[j];
  }
  return s;
}

inline std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Bit-exact comparison of every element: the parallel versions perform the same floating-point
// operations per element, in the same order, as the serial reference.
inline verdict compare_grids(const grid& got, const grid& want) {
  verdict v;
  v.result = "checksum=" + number_text(checksum(got));
  for (int i = 0; i < want.rows(); ++i) {
    const double* a = got.row(i);
    const double* b = want.row(i);
    for (int j = 0; j < want.cols(); ++j) {
      if (!(a[j] == b[j])) {
        v.message = "element (" + std::to_string(i) + ", " + std::to_string(j) + ") is " +
                    number_text(a[j]) + ", the serial reference has " + number_text(b[j]) +
                    " (reference checksum=" + number_text(checksum(want)) + ")";
        return v;
      }
    }
  }
  v.ok = true;
  return v;
}

// The benchmarks that share this decomposition; their -ub variants pass row_shape::unbalanced.
// Parameters the row-split grid benchmarks share (heat, sor, ge and their -ub variants).
inline param_spec grid_rows_param() {
  return param_spec::integer("rows", "grid rows, boundary included (CATS: 1024 to 8192)",
                             {"128", "1024", "8192"}, 3, 1 << 20);
}
inline param_spec grid_cols_param() {
  return param_spec::integer("cols", "grid columns, boundary included (CATS: 512)",
                             {"512", "512", "512"}, 3, 1 << 20);
}
inline param_spec row_cutoff_param() {
  return param_spec::integer("cutoff", "ranges of at most this many rows are leaf tasks (CATS: 8)",
                             {"8", "8", "8"}, 1, 1 << 20);
}
inline param_spec grid_seed_param(const char* what) {
  return param_spec::integer("seed", std::string("splitmix64 seed of the ") + what, {"1", "1", "1"},
                             0, std::int64_t{1} << 62);
}
// Rejects rows x cols grids above 2^28 cells (2 GiB a grid), naming the benchmark's keys.
inline void check_grid_size(const std::string& name, const param_values& p) {
  if (p.integer("rows") * p.integer("cols") > (std::int64_t{1} << 28)) {
    throw usage_error("--set " + name + ".rows, " + name +
                      ".cols: rows x cols must be at most 2^28 cells (2 GiB a grid)");
  }
}

benchmark make_heat_family(row_shape shape);
benchmark make_sor_family(row_shape shape);
benchmark make_ge_family(row_shape shape);

}  // namespace locus_bench::grid_bench
