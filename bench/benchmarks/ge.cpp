// ge: the GE benchmark of CATS (seed 002, §4): Gaussian elimination (an in-place LU
// factorisation without pivoting) of an n x n matrix of doubles. Pivot step k eliminates column
// k from rows k+1 .. n-1:
//   l = a[i][k] / a[k][k];  a[i][k] = l;  a[i][j] -= l * a[k][j]  for j > k,
// the steps one after another, each parallel over rows: the whole row range [0, n) is divided
// recursively (grid_common.hpp's split_rows) down to leaves of at most `cutoff` rows, and the
// ranges whose rows are all at most k are skipped, so every step's tree is a pruned copy of the
// same tree and a row always belongs to the same leaf. ge-ub (ge_ub.cpp) is the same
// computation with the unbalanced branching of the paper's Algorithm 1.
//
// From the paper: a cutoff of 8 rows and a 1024 x 1024 matrix (vectorised, that takes only
// 0.1 s serially here, so medium is 1536 and large 2048). Hints for CATS and the multi-level
// schedulers: a group's size hint is the bytes of the trailing part of its live rows plus the
// pivot row, its work hint (and each child's) the number of elements it updates.
//
// Input: a[i][j] uniform in [-1, 1) from splitmix64(seed), row by row, plus n on the diagonal:
// strictly diagonally dominant, so elimination without pivoting is stable. Every element sees
// the same operations in the same order whatever the schedule: verified bit for bit against a
// reference computed in prepare() by eliminating all rows of a step at once (no decomposition).
//
// Locality model (locus-bench --locality): every leaf declares the pivot row it reads and the
// part of its rows it updates; every pivot step is an iteration.
//
// oneTBB and OpenMP: every pivot step spawns the same pruned tree with tbb::task_group or omp
// task / taskwait in the harness's region (CATS's GE is recursive spawns, not a parallel loop).
#include <cstdint>
#include <memory>
#include <string>

#include <locus/locality.hpp>

#include "benchmarks/grid_common.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace grid_bench {

namespace {

// Pivot step k on rows [lo, hi) (all > k). Out of line: every implementation runs the same code.
[[gnu::noinline]] void ge_eliminate_rows(grid& a, int k, int lo, int hi) {
  const int n = a.cols();
  const double* __restrict pivot = a.row(k);
  for (int i = lo; i < hi; ++i) {
    double* __restrict r = a.row(i);
    const double l = r[k] / pivot[k];
    r[k] = l;
    for (int j = k + 1; j < n; ++j) r[j] -= l * pivot[j];
  }
}

// The locality model's view of a leaf of step k: the pivot row read from column k on, its rows
// updated from column k on; its identity is its first row.
void declare_elimination(const grid& a, int k, int lo, int hi) {
  namespace loc = locus::locality;
  const auto bytes = static_cast<std::size_t>(a.cols() - k) * sizeof(double);
  const auto stride = static_cast<std::ptrdiff_t>(a.stride() * sizeof(double));
  loc::leaf(static_cast<std::uint64_t>(lo));
  loc::touch_read(a.row(k) + k, bytes);
  loc::touch_write_rows(a.row(lo) + k, bytes, static_cast<std::size_t>(hi - lo), stride);
}

class ge_instance final : public instance {
 public:
  ge_instance(row_shape shape, int n, int cutoff, std::uint64_t seed) : initial_(n, n) {
    plan_.shape = shape;
    plan_.cutoff = cutoff;
    fill_uniform(initial_, seed, -1.0, 1.0);
    for (int i = 0; i < n; ++i) initial_.at(i, i) += n;
    a_ = initial_;
    // The reference: each step on all rows below the pivot at once, no decomposition.
    for (int k = 0; k + 1 < n; ++k) ge_eliminate_rows(a_, k, k + 1, n);
    reference_ = a_;
    reset();
  }

  void reset() override { a_.assign(initial_); }

  void run(const run_context& ctx) override {
    const int n = a_.rows();
    for (int k = 0; k + 1 < n; ++k) {
      row_plan step = plan_;
      step.first = k + 1;
      step.work_per_row = n - k - 1;
      step.bytes_per_row = sizeof(double) * static_cast<std::size_t>(n - k);
      step.extra_bytes = step.bytes_per_row;
      const auto leaf = [this, k](int lo, int hi) {
        declare_elimination(a_, k, lo, hi);
        ge_eliminate_rows(a_, k, lo, hi);
      };
      split_rows(ctx.which, step, 0, n, leaf);
      locus::next_iteration();
    }
  }

  verdict verify() const override { return compare_grids(a_, reference_); }

 private:
  row_plan plan_;
  grid initial_;
  grid a_;
  grid reference_;
};

}  // namespace

benchmark make_ge_family(row_shape shape) {
  const bool ub = shape == row_shape::unbalanced;
  benchmark b;
  b.name = ub ? "ge-ub" : "ge";
  b.description = std::string("CATS ") + (ub ? "GE-ub" : "GE") +
                  ": Gaussian elimination (LU without pivoting) of a diagonally dominant n x n "
                  "matrix, every pivot step's rows " +
                  shape_text(shape) +
                  " down to `cutoff` rows. Verified bit for bit against plain serial loops.";
  b.params = {
      param_spec::integer("n", "matrix order (CATS: 1024)", {"192", "1536", "2048"}, 1, 16384),
      row_cutoff_param(),
      grid_seed_param("matrix"),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.prepare = [shape](param_values& p) -> std::unique_ptr<instance> {
    return std::make_unique<ge_instance>(shape, static_cast<int>(p.integer("n")),
                                         static_cast<int>(p.integer("cutoff")),
                                         static_cast<std::uint64_t>(p.integer("seed")));
  };
  return b;
}

}  // namespace grid_bench

benchmark make_ge_benchmark() {
  return grid_bench::make_ge_family(grid_bench::row_shape::balanced);
}

}  // namespace locus_bench
