// strassen: C += A * B for square float matrices of order n (a power of two), row-major with
// `pad` extra floats per row, by Strassen's algorithm: each call forms the seven products
// M1..M7 of the half-size quadrants (operand sums in per-task temporaries) in parallel, then the
// four quadrants of C accumulate their products in parallel (dense_common.hpp, `strassen`).
// Below order `cutoff` the classical cache-oblivious product of matmul runs serially, down to
// leaf x leaf kernels.
//
// Seed 001 (NUMA-WS, Sec. V "strassen" and "strassen-z", from the MIT Cilk-5 suite): seven
// parallel recursive products plus additions, 8k x 8k there; strassen-z is the blocked Z-Morton
// version. NUMA-WS gave strassen no locality hints (its products read quadrants from all over the
// inputs); here, for the ADWS schedulers, each product carries a work hint (all equal, h^3), each
// quadrant update h^2, and both task groups a size hint (inputs, output and the seven products:
// (3 n^2 + 7 (n/2)^2) floats for an order-n call). With several places the top call's products
// and quadrant updates carry place hints (dense_common.hpp) and A, B and C are bound to the
// places in four bands of rows, band k where the update of quadrant k runs (half of that
// quadrant's rows: row-major quadrants are not contiguous, the reason for strassen-z).
//
// Peers: the same recursion through dense::fork_join with a tbb::task_group or omp task +
// taskwait (seven products, then four quadrant updates, same cutoff), without hints.
//
// Parameters: n (order; small 512, medium 2048, large 8192), cutoff (order at and below which
// the classical product runs, 64), leaf (kernel order, 64), pad (floats per row, 32). Inputs:
// entries uniform in {-1, 0, 1} (splitmix64, seeds 1 and 2), C starts at zero. Strassen's sums
// and differences stay integers, so while n 2^(levels) stays small (strassen_exact) the result is
// exact and verified exactly: Freivalds' check, per-block samples, the sum of C.
#include <cstdint>
#include <string>

#include "benchmarks/dense_common.hpp"
#include "benchmarks/placement.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace {

using dense::cview;
using dense::dim;
using dense::view;

class strassen_instance final : public instance {
 public:
  strassen_instance(dim n, dim cutoff, dim leaf, dim pad)
      : n_(n),
        cutoff_(cutoff),
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
        dense::strassen<dense::rowmajor_storage, impl::serial>(n_, a, b, c, cutoff_, leaf_);
        break;
      case impl::locus:
        dense::strassen<dense::rowmajor_storage, impl::locus>(n_, a, b, c, cutoff_, leaf_,
                                                              ctx.places);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        dense::strassen<dense::rowmajor_storage, impl::tbb>(n_, a, b, c, cutoff_, leaf_);
        break;
      case impl::omp:
        dense::strassen<dense::rowmajor_storage, impl::omp>(n_, a, b, c, cutoff_, leaf_);
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
  dim n_, cutoff_, leaf_, ld_;
  std::vector<std::int8_t> a8_, b8_;
  dense::aligned_buffer<float> a_, b_, c_;
};

void check_strassen(const param_values& p) {
  dense::check_strassen_orders(p, "strassen");
}

}  // namespace

benchmark make_strassen_benchmark() {
  benchmark b;
  b.name = "strassen";
  b.description =
      "Strassen's C += A*B, row-major: seven parallel half-size products and parallel quadrant "
      "updates, the classical product below the cutoff. Inputs in {-1,0,1}: verified exactly "
      "(Freivalds, per-block samples, sum).";
  b.params = {
      param_spec::integer("n", "matrix order, a power of two", {"512", "2048", "8192"}, 8, 16384),
      param_spec::integer("cutoff",
                          "order at and below which the classical product runs serially, a power "
                          "of two in [leaf, n]",
                          {"64", "64", "64"}, 8, 16384),
      param_spec::integer("leaf", "order of the kernel, a power of two", {"64", "64", "64"}, 8,
                          1024),
      param_spec::integer("pad", "floats added to each row", {"32", "32", "32"}, 0, 1024),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.check = check_strassen;
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    check_strassen(p);
    return std::make_unique<strassen_instance>(p.integer("n"), p.integer("cutoff"),
                                               p.integer("leaf"), p.integer("pad"));
  };
  return b;
}

}  // namespace locus_bench
