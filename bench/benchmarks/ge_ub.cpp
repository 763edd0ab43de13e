// ge-ub: CATS's GE-ub (seed 002, §4 and Algorithm 1), ge.cpp's Gaussian elimination with an
// unbalanced task tree for every pivot step: a first-kind range splits at the middle into a
// second-kind lower half and a first-kind upper half; a second-kind range splits into quarters of
// kinds first, first, second, first (grid_common.hpp, row_shape::unbalanced). Parameters, sizes,
// hints, verification and the oneTBB and OpenMP versions (the same tree spawned with
// tbb::task_group and omp task) are ge's.
#include "benchmarks/grid_common.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

benchmark make_ge_ub_benchmark() {
  return grid_bench::make_ge_family(grid_bench::row_shape::unbalanced);
}

}  // namespace locus_bench
