// Binding memory to the places of one runtime through hwloc (hwloc_set_area_membind with a
// place's nodeset), and what binding does on its topology: the OS binds, the locality model
// counts a binding a synthetic topology cannot make, or the OS refuses and memory stays where
// first touch puts it. Every binding in effect is recorded (binding_registry) under this binder.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include "locus/memory.hpp"
#include "mem/page_home.hpp"
#include "mem/pages.hpp"
#include "topology/topology.hpp"

namespace locus::mem {

// What the OS is asked to do with a range: bind it to a nodeset, interleave it over one, or give
// it back to its default policy (first touch; the nodeset is then ignored).
enum class os_policy { bind, interleave, first_touch };
// Applies `policy` to [p, p + bytes) (whole pages); `migrate` moves pages already touched.
// Returns 0 or the error number.
using os_binding = int (*)(hwloc_topology* hw, const void* p, std::size_t bytes,
                           const hwloc_bitmap_s* nodeset, os_policy policy, bool migrate);
// hwloc_set_area_membind.
int hwloc_binding(hwloc_topology* hw, const void* p, std::size_t bytes,
                  const hwloc_bitmap_s* nodeset, os_policy policy, bool migrate);

class place_binder {
 public:
  // `os` binds on the real machine (tests give a failing one).
  explicit place_binder(const topo::topology& t, os_binding os = hwloc_binding);
  place_binder(const place_binder&) = delete;
  place_binder& operator=(const place_binder&) = delete;
  // Forgets the bindings recorded under this binder.
  ~place_binder();

  // On the real machine, the first call tries a binding (one page of its own) to learn whether
  // the OS binds at all.
  memory_binding support() const;
  // Why binding is unavailable ("" unless support() says so).
  std::string unavailable_reason() const;

  // Binds the pages `span` covers to `place` (in range), or interleaves them page by page over
  // all places; `migrate` moves pages already touched. The binding is recorded unless the OS
  // refused: then nothing changes (once per process, when the runtime has several places, a
  // warning says so on stderr). Throws std::invalid_argument when the OS reports that the range
  // is not mapped, std::bad_alloc when it has no memory for the binding.
  void bind(page_span span, int place, bool migrate);
  void interleave(page_span span, bool migrate);
  // Gives the pages back to the OS default policy (nothing to do on a synthetic topology or where
  // the OS refused); records nothing: the caller releases the range (binding_registry::unbind).
  // Throws as bind does.
  void reset(page_span span) const;

 private:
  enum state : int { untried, binds, refused };

  // os_, false when the OS refused (support() is then unavailable). Throws for the errors
  // that are the caller's.
  bool apply(page_span span, const hwloc_bitmap_s* nodeset, os_policy policy, bool migrate) const;
  void refuse(int err) const;
  void probe() const;
  void record(page_span span, page_home home);

  const topo::topology& topo_;
  const os_binding os_;
  const bool synthetic_;
  hwloc_bitmap_s* all_places_;  // the union of the places' nodesets, for interleaving
  mutable std::atomic<int> state_;
  mutable std::once_flag probed_;
  mutable std::mutex reason_lock_;
  mutable std::string reason_;
};

}  // namespace locus::mem
