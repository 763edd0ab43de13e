// A benchmark instance for tests: the benchmark's small defaults with some parameters overridden,
// each validated as the command line would.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/benchmark.hpp"
#include "harness/registry.hpp"

namespace locus_test {

using bench_sets = std::vector<std::pair<std::string, std::string>>;

inline std::unique_ptr<locus_bench::instance> prepare_small(const std::string& name,
                                                            const bench_sets& overrides) {
  const locus_bench::benchmark* b = locus_bench::registry::get().find(name);
  if (b == nullptr) throw std::runtime_error("no benchmark " + name);
  locus_bench::param_values p = b->defaults(locus_bench::size_class::small);
  for (const auto& [k, v] : overrides) {
    const locus_bench::param_spec* spec = b->find_param(k);
    if (spec == nullptr) throw std::runtime_error("no parameter " + k);
    spec->validate(v, k);
    p.set(k, v, spec->type, true);
  }
  return b->prepare(p);
}

}  // namespace locus_test
