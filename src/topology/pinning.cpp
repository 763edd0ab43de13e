// Binding worker threads to the PUs of the real topology.
#include "topology/impl.hpp"

namespace locus::topo {

bool topology::can_pin(int workers) const noexcept {
  return !impl_->synthetic && impl_->hw != nullptr && workers <= num_leaves();
}

bool topology::pin_current_thread(int leaf) const {
  leaf_node(leaf);  // range check
  if (impl_->synthetic) return true;
  const int os = impl_->leaf_os[static_cast<std::size_t>(leaf)];
  if (os < 0 || impl_->hw == nullptr) return false;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) return false;
  hwloc_bitmap_only(set, static_cast<unsigned>(os));
  const int rc = hwloc_set_cpubind(impl_->hw.get(), set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  return rc == 0;
}

bool topology::pin_current_thread_to_place(int place) const {
  if (impl_->synthetic) return true;
  if (impl_->hw == nullptr) return false;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) return false;
  for (int leaf = 0; leaf < num_leaves(); ++leaf) {
    const int os = impl_->leaf_os[static_cast<std::size_t>(leaf)];
    if (os >= 0 && numa_of(leaf) == place) hwloc_bitmap_set(set, static_cast<unsigned>(os));
  }
  const int rc =
      hwloc_bitmap_iszero(set) ? -1 : hwloc_set_cpubind(impl_->hw.get(), set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  return rc == 0;
}

}  // namespace locus::topo
