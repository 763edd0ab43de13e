// The bindings in effect, recorded so that the locality model can count them: the OS places a
// bound page by its binding, not by the worker that touches it first, and on a synthetic topology
// nothing is bound at all, so the record is all there is. One registry for the process, since
// memory is freed without naming a runtime; each range names the runtime's binder that placed it
// (its owner), and a binder's ranges go when it does.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "mem/page_home.hpp"
#include "mem/range_map.hpp"

namespace locus::mem {

// Told of every change while attached (the open locality session), under the registry's lock, so
// that it orders the changes among its own records exactly as they happened.
class binding_observer {
 public:
  // [begin, end) is now bound by `owner` with `home`, or no longer bound (home empty: unbound or
  // unmapped).
  virtual void binding_changed(const void* owner, std::uintptr_t begin, std::uintptr_t end,
                               std::optional<page_home> home) = 0;

 protected:
  ~binding_observer() = default;
};

struct recorded_binding {
  std::uintptr_t begin = 0, end = 0;
  page_home home;
};

class binding_registry {
 public:
  static binding_registry& instance();

  void record(const void* owner, std::uintptr_t begin, std::uintptr_t end, page_home home);
  // The range was unmapped: whatever bound it is gone.
  void release(std::uintptr_t begin, std::uintptr_t end);
  // The bindings in [begin, end) end: reset(owner, piece_begin, piece_end) for every recorded
  // piece of it (under the lock, so every owner named is alive), then the range is released. When
  // a reset throws, nothing is released.
  template <class Reset>
  void unbind(std::uintptr_t begin, std::uintptr_t end, Reset reset) {
    std::lock_guard lock(m_);
    ranges_.for_each_overlapping(
        begin, end,
        [&](std::uintptr_t b, std::uintptr_t e, const owned& o) { reset(o.owner, b, e); });
    release_locked(begin, end);
  }
  // Drops `owner`'s ranges (its runtime is going away).
  void forget(const void* owner);
  // `owner`'s ranges, in address order.
  std::vector<recorded_binding> bindings_of(const void* owner) const;

  // Attaches `o` (one observer at a time) and tells it of `owner`'s ranges as if they were bound
  // now, so that with the changes that follow it knows the whole history from then on. Throws
  // std::logic_error when another observer is attached.
  void attach(binding_observer& o, const void* owner);
  // After it returns, `o` is told nothing more.
  void detach(binding_observer& o) noexcept;

 private:
  struct owned {
    page_home home;
    const void* owner;
  };
  std::vector<recorded_binding> bindings_of_locked(const void* owner) const;
  void release_locked(std::uintptr_t begin, std::uintptr_t end);

  mutable std::mutex m_;
  range_map<owned> ranges_;
  binding_observer* observer_ = nullptr;
};

}  // namespace locus::mem
