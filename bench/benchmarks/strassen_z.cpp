// strassen-z: strassen (see strassen.cpp) on the blocked Z-Morton layout of seed 001 (NUMA-WS,
// Sec. III-C and V, "strassen-z"): matrices of order n (a power of two) cut into leaf x leaf
// row-major blocks stored along the recursive Z curve. A quadrant is a contiguous quarter, so
// Strassen's operand sums, its temporaries and the quadrant updates are plain loops over
// contiguous floats, and the temporaries are Z matrices themselves. Same recursion, cutoff and
// hints as strassen: seven parallel products with work hints h^3 and a size hint of
// (3 n^2 + 7 (n/2)^2) floats, four parallel quadrant updates, and the classical Z-layout product
// of matmul-z at and below order `cutoff`. With several places the top call's products and
// quadrant updates carry place hints (dense_common.hpp) and A, B and C are bound to the places by
// quadrant (a quadrant is a contiguous quarter), quadrant k where its update runs.
//
// Locality model (locus-bench --locality): the operand sums, the zeroing of each product, the
// quadrant updates and every leaf product of the classical part declare what they read and write.
//
// Peers: strassen's, the same recursion through dense::fork_join with a tbb::task_group or omp
// task + taskwait, without hints.
//
// The layout is locus::z_layout (include/locus/zmatrix.hpp); the conversions to and from
// row-major (locus::to_z, locus::from_z) are not timed (prepare and verify).
//
// Parameters: n (order; small 512, medium 2048, large 8192, NUMA-WS's 8k), cutoff (64), leaf
// (Z block and kernel order, 64). Inputs: entries uniform in {-1, 0, 1} (splitmix64, seeds 1 and
// 2), C starts at zero; exact result verified by Freivalds' check, per-block samples and the sum
// of C (dense_common.hpp).
#include <cstdint>
#include <string>

#include <locus/zmatrix.hpp>

#include "benchmarks/dense_common.hpp"
#include "benchmarks/placement.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace {

using dense::cview;
using dense::dim;
using dense::view;

class strassen_z_instance final : public instance {
 public:
  strassen_z_instance(dim n, dim cutoff, dim leaf)
      : n_(n),
        cutoff_(cutoff),
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
    // A Z matrix is swept element-wise as one row of n^2 floats.
    const cview a{a_.data(), n_ * n_}, b{b_.data(), n_ * n_};
    const view c{c_.data(), n_ * n_};
    switch (ctx.which) {
      case impl::serial:
        dense::strassen<dense::z_storage, impl::serial>(n_, a, b, c, cutoff_, leaf_);
        break;
      case impl::locus:
        dense::strassen<dense::z_storage, impl::locus>(n_, a, b, c, cutoff_, leaf_, ctx.places);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        dense::strassen<dense::z_storage, impl::tbb>(n_, a, b, c, cutoff_, leaf_);
        break;
      case impl::omp:
        dense::strassen<dense::z_storage, impl::omp>(n_, a, b, c, cutoff_, leaf_);
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
  dim n_, cutoff_, leaf_;
  locus::z_layout layout_;
  std::vector<std::int8_t> a8_, b8_;
  dense::aligned_buffer<float> a_, b_, c_;
};

void check_strassen_z(const param_values& p) {
  dense::check_strassen_orders(p, "strassen-z");
}

}  // namespace

benchmark make_strassen_z_benchmark() {
  benchmark b;
  b.name = "strassen-z";
  b.description =
      "Strassen's C += A*B on the blocked Z-Morton layout (conversions untimed): seven parallel "
      "half-size products and parallel quadrant updates, the classical product below the "
      "cutoff. Inputs in {-1,0,1}: verified exactly (Freivalds, per-block samples, sum).";
  b.params = {
      param_spec::integer("n", "matrix order, a power of two", {"512", "2048", "8192"}, 8, 16384),
      param_spec::integer("cutoff",
                          "order at and below which the classical product runs serially, a power "
                          "of two in [leaf, n]",
                          {"64", "64", "64"}, 8, 16384),
      param_spec::integer("leaf", "order of the Z-layout blocks and of the kernel, a power of two",
                          {"64", "64", "64"}, 8, 1024),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.check = check_strassen_z;
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    check_strassen_z(p);
    return std::make_unique<strassen_z_instance>(p.integer("n"), p.integer("cutoff"),
                                                 p.integer("leaf"));
  };
  return b;
}

}  // namespace locus_bench
