#include "mem/binder.hpp"

#include <hwloc.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>

#include "mem/binding_registry.hpp"

namespace locus::mem {
namespace {

// Once per process: a machine that refuses one runtime's bindings refuses the next one's.
std::atomic<bool> warned{false};

std::string describe_range(page_span span) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "[%#zx, %#zx)", static_cast<std::size_t>(span.begin),
                static_cast<std::size_t>(span.end));
  return buf;
}

}  // namespace

int hwloc_binding(hwloc_topology* hw, const void* p, std::size_t bytes,
                  const hwloc_bitmap_s* nodeset, os_policy policy, bool migrate) {
  int flags = HWLOC_MEMBIND_BYNODESET;
  if (migrate) flags |= HWLOC_MEMBIND_MIGRATE;
  const hwloc_membind_policy_t hw_policy = policy == os_policy::bind ? HWLOC_MEMBIND_BIND
                                           : policy == os_policy::interleave
                                               ? HWLOC_MEMBIND_INTERLEAVE
                                               : HWLOC_MEMBIND_DEFAULT;
  const int rc = hwloc_set_area_membind(hw, p, bytes, nodeset, hw_policy, flags);
  if (rc == 0) return 0;
  return errno != 0 ? errno : EINVAL;
}

place_binder::place_binder(const topo::topology& t, os_binding os)
    : topo_(t),
      os_(os),
      synthetic_(t.is_synthetic()),
      all_places_(hwloc_bitmap_alloc()),
      state_(t.is_synthetic() ? binds : untried) {
  if (all_places_ == nullptr) throw std::bad_alloc();
  for (int p = 0; p < t.num_numa(); ++p)
    hwloc_bitmap_or(all_places_, all_places_, t.place_nodeset(p));
}

place_binder::~place_binder() {
  binding_registry::instance().forget(this);
  hwloc_bitmap_free(all_places_);
}

memory_binding place_binder::support() const {
  if (synthetic_) return memory_binding::modeled;
  std::call_once(probed_, [this] { probe(); });
  return state_.load(std::memory_order_acquire) == refused ? memory_binding::unavailable
                                                           : memory_binding::os;
}

std::string place_binder::unavailable_reason() const {
  if (support() != memory_binding::unavailable) return {};
  std::lock_guard lock(reason_lock_);
  return reason_;
}

// A page of our own bound to place 0: what the OS says to it, it says to every binding.
void place_binder::probe() const {
  if (state_.load(std::memory_order_acquire) != untried) return;
  const std::size_t bytes = page_size();
  void* p = map_pages(bytes);
  // The range is ours and mapped: any error means the OS does not bind.
  const int err = os_(topo_.hwloc(), p, bytes, topo_.place_nodeset(0), os_policy::bind, false);
  unmap_pages(p, bytes);
  if (err != 0) {
    refuse(err);
  } else {
    int expected = untried;
    state_.compare_exchange_strong(expected, binds, std::memory_order_acq_rel);
  }
}

void place_binder::refuse(int err) const {
  {
    std::lock_guard lock(reason_lock_);
    if (state_.load(std::memory_order_relaxed) != refused) {
      reason_ = std::string("hwloc_set_area_membind: ") + std::strerror(err);
    }
    state_.store(refused, std::memory_order_release);
  }
  if (topo_.num_numa() > 1 && !warned.exchange(true, std::memory_order_relaxed)) {
    std::fprintf(stderr,
                 "locus: this machine does not bind memory to NUMA nodes (%s); place_alloc, "
                 "interleaved_alloc and bind_to_place leave pages where the OS puts them (first "
                 "touch), and locus::memory_binding_support() reports unavailable\n",
                 std::strerror(err));
  }
}

bool place_binder::apply(page_span span, const hwloc_bitmap_s* nodeset, os_policy policy,
                         bool migrate) const {
  if (state_.load(std::memory_order_acquire) == refused) return false;
  const int err = os_(topo_.hwloc(), reinterpret_cast<const void*>(span.begin), span.bytes(),
                      nodeset, policy, migrate);
  if (err == 0) {
    int expected = untried;
    state_.compare_exchange_strong(expected, binds, std::memory_order_acq_rel);
    return true;
  }
  if (err == EFAULT) {
    throw std::invalid_argument(
        "locus: " + describe_range(span) +
        " is not mapped memory (hwloc_set_area_membind: " + std::strerror(err) + ")");
  }
  if (err == ENOMEM) throw std::bad_alloc();
  // ENOSYS (no NUMA support in the kernel), EXDEV (hwloc cannot enforce the policy), EPERM
  // (a seccomp filter, as containers install by default) and the like: the machine, not the call.
  refuse(err);
  return false;
}

void place_binder::record(page_span span, page_home home) {
  binding_registry::instance().record(this, span.begin, span.end, home);
}

void place_binder::bind(page_span span, int place, bool migrate) {
  if (synthetic_ || apply(span, topo_.place_nodeset(place), os_policy::bind, migrate)) {
    record(span, page_home::on(place));
  }
}

void place_binder::interleave(page_span span, bool migrate) {
  if (synthetic_ || apply(span, all_places_, os_policy::interleave, migrate)) {
    record(span, page_home::interleaved(topo_.num_numa()));
  }
}

void place_binder::reset(page_span span) const {
  if (!synthetic_) (void)apply(span, all_places_, os_policy::first_touch, false);
}

}  // namespace locus::mem
