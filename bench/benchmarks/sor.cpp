// sor: the SOR benchmark of CATS (seed 002, §4): red-black successive over-relaxation of the
// Laplace equation on a rows x cols grid of doubles with a fixed boundary ring, `iters`
// iterations. An iteration is two sweeps, red cells ((i + j) even) then black cells, each
// updated in place from its four neighbours, which all have the other colour:
//   u = u + omega (0.25 (N + S + W + E) - u).
// Every sweep recursively divides the interior rows (grid_common.hpp's split_rows) down to leaves
// of at most `cutoff` rows; the same task tree is built for every sweep (CATS profiles the first
// iteration and reuses the task identifiers). Within a sweep no cell reads a cell the sweep
// writes, so every schedule computes the serial result bit for bit. sor-ub (sor_ub.cpp) is the
// same computation with the unbalanced branching of the paper's Algorithm 1.
//
// From the paper: 512 columns and 1024 (medium) to 8192 (large) rows, a cutoff of 8 rows. Hints
// for CATS and the multi-level schedulers: a group's size hint is the bytes of its rows plus the
// two halo rows it reads, its work hint (and each child's) the number of cells it updates.
// Input: every cell uniform in [0, 1) from splitmix64(seed), row by row. Verified bit for bit
// against a reference computed in prepare() by plain sweeps over the whole interior (no
// decomposition), so a lost, repeated or misplaced leaf shows.
//
// Locality model (locus-bench --locality): every leaf declares its rows and halo rows read and
// its rows written; every iteration (both sweeps) is an iteration of the model.
//
// oneTBB and OpenMP: every sweep spawns the same tree with tbb::task_group or omp task /
// taskwait in the harness's region (CATS's SOR is recursive spawns, not a parallel loop).
#include <cstdint>
#include <memory>
#include <string>

#include <locus/locality.hpp>

#include "benchmarks/grid_common.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace grid_bench {

namespace {

// Updates the cells of `color` ((i + j) % 2 == color) in rows [lo, hi), columns 1 .. cols-2.
// Out of line: every implementation runs the same machine code.
[[gnu::noinline]] void sor_sweep_rows(grid& g, int lo, int hi, int color, double omega) {
  const int last = g.cols() - 1;
  for (int i = lo; i < hi; ++i) {
    const double* __restrict up = g.row(i - 1);
    const double* __restrict down = g.row(i + 1);
    double* mid = g.row(i);
    for (int j = 1 + (i + 1 + color) % 2; j < last; j += 2) {
      mid[j] += omega * (0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]) - mid[j]);
    }
  }
}

// The locality model's view of a leaf's sweep: its rows and the two halo rows read, its rows
// written in place; the leaf's identity is its first row and colour.
void declare_sweep(const grid& g, int lo, int hi, int color) {
  namespace loc = locus::locality;
  const auto row_bytes = static_cast<std::size_t>(g.cols()) * sizeof(double);
  const auto stride = static_cast<std::ptrdiff_t>(g.stride() * sizeof(double));
  loc::leaf(static_cast<std::uint64_t>(lo) * 2 + static_cast<std::uint64_t>(color));
  loc::touch_read_rows(g.row(lo - 1), row_bytes, static_cast<std::size_t>(hi - lo + 2), stride);
  loc::touch_write_rows(g.row(lo), row_bytes, static_cast<std::size_t>(hi - lo), stride);
}

class sor_instance final : public instance {
 public:
  sor_instance(row_shape shape, int rows, int cols, int iters, double omega, int cutoff,
               std::uint64_t seed)
      : iters_(iters), omega_(omega), initial_(rows, cols) {
    plan_.shape = shape;
    plan_.cutoff = cutoff;
    plan_.first = 1;
    plan_.work_per_row = 0.5 * (cols - 2);
    plan_.bytes_per_row = sizeof(double) * static_cast<std::size_t>(cols);
    plan_.extra_bytes = 2 * sizeof(double) * static_cast<std::size_t>(cols);
    fill_uniform(initial_, seed, 0.0, 1.0);
    g_ = initial_;
    // The reference: plain sweeps over the whole interior, independent of the decomposition.
    for (int t = 0; t < iters_; ++t) {
      for (int color = 0; color < 2; ++color) sor_sweep_rows(g_, 1, rows - 1, color, omega_);
    }
    reference_ = g_;
    reset();
  }

  void reset() override { g_.assign(initial_); }

  void run(const run_context& ctx) override {
    const int rows = g_.rows();
    for (int t = 0; t < iters_; ++t) {
      ctx.step([&] {
        for (int color = 0; color < 2; ++color) {
          const auto leaf = [this, color](int lo, int hi) {
            declare_sweep(g_, lo, hi, color);
            sor_sweep_rows(g_, lo, hi, color, omega_);
          };
          split_rows(ctx.which, plan_, 1, rows - 1, leaf);
        }
      });
      locus::next_iteration();
    }
  }

  verdict verify() const override { return compare_grids(g_, reference_); }

 private:
  row_plan plan_;
  int iters_;
  double omega_;
  grid initial_;
  grid g_;
  grid reference_;
};

}  // namespace

benchmark make_sor_family(row_shape shape) {
  const bool ub = shape == row_shape::unbalanced;
  benchmark b;
  b.name = ub ? "sor-ub" : "sor";
  b.description = std::string("CATS ") + (ub ? "SOR-ub" : "SOR") +
                  ": red-black successive over-relaxation on a rows x cols grid, every sweep's "
                  "interior " +
                  shape_text(shape) +
                  " down to `cutoff` rows, the same task tree every sweep. Verified bit for bit "
                  "against plain serial sweeps.";
  b.params = {
      grid_rows_param(),
      grid_cols_param(),
      param_spec::integer("iters", "iterations (a red and a black sweep each)",
                          {"10", "300", "300"}, 1, 1000000),
      param_spec::real("omega", "relaxation factor", {"1.5", "1.5", "1.5"}, 0.01, 1.99),
      row_cutoff_param(),
      grid_seed_param("initial grid"),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.steps = true;
  b.check = [name = b.name](const param_values& p) { check_grid_size(name, p); };
  b.prepare = [shape, check = b.check](param_values& p) -> std::unique_ptr<instance> {
    check(p);
    return std::make_unique<sor_instance>(
        shape, static_cast<int>(p.integer("rows")), static_cast<int>(p.integer("cols")),
        static_cast<int>(p.integer("iters")), p.real("omega"),
        static_cast<int>(p.integer("cutoff")), static_cast<std::uint64_t>(p.integer("seed")));
  };
  return b;
}

}  // namespace grid_bench

benchmark make_sor_benchmark() {
  return grid_bench::make_sor_family(grid_bench::row_shape::balanced);
}

}  // namespace locus_bench
