// heat2d: the Heat2D benchmark of ADWS (seed 000, §6.2): a five-point stencil with double
// buffering on an n x n grid of doubles, `iters` iterations. Every iteration is parallelized by
// recursively dividing the square interior into four equally sized subgrids (halves of the rows
// times halves of the columns; with n not a power of two the halves differ by one) down to leaves
// of at most `leaf` x `leaf` cells (the paper's cutoff: 64 x 64). Taken from the paper as well:
// 50 iterations (large size), a padding of 256 bytes at the end of every row, and the hints ADWS
// needs: every group carries a work hint equal to its area and a size hint equal to the bytes of
// its block in both grids (2 x 8 x area), and every child a work hint equal to its own area. The
// same task tree is built every iteration, which is what gives Heat2D its iterative locality.
//
// The grid is n x n including a fixed boundary ring; the (n-2)^2 interior cells are updated by
// one explicit step of the heat equation, next = u + a (N + S + W + E - 4u) written as
// u + a (N - 2u + S) + a (W - 2u + E) with a = 0.2 (heat_step_block in grid_common.hpp). Input:
// every cell, boundary included, uniform in [0, 1) from splitmix64(seed), row by row. n = 360
// is two 1 MB grids (the ADWS cache experiments' size).
//
// The locus version is a two-dimensional locus::parallel_for over the interior (grain2d leaf x
// leaf, item_size of both grids' cell), which cuts the same leaves in the same order, halving the
// rows and then each half's columns where this recursion cuts quadrants (every group hinted with
// its area and bytes as here); `split=tasks` runs the quadrant recursion written with task groups.
//
// Locality model (locus-bench --locality): every leaf of the serial and locus versions declares
// the rows of its block it reads (with the halo) and writes, and its block as its identity for
// mapping stability; every iteration is one model iteration. The serial version visits the
// leaves in the same order as a one-worker locus run.
//
// Verified bit for bit against a reference computed in prepare() by plain loops over the whole
// interior (no decomposition): every implementation computes each cell with the same operations,
// so any lost, repeated or misplaced leaf shows.
#include <cstdint>
#include <memory>
#include <string>

#include <locus/algorithms.hpp>
#include <locus/locality.hpp>
#include <locus/runtime.hpp>
#include <locus/task_group.hpp>

#include "benchmarks/grid_common.hpp"
#include "harness/benchmark.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench {

namespace {

using grid_bench::grid;

constexpr double alpha = 0.2;

struct block {
  int r0, r1, c0, c1;
  double area() const { return static_cast<double>(r1 - r0) * static_cast<double>(c1 - c0); }
};

struct problem {
  const grid* cur;
  grid* next;
  int leaf;

