// The list of benchmarks locus-bench knows.
//
// Each benchmark lives in its own file under benchmarks/ and defines one function,
// `benchmark make_<name>_benchmark()`, that describes it completely. benchmarks/list.def names
// those functions, one LOCUS_BENCHMARK(name) line each, in the order `locus-bench list` prints.
// (An explicit list rather than static self-registering objects: locus_bench_lib is a static
// library, and the linker drops archive members nothing references, registrars included.)
#pragma once

#include <string_view>
#include <vector>

#include "harness/benchmark.hpp"

namespace locus_bench {

class registry {
 public:
  // Every benchmark of benchmarks/list.def, built on first use.
  static const registry& get();

  const std::vector<benchmark>& all() const noexcept { return benches_; }
  const benchmark* find(std::string_view name) const noexcept;
  // "fib, nqueens, uts": for messages.
  std::string names() const;

 private:
  registry();
  std::vector<benchmark> benches_;
};

}  // namespace locus_bench
