// heat: the Heat benchmark of CATS (seed 002, §4), MIT Cilk's heat: Jacobi iteration of the 2-D
// heat equation u_t = u_xx + u_yy with double buffering on a rows x cols grid of doubles,
// `iters` time steps. Every step recursively divides the interior rows (grid_common.hpp's
// split_rows) down to leaves of at most `cutoff` rows, each leaf updating its rows of the new
// grid from the old one; the same task tree is built every step (CATS profiles the first
// iteration and reuses the task identifiers). heat-ub (heat_ub.cpp) is the same computation with
// the unbalanced branching of the paper's Algorithm 1.
//
// From the paper: a 1024 x 512 grid (Fig. 7, the medium size here), 512 columns and 1024 to 8192
// rows for the scalability runs (8192 is the large size), a cutoff of 8 rows, two grids of
// doubles as the working set. Hints for CATS and the multi-level schedulers: a group's size hint
// is the bytes of its rows in both grids plus the two halo rows it reads, its work hint (and
// each child's) the number of cells it updates.
//
// The update, with the boundary ring fixed: next = u + cx (N - 2u + S) + cy (W - 2u + E), with
// cx = 0.1 and cy = 0.2 (a stable explicit step). Input: every cell, boundary included, uniform
// in [0, 1) from splitmix64(seed), row by row. Verified bit for bit against a reference computed
// in prepare() by plain loops over the whole interior (no decomposition), so a lost, repeated
// or misplaced leaf shows.
//
// Places (NUMA-WS, seed 001 §V, whose heat this also is): with several places the interior rows
// are cut into one part per place at the top of every step, part k hinted to place k, and both
// grids' rows are bound to the place of their part (grid_common.hpp's split_rows_by_place).
//
// oneTBB and OpenMP: every step spawns the same tree (without places) with tbb::task_group or
// omp task / taskwait in the harness's region, as MIT Cilk's heat spawns it; no parallel loop.
//
// Locality model (locus-bench --locality): every leaf declares the rows of the old grid it reads
// (its rows and the two halo rows) and the rows of the new one it writes, with the leaf's first
// row as its identity; every step is an iteration.
#include <cstdint>
#include <memory>
#include <string>

#include <locus/locality.hpp>
#include <locus/runtime.hpp>

#include "benchmarks/grid_common.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace grid_bench {

namespace {

constexpr double cx = 0.1, cy = 0.2;

void declare_leaf(const grid& cur, const grid& next, int lo, int hi) {
  namespace loc = locus::locality;
  const auto row_bytes = static_cast<std::size_t>(cur.cols()) * sizeof(double);
  const auto stride = static_cast<std::ptrdiff_t>(cur.stride() * sizeof(double));
  const auto rows = static_cast<std::size_t>(hi - lo);
  loc::leaf(static_cast<std::uint64_t>(lo));
  loc::touch_read_rows(cur.row(lo - 1), row_bytes, rows + 2, stride);
  loc::touch_write_rows(next.row(lo), row_bytes, rows, stride);
}

class heat_instance final : public instance {
 public:
  heat_instance(row_shape shape, int rows, int cols, int iters, int cutoff, std::uint64_t seed)
      : iters_(iters), initial_(rows, cols) {
    plan_.shape = shape;
    plan_.cutoff = cutoff;
    plan_.first = 1;
    plan_.work_per_row = cols - 2;
    plan_.bytes_per_row = 2 * sizeof(double) * static_cast<std::size_t>(cols);
    plan_.extra_bytes = 2 * sizeof(double) * static_cast<std::size_t>(cols);
    fill_uniform(initial_, seed, 0.0, 1.0);
    buf_[0] = initial_;
    buf_[1] = initial_;
    // The reference: plain loops over the whole interior, independent of the decomposition.
    for (int t = 0; t < iters_; ++t) {
      heat_step_block(buf_[t % 2], buf_[(t + 1) % 2], 1, rows - 1, 1, cols - 1, cx, cy);
    }
    reference_ = result();
    reset();
  }

  void reset() override {
    buf_[0].assign(initial_);
    buf_[1].assign(initial_);
  }

  void run(const run_context& ctx) override {
    const int rows = initial_.rows(), cols = initial_.cols();
    for (int t = 0; t < iters_; ++t) {
      const grid& cur = buf_[t % 2];
      grid& next = buf_[(t + 1) % 2];
      const auto leaf = [&cur, &next, cols](int lo, int hi) {
        declare_leaf(cur, next, lo, hi);
        heat_step_block(cur, next, lo, hi, 1, cols - 1, cx, cy);
      };
      ctx.step([&] {
        if (ctx.which == impl::locus) {
          split_rows_by_place(plan_, 1, rows - 1, ctx.places, leaf);
        } else {
          split_rows(ctx.which, plan_, 1, rows - 1, leaf);
        }
      });
      locus::next_iteration();
    }
  }

  void place(data_placement& where) override {
    const int rows = initial_.rows();
    bind_rows_by_place(where, buf_[0], 1, rows - 1);
    bind_rows_by_place(where, buf_[1], 1, rows - 1);
  }

  verdict verify() const override { return compare_grids(result(), reference_); }

 private:
  const grid& result() const { return buf_[iters_ % 2]; }

  row_plan plan_;
  int iters_;
  grid initial_;
  grid buf_[2];
  grid reference_;
};

}  // namespace

benchmark make_heat_family(row_shape shape) {
  const bool ub = shape == row_shape::unbalanced;
  benchmark b;
  b.name = ub ? "heat-ub" : "heat";
  b.description =
      std::string("CATS ") + (ub ? "Heat-ub" : "Heat") +
      ": Jacobi iteration of the 2-D heat equation with double buffering on a rows x cols grid, "
      "every step's interior " +
      shape_text(shape) +
      " down to `cutoff` rows, the same task tree every step. Verified bit for bit against plain "
      "serial loops.";
  b.params = {
      grid_rows_param(),
      grid_cols_param(),
      param_spec::integer("iters", "time steps", {"10", "500", "500"}, 1, 1000000),
      row_cutoff_param(),
      grid_seed_param("initial grid"),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.steps = true;
  b.check = [name = b.name](const param_values& p) { check_grid_size(name, p); };
  b.prepare = [shape, check = b.check](param_values& p) -> std::unique_ptr<instance> {
    check(p);
    return std::make_unique<heat_instance>(
        shape, static_cast<int>(p.integer("rows")), static_cast<int>(p.integer("cols")),
        static_cast<int>(p.integer("iters")), static_cast<int>(p.integer("cutoff")),
        static_cast<std::uint64_t>(p.integer("seed")));
  };
  return b;
}

}  // namespace grid_bench

benchmark make_heat_benchmark() {
  return grid_bench::make_heat_family(grid_bench::row_shape::balanced);
}

}  // namespace locus_bench
