// matmul-z: matmul (see matmul.cpp) on the blocked Z-Morton layout of seed 001 (NUMA-WS, Sec.
// III-C, Fig. 6b, benchmark "matmul-z"): C += A * B for square float matrices of order n (a power
// of two) cut into leaf x leaf blocks that are stored along the recursive Z curve, each block
// row-major. Every quadrant of a Z matrix is then one contiguous quarter of it, so the recursion
// passes plain pointers and the leaf kernel reads whole contiguous blocks. The recursion is
// matmul's: eight quadrant products in two phases of four parallel calls, the same work hints
// (each child its h^3) and size hints (the phase's working set, 2 n^2 floats), down to one
// kernel call per block product.
//
// The layout is locus::z_layout (include/locus/zmatrix.hpp). The conversions between row-major
// and it are not timed: the inputs are converted with locus::to_z when prepared, the result is
// read back with locus::from_z when verified.
//
// Places (seed 001's matmul-z): with several places the top call's four quadrant products of
// each phase carry place hints, quadrant q at placement::place_of_part(q, 4, places), and A, B
// and C are bound to the places by quadrant (a contiguous quarter each), quadrant q where its
// product runs. Locality model (locus-bench --locality): every leaf product declares its blocks.
//
// Parameters: n (order; small 512, medium 2048, large 8192), leaf (block order = kernel size, 64;
// NUMA-WS ran 4k x 4k with 32 x 32 base cases). Inputs as in matmul: entries uniform in
// {-1, 0, 1} (splitmix64, seeds 1 and 2), C starts at zero, verified exactly (dense_common.hpp).
#include <cstdint>
#include <string>

#include <locus/zmatrix.hpp>

#include "benchmarks/dense_common.hpp"
#include "benchmarks/placement.hpp"
#include "harness/benchmark.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench {

namespace {

using dense::dim;

// Quadrant (i, j) of an s x s Z matrix whose quadrants hold q = (s/2)^2 floats each (what
// locus::z_layout::quadrant_offset computes, inlined into the recursion without its checks).
template <class T>
T* zq(T* m, int i, int j, dim q) {
  return m + (2 * i + j) * q;
}

// places > 1 only in the top call of a run: the products for C's quadrant q (the Z matrix's
// part q, bound to that place) are then hinted to its place (dense::quadrant_phases).
void matmul_z_locus(dim s, const float* a, const float* b, float* c, dim leaf, int places = 1) {
  if (s <= leaf) {
    dense::declare_leaf(s, a, s, b, s, c, s);
    dense::kernel(s, a, s, b, s, c, s);
    return;
  }
  const dim q = (s / 2) * (s / 2);
  dense::quadrant_phases(s, places, [=](int i, int k, int j, dim h) {
    matmul_z_locus(h, zq(a, i, k, q), zq(b, k, j, q), zq(c, i, j, q), leaf);
  });
}

#if LOCUS_BENCH_PEERS

void matmul_z_tbb(dim s, const float* a, const float* b, float* c, dim leaf) {
  if (s <= leaf) {
    dense::kernel(s, a, s, b, s, c, s);
    return;
  }
  const dim h = s / 2, q = h * h;
  for (int k = 0; k < 2; ++k) {
    tbb::task_group tg;
    const float *a0 = zq(a, 0, k, q), *a1 = zq(a, 1, k, q);
    const float *b0 = zq(b, k, 0, q), *b1 = zq(b, k, 1, q);
    tg.run([=] { matmul_z_tbb(h, a0, b0, zq(c, 0, 0, q), leaf); });
    tg.run([=] { matmul_z_tbb(h, a0, b1, zq(c, 0, 1, q), leaf); });
    tg.run([=] { matmul_z_tbb(h, a1, b0, zq(c, 1, 0, q), leaf); });
    matmul_z_tbb(h, a1, b1, zq(c, 1, 1, q), leaf);
    tg.wait();
  }
}

void matmul_z_omp(dim s, const float* a, const float* b, float* c, dim leaf) {
  if (s <= leaf) {
    dense::kernel(s, a, s, b, s, c, s);
    return;
  }
  const dim h = s / 2, q = h * h;
  for (int k = 0; k < 2; ++k) {
    const float *a0 = zq(a, 0, k, q), *a1 = zq(a, 1, k, q);
    const float *b0 = zq(b, k, 0, q), *b1 = zq(b, k, 1, q);
    float *c00 = zq(c, 0, 0, q), *c01 = zq(c, 0, 1, q), *c10 = zq(c, 1, 0, q);
#pragma omp task default(none) firstprivate(h, a0, b0, c00, leaf)
    matmul_z_omp(h, a0, b0, c00, leaf);
#pragma omp task default(none) firstprivate(h, a0, b1, c01, leaf)
    matmul_z_omp(h, a0, b1, c01, leaf);
#pragma omp task default(none) firstprivate(h, a1, b0, c10, leaf)
    matmul_z_omp(h, a1, b0, c10, leaf);
    matmul_z_omp(h, a1, b1, zq(c, 1, 1, q), leaf);
#pragma omp taskwait
  }
}

#endif

class matmul_z_instance final : public instance {
 public:
  matmul_z_instance(dim n, dim leaf)
      : n_(n),
        leaf_(leaf),
        layout_(static_cast<std::size_t>(n), static_cast<std::size_t>(leaf)),
        a8_(dense::random_ternary(n, 1)),
        b8_(dense::random_ternary(n, 2)),
        a_(layout_.size()),
        b_(layout_.size()),
        c_(layout_.size()) {
    dense::store(a8_, layout_, a_.data());
    dense::store(b8_, layout_, b_.data());
  }

