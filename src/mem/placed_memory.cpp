// The public functions of locus/memory.hpp: checks, the runtime they act on, then the binder.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "locus/memory.hpp"
#include "locus/runtime.hpp"
#include "mem/binder.hpp"
#include "mem/binding_registry.hpp"
#include "mem/first_touch.hpp"
#include "mem/pages.hpp"
#include "sched/runtime_impl.hpp"

namespace locus {
namespace {

// The runtime of the calling worker, else the default runtime (as locus::num_places()).
detail::runtime_impl& calling_runtime() {
  if (detail::runtime_impl* rt = detail::current_runtime()) return *rt;
  return default_runtime().impl();
}

void check_place(const detail::runtime_impl& rt, const char* call, place where) {
  const int n = rt.num_places();
  if (where.id >= 0 && where.id < n) return;
  throw std::out_of_range(std::string("locus::") + call + ": place " + std::to_string(where.id) +
                          (where.id == any_place.id ? " (any_place)" : "") +
                          " is not one of this runtime's " + std::to_string(n) + " places (0 to " +
                          std::to_string(n - 1) +
                          "); memory goes on one of them, or interleaved over all of them");
}

void check_range(const char* call, const void* p, std::size_t bytes) {
  if (p == nullptr) {
    throw std::invalid_argument(std::string("locus::") + call + ": a null pointer");
  }
  if (bytes == 0) {
    throw std::invalid_argument(std::string("locus::") + call + ": an empty range (0 bytes)");
  }
  if (reinterpret_cast<std::uintptr_t>(p) > UINTPTR_MAX - bytes) {
    throw std::invalid_argument(std::string("locus::") + call + ": the range [p, p + " +
                                std::to_string(bytes) + ") wraps around the address space");
  }
}

// Whole fresh pages for `bytes`; throws for zero bytes or more than the address space.
std::size_t pages_for(const char* call, std::size_t bytes) {
  if (bytes == 0) {
    throw std::invalid_argument(std::string("locus::") + call +
                                ": zero bytes (an allocation takes at least one byte)");
  }
  const std::size_t rounded = mem::whole_pages(bytes);
  if (rounded == 0) throw std::bad_alloc();
  return rounded;
}

// Fresh pages given to `bind` (which binds them); unmapped again if it throws.
template <class Bind>
void* allocate(std::size_t rounded, Bind bind) {
  void* p = mem::map_pages(rounded);
  try {
    bind(mem::pages_of(p, rounded));
  } catch (...) {
    mem::unmap_pages(p, rounded);
    throw;
  }
  return p;
}

void* place_alloc_on(detail::runtime_impl& rt, std::size_t bytes, place where) {
  const std::size_t rounded = pages_for("place_alloc", bytes);
  check_place(rt, "place_alloc", where);
  // Fresh pages have not been touched, so there is nothing to migrate.
  return allocate(rounded, [&](mem::page_span s) { rt.binder.bind(s, where.id, false); });
}

void* interleaved_alloc_on(detail::runtime_impl& rt, std::size_t bytes) {
  const std::size_t rounded = pages_for("interleaved_alloc", bytes);
  return allocate(rounded, [&](mem::page_span s) { rt.binder.interleave(s, false); });
}

void bind_on(detail::runtime_impl& rt, void* p, std::size_t bytes, place where) {
  check_range("bind_to_place", p, bytes);
  check_place(rt, "bind_to_place", where);
  rt.binder.bind(mem::pages_of(p, bytes), where.id, true);
}

void interleave_on(detail::runtime_impl& rt, void* p, std::size_t bytes) {
  check_range("bind_interleaved", p, bytes);
  rt.binder.interleave(mem::pages_of(p, bytes), true);
}

}  // namespace

memory_binding memory_binding_support() {
  return calling_runtime().binder.support();
}
memory_binding memory_binding_support(runtime& rt) {
  return rt.impl().binder.support();
}

void* place_alloc(std::size_t bytes, place where) {
  return place_alloc_on(calling_runtime(), bytes, where);
}
void* place_alloc(runtime& rt, std::size_t bytes, place where) {
  return place_alloc_on(rt.impl(), bytes, where);
}

void* interleaved_alloc(std::size_t bytes) {
  return interleaved_alloc_on(calling_runtime(), bytes);
}
void* interleaved_alloc(runtime& rt, std::size_t bytes) {
  return interleaved_alloc_on(rt.impl(), bytes);
}

void place_free(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  const std::size_t rounded = mem::whole_pages(bytes);
  const mem::page_span span = mem::pages_of(p, rounded);
  // Released before the pages go: a range mapped again at once must not find the old binding.
  mem::binding_registry::instance().release(span.begin, span.end);
  mem::unmap_pages(p, rounded);
}

void bind_to_place(void* p, std::size_t bytes, place where) {
  bind_on(calling_runtime(), p, bytes, where);
}
void bind_to_place(runtime& rt, void* p, std::size_t bytes, place where) {
  bind_on(rt.impl(), p, bytes, where);
}

void unbind(void* p, std::size_t bytes) {
  check_range("unbind", p, bytes);
  const mem::page_span span = mem::pages_of(p, bytes);
  mem::binding_registry::instance().unbind(
      span.begin, span.end, [](const void* owner, std::uintptr_t begin, std::uintptr_t end) {
        static_cast<const mem::place_binder*>(owner)->reset(mem::page_span{begin, end});
      });
}

void bind_interleaved(void* p, std::size_t bytes) {
  interleave_on(calling_runtime(), p, bytes);
}
void bind_interleaved(runtime& rt, void* p, std::size_t bytes) {
  interleave_on(rt.impl(), p, bytes);
}

void first_touch_by_place(void* p, std::size_t bytes) {
  check_range("first_touch_by_place", p, bytes);
  if (detail::runtime_impl* rt = detail::current_runtime()) {
    mem::touch_by_place(*rt, p, bytes);
    return;
  }
  first_touch_by_place(default_runtime(), p, bytes);
}
void first_touch_by_place(runtime& rt, void* p, std::size_t bytes) {
  check_range("first_touch_by_place", p, bytes);
  rt.exec([&] { mem::touch_by_place(rt.impl(), p, bytes); });
}

}  // namespace locus
