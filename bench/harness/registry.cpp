#include "harness/registry.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace locus_bench {

#define LOCUS_BENCHMARK(name) benchmark make_##name##_benchmark();
#include "benchmarks/list.def"
#undef LOCUS_BENCHMARK

registry::registry() {
#define LOCUS_BENCHMARK(name) benches_.push_back(make_##name##_benchmark());
#include "benchmarks/list.def"
#undef LOCUS_BENCHMARK

  // Catch descriptor mistakes at start-up rather than in the middle of a measurement.
  std::set<std::string> seen;
  for (auto& b : benches_) {
    if (!seen.insert(b.name).second) throw std::logic_error("duplicate benchmark " + b.name);
    if (!b.prepare) throw std::logic_error("benchmark " + b.name + " has no prepare()");
    std::erase_if(b.impls, [](impl i) { return !impl_compiled(i); });
    std::erase_if(b.on_request, [](impl i) { return !impl_compiled(i); });
    std::set<std::string> keys;
    for (const auto& p : b.params) {
      if (!keys.insert(p.name).second) {
        throw std::logic_error("benchmark " + b.name + ": duplicate parameter " + p.name);
      }
      for (const auto& d : p.defaults) p.validate(d, b.name + "." + p.name + " (default)");
    }
  }
}

const registry& registry::get() {
  static const registry r;
  return r;
}

const benchmark* registry::find(std::string_view name) const noexcept {
  auto it = std::find_if(benches_.begin(), benches_.end(),
                         [&](const benchmark& b) { return b.name == name; });
  return it == benches_.end() ? nullptr : &*it;
}

std::string registry::names() const {
  std::string s;
  for (const auto& b : benches_) {
    if (!s.empty()) s += ", ";
    s += b.name;
  }
  return s;
}

}  // namespace locus_bench