  bool is_leaf(const block& b) const { return b.r1 - b.r0 <= leaf && b.c1 - b.c0 <= leaf; }
  void compute(const block& b) const {
    grid_bench::heat_step_block(*cur, *next, b.r0, b.r1, b.c0, b.c1, alpha, alpha);
  }
  // The four quadrants of b (two halves when one side is already at most `leaf`); returns how
  // many. Quadrant order: top-left, top-right, bottom-left, bottom-right.
  int split(const block& b, block (&out)[4]) const {
    const bool rows = b.r1 - b.r0 > leaf, cols = b.c1 - b.c0 > leaf;
    const int rm = rows ? b.r0 + (b.r1 - b.r0) / 2 : b.r1;
    const int cm = cols ? b.c0 + (b.c1 - b.c0) / 2 : b.c1;
    int k = 0;
    out[k++] = {b.r0, rm, b.c0, cm};
    if (cols) out[k++] = {b.r0, rm, cm, b.c1};
    if (rows) out[k++] = {rm, b.r1, b.c0, cm};
    if (rows && cols) out[k++] = {rm, b.r1, cm, b.c1};
    return k;
  }
};

// The leaf's footprint: cur rows r0-1 .. r1 and columns c0-1 .. c1 (the stencil's halo; the four
// corners are not read but share lines with cells that are), next rows r0 .. r1-1.
void declare_leaf(const problem& p, const block& b) {
  namespace loc = locus::locality;
  const auto stride = static_cast<std::ptrdiff_t>(p.cur->stride() * sizeof(double));
  const auto cols = static_cast<std::size_t>(b.c1 - b.c0);
  const auto rows = static_cast<std::size_t>(b.r1 - b.r0);
  loc::leaf(static_cast<std::uint64_t>(b.r0) << 32 | static_cast<std::uint32_t>(b.c0));
  loc::touch_read_rows(p.cur->row(b.r0 - 1) + (b.c0 - 1), (cols + 2) * sizeof(double), rows + 2,
                       stride);
  loc::touch_write_rows(p.next->row(b.r0) + b.c0, cols * sizeof(double), rows, stride);
}

void step_serial(const problem& p, const block& b) {
  if (p.is_leaf(b)) {
    declare_leaf(p, b);
    return p.compute(b);
  }
  block kids[4];
  const int k = p.split(b, kids);
  for (int i = 0; i < k; ++i) step_serial(p, kids[i]);
}

void step_locus_loop(const problem& p, const block& b) {
  locus::parallel_for(
      locus::range2d{b.r0, b.r1, b.c0, b.c1},
      [&p](const locus::range2d<int>& r) {
        const block leaf{r.row_begin, r.row_end, r.col_begin, r.col_end};
        declare_leaf(p, leaf);
        p.compute(leaf);
      },
      locus::grain2d{static_cast<std::size_t>(p.leaf), static_cast<std::size_t>(p.leaf)},
      locus::item_size{2 * sizeof(double)});
}

void step_locus(const problem& p, const block& b) {
  if (p.is_leaf(b)) {
    declare_leaf(p, b);
    return p.compute(b);
  }
  block kids[4];
  const int k = p.split(b, kids);
  locus::task_group tg{locus::work_hint{b.area()},
                       locus::size_hint{static_cast<std::size_t>(2 * sizeof(double) * b.area())}};
  for (int i = 0; i + 1 < k; ++i) {
    tg.run([&p, c = kids[i]] { step_locus(p, c); }, locus::work_hint{kids[i].area()});
  }
  step_locus(p, kids[k - 1]);
  tg.wait();
}

#if LOCUS_BENCH_PEERS

void step_tbb(const problem& p, const block& b) {
  if (p.is_leaf(b)) return p.compute(b);
  block kids[4];
  const int k = p.split(b, kids);
  tbb::task_group tg;
  for (int i = 0; i + 1 < k; ++i) tg.run([&p, c = kids[i]] { step_tbb(p, c); });
  step_tbb(p, kids[k - 1]);
  tg.wait();
}

void step_omp(const problem* p, const block& b) {
  if (p->is_leaf(b)) return p->compute(b);
  block kids[4];
  const int k = p->split(b, kids);
  for (int i = 0; i + 1 < k; ++i) {
    const block c = kids[i];
#pragma omp task default(none) firstprivate(p, c)
    step_omp(p, c);
  }
  step_omp(p, kids[k - 1]);
#pragma omp taskwait
}

#endif

class heat2d_instance final : public instance {
 public:
  heat2d_instance(int n, int iters, int leaf, int pad_bytes, std::uint64_t seed, bool by_hand)
      : n_(n), iters_(iters), leaf_(leaf), by_hand_(by_hand), initial_(n, n, pad_bytes / 8) {
    grid_bench::fill_uniform(initial_, seed, 0.0, 1.0);
    buf_[0] = initial_;
    buf_[1] = initial_;
    // The reference: plain loops over the whole interior, independent of the decomposition.
    for (int t = 0; t < iters_; ++t) {
      grid_bench::heat_step_block(buf_[t % 2], buf_[(t + 1) % 2], 1, n_ - 1, 1, n_ - 1, alpha,
                                  alpha);
    }
    reference_ = result();
    reset();
  }

