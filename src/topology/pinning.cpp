// Binding worker threads to the PUs of the real topology.
#include <sched.h>

#include <algorithm>

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

int topology::current_leaf() const noexcept {
  if (impl_->synthetic) return -1;
  const int cpu = ::sched_getcpu();
  if (cpu < 0) return -1;
  const auto& os = impl_->leaf_os;
  const auto at = std::find(os.begin(), os.end(), cpu);
  return at == os.end() ? -1 : static_cast<int>(at - os.begin());
}

int topology::os_index_of_leaf(int leaf) const {
  leaf_node(leaf);  // range check
  return impl_->leaf_os[static_cast<std::size_t>(leaf)];
}

bool topology::pin_current_thread_to_place(int place) const {
  if (impl_->synthetic) return true;
  if (impl_->hw == nullptr) return false;
  return bind_current_thread(impl_->hw.get(), impl_->leaf_os,
                             [this, place](int l) { return numa_of(l) == place; });
}

}  // namespace locus::topo
