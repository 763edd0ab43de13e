// matmul: cache-oblivious SGEMM, C += A * B for square float matrices of order n (a power of
// two), row-major with `pad` extra floats per row. The product recursively splits every matrix
// into four quadrants and computes the eight quadrant products in two phases of four parallel
// calls (phase k: C_ij += A_ik * B_kj for all i, j), down to leaf x leaf products by a
// register-blocked kernel (dense_common.hpp).
//
// Seed 000 (ADWS, Sec. 6.2 "MatMul"): SGEMM by cache-oblivious 4-way division with a 64 x 64
// cutoff and a 128-byte padding per row against cache conflicts of power-of-two sizes (here
// `leaf` and `pad`, same defaults); every child carries a work hint equal to its flop count and
// every phase's task group a work hint (the sum) and a size hint (its working set: the halves of
// A and B it reads and all of C, 2 n^2 floats for an n x n call). Seed 001 (NUMA-WS): its
// `matmul` is the same eight-way divide and conquer without temporaries (4k x 4k there; matmul-z
// is the blocked Z-Morton version).
//
// Locality model (locus-bench --locality): every leaf product (serial and locus) declares its
// blocks of A and B (read) and C (written). One multiplication, so no mapping stability.
//
// Places (seed 001's matmul): with several places the top call's four quadrant products of each
// phase carry place hints, quadrant q at placement::place_of_part(q, 4, places), and A, B and C
// are bound to the places in four bands of rows, band q where quadrant q's product runs (half of
// that quadrant's rows: row-major quadrants are not contiguous, the reason for matmul-z).
//
// Parameters: n (order; small 512, medium 2048, large 8192), leaf (kernel size, 64), pad (floats
// per row, 32 = 128 bytes). Inputs: entries uniform in {-1, 0, 1} (splitmix64, seeds 1 and 2),
// C starts at zero; the result is exact, verified by Freivalds' check, per-block samples and the
// sum of C (see dense_common.hpp).
#include <cstdint>
#include <string>

#include "benchmarks/dense_common.hpp"
#include "benchmarks/placement.hpp"
#include "harness/benchmark.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench {

namespace {

using dense::cview;
using dense::dim;
using dense::view;

// places > 1 only in the top call of a run: its quadrant products are then hinted to the places
// of C's quadrants (dense::quadrant_phases); everything below inherits them.
void matmul_locus(dim s, cview a, cview b, view c, dim leaf, int places = 1) {
  if (s <= leaf) {
    dense::declare_leaf(s, a.p, a.ld, b.p, b.ld, c.p, c.ld);
    dense::kernel(s, a.p, a.ld, b.p, b.ld, c.p, c.ld);
    return;
  }
  dense::quadrant_phases(s, places, [=](int i, int k, int j, dim h) {
    matmul_locus(h, a.quad(i, k, h), b.quad(k, j, h), c.quad(i, j, h), leaf);
  });
}

#if LOCUS_BENCH_PEERS

void matmul_tbb(dim s, cview a, cview b, view c, dim leaf) {
  if (s <= leaf) {
    dense::kernel(s, a.p, a.ld, b.p, b.ld, c.p, c.ld);
    return;
  }
  const dim h = s / 2;
  for (int k = 0; k < 2; ++k) {
    tbb::task_group tg;
    const cview a0 = a.quad(0, k, h), a1 = a.quad(1, k, h);
    const cview b0 = b.quad(k, 0, h), b1 = b.quad(k, 1, h);
    tg.run([=] { matmul_tbb(h, a0, b0, c.quad(0, 0, h), leaf); });
    tg.run([=] { matmul_tbb(h, a0, b1, c.quad(0, 1, h), leaf); });
    tg.run([=] { matmul_tbb(h, a1, b0, c.quad(1, 0, h), leaf); });
    matmul_tbb(h, a1, b1, c.quad(1, 1, h), leaf);
    tg.wait();
  }
}

void matmul_omp(dim s, cview a, cview b, view c, dim leaf) {
  if (s <= leaf) {
    dense::kernel(s, a.p, a.ld, b.p, b.ld, c.p, c.ld);
    return;
  }
  const dim h = s / 2;
  for (int k = 0; k < 2; ++k) {
    const cview a0 = a.quad(0, k, h), a1 = a.quad(1, k, h);
    const cview b0 = b.quad(k, 0, h), b1 = b.quad(k, 1, h);
    const view c00 = c.quad(0, 0, h), c01 = c.quad(0, 1, h), c10 = c.quad(1, 0, h);
#pragma omp task default(none) firstprivate(h, a0, b0, c00, leaf)
    matmul_omp(h, a0, b0, c00, leaf);
#pragma omp task default(none) firstprivate(h, a0, b1, c01, leaf)
    matmul_omp(h, a0, b1, c01, leaf);
#pragma omp task default(none) firstprivate(h, a1, b0, c10, leaf)
    matmul_omp(h, a1, b0, c10, leaf);
    matmul_omp(h, a1, b1, c.quad(1, 1, h), leaf);
#pragma omp taskwait
  }
}

#endif

class matmul_instance final : public instance {
 public:
  matmul_instance(dim n, dim leaf, dim pad)
      : n_(n),
        leaf_(leaf),
        ld_(n + pad),
        a8_(dense::random_ternary(n, 1)),
        b8_(dense::random_ternary(n, 2)),
        a_(static_cast<std::size_t>(n * ld_)),
        b_(static_cast<std::size_t>(n * ld_)),
        c_(static_cast<std::size_t>(n * ld_)) {
    a_.fill(0);
    b_.fill(0);
    dense::store(a8_, n_, a_.data(), ld_);
    dense::store(b8_, n_, b_.data(), ld_);
  }

