// mandelbrot: the Mandelbrot benchmark of CATS (seed 002, §4, Table 1: its CPU-bound
// benchmark, on which CATS must cost nothing over random stealing). Computes the escape-time
// image of the Mandelbrot set: for every pixel of a width x height image of the window
// [-2.25, 0.75] x [-1.5, 1.5] (pixel centres), iterate z = z^2 + c from z = 0 until |z|^2 > 4 or
// `max_iter` iterations, and store the iteration count. The image is divided recursively into
// four quadrants (halves of the rows times halves of the columns; only one side is halved when
// the other is already at most `leaf`) down to blocks of at most leaf x leaf pixels, a task per
// quadrant. The work of a block is unknown before it runs and the paper gives no hints, so none
// are passed.
//
// Verified pixel by pixel against a reference image computed in prepare() as one block (each
// count comes from the same floating-point operations in every implementation); the result is the
// total iteration count and the number of pixels that reached max_iter.
//
// oneTBB and OpenMP: the same quadrant tree with tbb::task_group or omp task / taskwait in the
// harness's region (CATS spawns quadrants recursively; no parallel loop over rows or tiles).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <locus/task_group.hpp>

#include "harness/benchmark.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench {

namespace {

constexpr double x_min = -2.25, x_max = 0.75, y_min = -1.5, y_max = 1.5;

struct block {
  int x0, x1, y0, y1;
};

struct problem {
  int width, height, max_iter, leaf;
  std::uint32_t* counts;

  bool is_leaf(const block& b) const { return b.x1 - b.x0 <= leaf && b.y1 - b.y0 <= leaf; }
  // Quadrants in row-major order (two halves when one side is already at most `leaf`).
  int split(const block& b, block (&out)[4]) const {
    const bool xs = b.x1 - b.x0 > leaf, ys = b.y1 - b.y0 > leaf;
    const int xm = xs ? b.x0 + (b.x1 - b.x0) / 2 : b.x1;
    const int ym = ys ? b.y0 + (b.y1 - b.y0) / 2 : b.y1;
    int k = 0;
    out[k++] = {b.x0, xm, b.y0, ym};
    if (xs) out[k++] = {xm, b.x1, b.y0, ym};
    if (ys) out[k++] = {b.x0, xm, ym, b.y1};
    if (xs && ys) out[k++] = {xm, b.x1, ym, b.y1};
    return k;
  }
};

// The escape counts of block b. Out of line: every implementation runs the same code.
[[gnu::noinline]] void mandel_block(const problem& p, const block& b) {
  const double dx = (x_max - x_min) / p.width, dy = (y_max - y_min) / p.height;
  for (int y = b.y0; y < b.y1; ++y) {
    const double ci = y_min + (y + 0.5) * dy;
    std::uint32_t* out = p.counts + static_cast<std::size_t>(y) * static_cast<std::size_t>(p.width);
    for (int x = b.x0; x < b.x1; ++x) {
      const double cr = x_min + (x + 0.5) * dx;
      double zr = 0, zi = 0, zr2 = 0, zi2 = 0;
      int it = 0;
      while (it < p.max_iter && zr2 + zi2 <= 4.0) {
        zi = 2.0 * zr * zi + ci;
        zr = zr2 - zi2 + cr;
        zr2 = zr * zr;
        zi2 = zi * zi;
        ++it;
      }
      out[x] = static_cast<std::uint32_t>(it);
    }
  }
}

void mandel_serial(const problem& p, const block& b) {
  if (p.is_leaf(b)) return mandel_block(p, b);
  block kids[4];
  const int k = p.split(b, kids);
  for (int i = 0; i < k; ++i) mandel_serial(p, kids[i]);
}

void mandel_locus(const problem& p, const block& b) {
  if (p.is_leaf(b)) return mandel_block(p, b);
  block kids[4];
  const int k = p.split(b, kids);
  locus::task_group tg;
  for (int i = 0; i + 1 < k; ++i) tg.run([&p, c = kids[i]] { mandel_locus(p, c); });
  mandel_locus(p, kids[k - 1]);
  tg.wait();
}

#if LOCUS_BENCH_PEERS

void mandel_tbb(const problem& p, const block& b) {
  if (p.is_leaf(b)) return mandel_block(p, b);
  block kids[4];
  const int k = p.split(b, kids);
  tbb::task_group tg;
  for (int i = 0; i + 1 < k; ++i) tg.run([&p, c = kids[i]] { mandel_tbb(p, c); });
  mandel_tbb(p, kids[k - 1]);
  tg.wait();
}

void mandel_omp(const problem* p, const block& b) {
  if (p->is_leaf(b)) return mandel_block(*p, b);
  block kids[4];
  const int k = p->split(b, kids);
  for (int i = 0; i + 1 < k; ++i) {
    const block c = kids[i];
#pragma omp task default(none) firstprivate(p, c)
    mandel_omp(p, c);
  }
  mandel_omp(p, kids[k - 1]);
#pragma omp taskwait
}

#endif

class mandelbrot_instance final : public instance {
 public:
  mandelbrot_instance(int width, int height, int max_iter, int leaf)
      : p_{width, height, max_iter, leaf, nullptr},
        counts_(static_cast<std::size_t>(width) * static_cast<std::size_t>(height)) {
    p_.counts = counts_.data();
    // The reference: the whole image as one block, no decomposition.
    mandel_block(p_, {0, width, 0, height});
    reference_ = counts_;
    reset();
  }

