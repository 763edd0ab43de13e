// Where an instance's place() puts its data: bindings to the places of the run's runtime that
// last for that run only. The runner makes one per locus run and drops it when the run is
// verified, which unbinds everything (locus::unbind) while the instance still owns the memory:
// a binding left on memory the instance later frees would go with the pages to whatever the heap
// hands them to next (the next benchmark's arrays, a run's temporaries), and the locality model
// would count it there.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <locus/hints.hpp>
#include <locus/memory.hpp>
#include <locus/runtime.hpp>

namespace locus_bench {

class data_placement {
 public:
  explicit data_placement(locus::runtime& rt) noexcept : rt_(rt) {}
  data_placement(const data_placement&) = delete;
  data_placement& operator=(const data_placement&) = delete;
  // The memory is still the instance's: unbinding cannot fail for want of a mapping.
  ~data_placement() {
    for (const auto& [p, bytes] : bound_) locus::unbind(p, bytes);
  }

  int num_places() const noexcept { return rt_.num_places(); }
  // [p, p + bytes) on place `where` (locus::bind_to_place: the pages it overlaps) until the run
  // is over.
  void bind(void* p, std::size_t bytes, int where) {
    locus::bind_to_place(rt_, p, bytes, locus::place{where});
    bound_.emplace_back(p, bytes);
  }

 private:
  locus::runtime& rt_;
  std::vector<std::pair<void*, std::size_t>> bound_;
};

}  // namespace locus_bench