  void reset() override { c_.fill(0); }

  void place(data_placement& where) override {
    for (auto* m : {&a_, &b_, &c_}) placement::bind_parts(where, m->data(), m->size(), 4);
  }

  void run(const run_context& ctx) override {
    const cview a{a_.data(), ld_}, b{b_.data(), ld_};
    const view c{c_.data(), ld_};
    switch (ctx.which) {
      case impl::serial:
        dense::matmul_rowmajor_serial(n_, a, b, c, leaf_);
        break;
      case impl::locus:
        matmul_locus(n_, a, b, c, leaf_, ctx.places);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        matmul_tbb(n_, a, b, c, leaf_);
        break;
      case impl::omp:
        matmul_omp(n_, a, b, c, leaf_);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    const auto r = dense::check_product(a8_, b8_, n_, c_.data(), ld_, leaf_);
    return {r.ok, r.result, r.message};
  }

 private:
  dim n_, leaf_, ld_;
  std::vector<std::int8_t> a8_, b8_;
  dense::aligned_buffer<float> a_, b_, c_;
};

}  // namespace

benchmark make_matmul_benchmark() {
  benchmark b;
  b.name = "matmul";
  b.description =
      "cache-oblivious SGEMM C += A*B, row-major: four quadrant products in each of two phases, "
      "in parallel, down to leaf x leaf kernels. Inputs in {-1,0,1}: verified exactly "
      "(Freivalds, per-block samples, sum).";
  b.params = {
      param_spec::integer("n", "matrix order, a power of two", {"512", "2048", "8192"}, 8, 16384),
      param_spec::integer("leaf", "order of the leaf products (the kernel), a power of two",
                          {"64", "64", "64"}, 8, 1024),
      param_spec::integer("pad", "floats added to each row (32 = ADWS's 128 bytes)",
                          {"32", "32", "32"}, 0, 1024),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.check = [](const param_values& p) { dense::check_orders(p, "matmul", "leaf"); };
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    dense::check_orders(p, "matmul", "leaf");
    return std::make_unique<matmul_instance>(p.integer("n"), p.integer("leaf"), p.integer("pad"));
  };
  return b;
}

}  // namespace locus_bench
