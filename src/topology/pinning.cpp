// Binding worker threads to the PUs of the real topology.
#include "topology/impl.hpp"

namespace locus::topo {

namespace {

// Binds the calling thread to the PUs (OS indices) whose `wanted(leaf)` is true; false if there
// is none or the OS refused.
template <class Wanted>
bool bind_current_thread(hwloc_topology_t hw, const std::vector<int>& leaf_os, Wanted wanted) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set == nullptr) return false;
  for (std::size_t leaf = 0; leaf < leaf_os.size(); ++leaf) {
    if (leaf_os[leaf] >= 0 && wanted(static_cast<int>(leaf))) {
      hwloc_bitmap_set(set, static_cast<unsigned>(leaf_os[leaf]));
    }
  }
  const int rc = hwloc_bitmap_iszero(set) ? -1 : hwloc_set_cpubind(hw, set, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(set);
  return rc == 0;
}

}  // namespace

bool topology::can_pin(int workers) const noexcept {
  return !impl_->synthetic && impl_->hw != nullptr && workers <= num_leaves();
}

bool topology::pin_current_thread(int leaf) const {
  leaf_node(leaf);  // range check
  if (impl_->synthetic) return true;
  if (impl_->hw == nullptr) return false;
  return bind_current_thread(impl_->hw.get(), impl_->leaf_os, [leaf](int l) { return l == leaf; });
}

bool topology::pin_current_thread_to_place(int place) const {
  if (impl_->synthetic) return true;
  if (impl_->hw == nullptr) return false;
  return bind_current_thread(impl_->hw.get(), impl_->leaf_os,
                             [this, place](int l) { return numa_of(l) == place; });
}

}  // namespace locus::topo