  void reset() override { std::fill(counts_.begin(), counts_.end(), ~std::uint32_t{0}); }

  void run(const run_context& ctx) override {
    const block all{0, p_.width, 0, p_.height};
    switch (ctx.which) {
      case impl::serial:
        mandel_serial(p_, all);
        break;
      case impl::locus:
        mandel_locus(p_, all);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        mandel_tbb(p_, all);
        break;
      case impl::omp:
        mandel_omp(&p_, all);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    std::uint64_t total = 0, inside = 0;
    for (const std::uint32_t c : counts_) {
      total += c;
      inside += c == static_cast<std::uint32_t>(p_.max_iter) ? 1 : 0;
    }
    v.result = "iterations=" + std::to_string(total) + " inside=" + std::to_string(inside);
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i] != reference_[i]) {
        const std::size_t w = static_cast<std::size_t>(p_.width);
        v.message = "pixel (" + std::to_string(i % w) + ", " + std::to_string(i / w) + ") has " +
                    std::to_string(counts_[i]) + " iterations, the serial reference " +
                    std::to_string(reference_[i]);
        return v;
      }
    }
    v.ok = true;
    return v;
  }

 private:
  problem p_;
  std::vector<std::uint32_t> counts_;
  std::vector<std::uint32_t> reference_;
};

}  // namespace

benchmark make_mandelbrot_benchmark() {
  benchmark b;
  b.name = "mandelbrot";
  b.description =
      "CATS Mandelbrot (CPU-bound): escape-time iteration counts of a width x height image of "
      "[-2.25, 0.75] x [-1.5, 1.5], divided recursively into quadrants down to leaf x leaf "
      "pixels. Verified pixel by pixel against a serial image computed as one block.";
  b.params = {
      param_spec::integer("width", "image width in pixels", {"256", "1024", "2048"}, 1, 1 << 16),
      param_spec::integer("height", "image height in pixels", {"256", "1024", "2048"}, 1, 1 << 16),
      param_spec::integer("max_iter", "iterations after which a pixel counts as inside the set",
                          {"100", "500", "1000"}, 1, 1 << 30),
      param_spec::integer("leaf", "cutoff: blocks of at most leaf x leaf pixels are leaf tasks",
                          {"32", "32", "32"}, 1, 1 << 16),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.check = [](const param_values& p) {
    if (p.integer("width") * p.integer("height") > (std::int64_t{1} << 30)) {
      throw usage_error(
          "--set mandelbrot.width, mandelbrot.height: at most 2^30 pixels (4 GiB of counts)");
    }
  };
  b.prepare = [check = b.check](param_values& p) -> std::unique_ptr<instance> {
    check(p);
    return std::make_unique<mandelbrot_instance>(
        static_cast<int>(p.integer("width")), static_cast<int>(p.integer("height")),
        static_cast<int>(p.integer("max_iter")), static_cast<int>(p.integer("leaf")));
  };
  return b;
}

}  // namespace locus_bench