  void reset() override {
    buf_[0].assign(initial_);
    buf_[1].assign(initial_);
  }

  void run(const run_context& ctx) override {
    const block all{1, n_ - 1, 1, n_ - 1};
    for (int t = 0; t < iters_; ++t) {
      const problem p{&buf_[t % 2], &buf_[(t + 1) % 2], leaf_};
      switch (ctx.which) {
        case impl::serial:
          ctx.step([&] { step_serial(p, all); });
          locus::next_iteration();
          break;
        case impl::locus:
          if (by_hand_) {
            ctx.step([&] { step_locus(p, all); });
          } else {
            ctx.step([&] { step_locus_loop(p, all); });
          }
          locus::next_iteration();
          break;
#if LOCUS_BENCH_PEERS
        case impl::tbb:
          ctx.step([&] { step_tbb(p, all); });
          break;
        case impl::omp:
          ctx.step([&] { step_omp(&p, all); });
          break;
#endif
        default:
          return;
      }
    }
  }

  verdict verify() const override {
    return grid_bench::compare_grids(result(), reference_);
  }

 private:
  const grid& result() const {
    return buf_[iters_ % 2];
  }

  int n_, iters_, leaf_;
  bool by_hand_;
  grid initial_;
  grid buf_[2];
  grid reference_;
};

void check_heat2d(const param_values& p) {
  if (p.integer("pad") % 8 != 0) {
    throw usage_error("--set heat2d.pad: " + p.text("pad") +
                      " is not a multiple of 8 (the padding is whole doubles)");
  }
}

}  // namespace

benchmark make_heat2d_benchmark() {
  benchmark b;
  b.name = "heat2d";
  b.description =
      "ADWS Heat2D: five-point heat stencil with double buffering on an n x n grid, each "
      "iteration divided recursively into four subgrids down to leaf x leaf, with work (area) "
      "and size (bytes of both grids) hints. Verified bit for bit against plain serial loops.";
  b.params = {
      param_spec::integer("n",
                          "grid side, boundary ring included (two n x n grids of doubles; n = 360 "
                          "is 2 x 1 MB)",
                          {"360", "2048", "8192"}, 3, 16384),
      param_spec::integer("iters", "iterations (time steps); ADWS timed 50", {"10", "20", "50"}, 1,
                          100000),
      param_spec::integer("leaf", "cutoff: blocks of at most leaf x leaf cells are leaf tasks",
                          {"64", "64", "64"}, 1, 1 << 20),
      param_spec::integer("pad", "padding at the end of every row, in bytes (multiple of 8)",
                          {"256", "256", "256"}, 0, 1 << 16),
      param_spec::integer("seed", "splitmix64 seed of the initial grid", {"1", "1", "1"}, 0,
                          std::int64_t{1} << 62),
      param_spec::choice("split",
                         "the locus version's decomposition: a two-dimensional parallel_for "
                         "(loop) or the quadrant recursion written with task groups (tasks)",
                         {"loop", "loop", "loop"}, {"loop", "tasks"}),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.steps = true;
  b.check = check_heat2d;
  b.unit = "cell update";
  b.work_units = [](const param_values& p) {
    const double interior = static_cast<double>(p.integer("n") - 2);
    return interior * interior * static_cast<double>(p.integer("iters"));
  };
  b.working_set_bytes = [](const param_values& p) {  // both grids, padding included
    const double n = static_cast<double>(p.integer("n"));
    return 2 * n * (n * sizeof(double) + static_cast<double>(p.integer("pad")));
  };
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    check_heat2d(p);
    return std::make_unique<heat2d_instance>(
        static_cast<int>(p.integer("n")), static_cast<int>(p.integer("iters")),
        static_cast<int>(p.integer("leaf")), static_cast<int>(p.integer("pad")),
        static_cast<std::uint64_t>(p.integer("seed")), p.text("split") == "tasks");
  };
  return b;
}

}  // namespace locus_bench
