#include "mem/binding_registry.hpp"

#include <stdexcept>

namespace locus::mem {

binding_registry& binding_registry::instance() {
  // Never destroyed: memory may be freed (and released here) during static destruction.
  static binding_registry* registry = new binding_registry;
  return *registry;
}

void binding_registry::record(const void* owner, std::uintptr_t begin, std::uintptr_t end,
                              page_home home) {
  std::lock_guard lock(m_);
  ranges_.assign(begin, end, owned{home, owner});
  if (observer_ != nullptr) observer_->binding_changed(owner, begin, end, home);
}

void binding_registry::release(std::uintptr_t begin, std::uintptr_t end) {
  std::lock_guard lock(m_);
  release_locked(begin, end);
}

void binding_registry::release_locked(std::uintptr_t begin, std::uintptr_t end) {
  ranges_.erase(begin, end);
  if (observer_ != nullptr) observer_->binding_changed(nullptr, begin, end, std::nullopt);
}

void binding_registry::forget(const void* owner) {
  std::lock_guard lock(m_);
  ranges_.erase_if([&](const owned& o) { return o.owner == owner; });
}

std::vector<recorded_binding> binding_registry::bindings_of_locked(const void* owner) const {
  std::vector<recorded_binding> out;
  for (const auto& [begin, e] : ranges_.ranges()) {
    if (e.value.owner == owner) out.push_back(recorded_binding{begin, e.end, e.value.home});
  }
  return out;
}

std::vector<recorded_binding> binding_registry::bindings_of(const void* owner) const {
  std::lock_guard lock(m_);
  return bindings_of_locked(owner);
}

void binding_registry::attach(binding_observer& o, const void* owner) {
  std::lock_guard lock(m_);
  if (observer_ != nullptr) {
    throw std::logic_error("locus: the binding registry already has an observer");
  }
  for (const recorded_binding& b : bindings_of_locked(owner)) {
    o.binding_changed(owner, b.begin, b.end, b.home);
  }
  observer_ = &o;
}

void binding_registry::detach(binding_observer& o) noexcept {
  std::lock_guard lock(m_);
  if (observer_ == &o) observer_ = nullptr;
}

}  // namespace locus::mem