  void reset() override { c_.fill(0); }

  void place(data_placement& where) override {
    for (auto* m : {&a_, &b_, &c_}) placement::bind_parts(where, m->data(), m->size(), 4);
  }

  void run(const run_context& ctx) override {
    switch (ctx.which) {
      case impl::serial:
        dense::matmul_z_serial(n_, a_.data(), b_.data(), c_.data(), leaf_);
        break;
      case impl::locus:
        matmul_z_locus(n_, a_.data(), b_.data(), c_.data(), leaf_, ctx.places);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        matmul_z_tbb(n_, a_.data(), b_.data(), c_.data(), leaf_);
        break;
      case impl::omp:
        matmul_z_omp(n_, a_.data(), b_.data(), c_.data(), leaf_);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    const auto r = dense::check_product(a8_, b8_, layout_, c_.data());
    return {r.ok, r.result, r.message};
  }

 private:
  dim n_, leaf_;
  locus::z_layout layout_;
  std::vector<std::int8_t> a8_, b8_;
  dense::aligned_buffer<float> a_, b_, c_;
};

}  // namespace

benchmark make_matmul_z_benchmark() {
  benchmark b;
  b.name = "matmul-z";
  b.description =
      "matmul on the blocked Z-Morton layout (leaf x leaf row-major blocks along the Z curve; "
      "conversions untimed): eight quadrant products in two parallel phases. Inputs in {-1,0,1}: "
      "verified exactly (Freivalds, per-block samples, sum).";
  b.params = {
      param_spec::integer("n", "matrix order, a power of two", {"512", "2048", "8192"}, 8, 16384),
      param_spec::integer("leaf", "order of the Z-layout blocks and of the kernel, a power of two",
                          {"64", "64", "64"}, 8, 1024),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.check = [](const param_values& p) { dense::check_orders(p, "matmul-z", "leaf"); };
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    dense::check_orders(p, "matmul-z", "leaf");
    return std::make_unique<matmul_z_instance>(p.integer("n"), p.integer("leaf"));
  };
  return b;
}

}  // namespace locus_bench
