// NUMA-placed memory (seed 001 §III-A): a place hint only pays when the data the task touches
// lives on that place, so the memory has to be placed when it is allocated.
//
//   const std::size_t bytes = n * sizeof(double);
//   auto* a = static_cast<double*>(locus::place_alloc(bytes, locus::place{1}));  // on place 1
//   auto* b = static_cast<double*>(locus::interleaved_alloc(bytes));  // page by page on all
//   auto* c = static_cast<double*>(locus::place_alloc(bytes, locus::place{0}));
//   locus::bind_to_place(c + n / 2, bytes / 2, locus::place{1});  // now half on each place
//   locus::first_touch_by_place(d, bytes);  // part i of d written (zeroed) by place i's worker
//   using on_place = locus::place_allocator<double>;
//   std::vector<double, on_place> v(n, on_place{locus::place{0}});  // a container on place 0
//   locus::place_free(a, bytes);
//
// Every function acts on the runtime of the calling worker, else on the default runtime (like
// locus::num_places()); the overloads taking a runtime act on that one. Memory is whole pages,
// page-aligned, from fresh mappings of the OS (zero-filled), bound through hwloc
// (hwloc_set_area_membind with the place's nodeset: its NUMA node, or its package's nodes when
// places are packages), and meant for large arrays: each allocation takes at least one page.
//
// What binding does depends on the runtime's topology (memory_binding_support()):
//  - the real machine: the OS puts the pages on the place's NUMA node(s) whoever touches them
//    first. With one NUMA node that changes nothing, but the calls still work the same.
//  - a synthetic topology (LOCUS_TOPOLOGY): nothing is bound; the binding is recorded, and the
//    locality model (locus/locality.hpp) homes a bound page at its place instead of at the
//    NUMA node of the worker that touches it first.
//  - a machine that refuses to bind (a kernel without NUMA support, a container's seccomp filter,
//    no permission: hwloc reports ENOSYS, EXDEV, EPERM...): the calls still allocate and return,
//    the pages go where first touch puts them, memory_binding_support() says unavailable and,
//    when the runtime has several places, a warning says so once on stderr.
// A binding stays in effect (and recorded, for the runtime's life) until the range is bound
// again, unbound (unbind) or freed with place_free.
//
// Rejected input: a place outside [0, num_places()) throws std::out_of_range naming the place and
// the count; zero bytes or a null pointer std::invalid_argument; memory the OS cannot give
// std::bad_alloc.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

#include "locus/hints.hpp"

namespace locus {

class runtime;

// What binding memory to a place does on a runtime (the same for all its places).
enum class memory_binding {
  os,           // the OS places bound pages on the place's NUMA node(s), through hwloc
  modeled,      // synthetic topology: nothing is bound; the locality model counts the binding
  unavailable,  // the OS refuses to bind: memory is allocated unbound (placed by first touch)
};
// On the real machine the first query tries one binding to find out.
memory_binding memory_binding_support();
memory_binding memory_binding_support(runtime& rt);

// `bytes` (rounded up to whole pages) bound to place `where`. The pages are not touched: they
// appear on the place when first written, whichever worker writes them.
[[nodiscard]] void* place_alloc(std::size_t bytes, place where);
[[nodiscard]] void* place_alloc(runtime& rt, std::size_t bytes, place where);
// `bytes` (rounded up to whole pages) interleaved over all places, page by page (the kernel picks
// a page's place from its address: page number modulo the number of places).
[[nodiscard]] void* interleaved_alloc(std::size_t bytes);
[[nodiscard]] void* interleaved_alloc(runtime& rt, std::size_t bytes);
// Frees memory from place_alloc or interleaved_alloc, with the size it was allocated with; no
// runtime is needed (the memory may outlive the one it was placed for). Null is ignored.
void place_free(void* p, std::size_t bytes) noexcept;

// Binds existing memory to place `where`: every page [p, p + bytes) overlaps, so the first and
// last pages go along whole, with whatever else they hold (page-align the range to bind exactly
// it; place_alloc's memory is). Pages already touched move to the place. Throws
// std::invalid_argument when the range is not mapped memory.
void bind_to_place(void* p, std::size_t bytes, place where);
void bind_to_place(runtime& rt, void* p, std::size_t bytes, place where);
// Ends the bindings of [p, p + bytes) (the pages it overlaps): they go back to the OS default,
// first touch, and the locality model forgets them. Call it before freeing bound memory that
// place_free does not free (a std::vector's, say): heap pages can stay mapped, and be handed out
// again, with their binding, and the model keeps a binding for its runtime's life. Needs no
// runtime (each binding is undone by the runtime that made it); pages without a binding are left
// alone. Throws std::invalid_argument when a bound range is no longer mapped memory.
void unbind(void* p, std::size_t bytes);
// Interleaves existing memory over all places, page by page, the same way.
void bind_interleaved(void* p, std::size_t bytes);
void bind_interleaved(runtime& rt, void* p, std::size_t bytes);

// Zero-fills [p, p + bytes) in num_places() contiguous parts, part i written by a worker of place
// i, so that first-touch placement puts part i on place i (the way NUMA-WS benchmarks place their
// arrays). Part boundaries are the points i * bytes / num_places() moved down to a page boundary
// (never before p), so that each page is written by one place. Returns when every part is
// written; from outside the runtime it blocks like runtime::exec. While a locality session is
// open the writes are declared (locality::touch_write) by the workers that make them, so the
// model sees part i first touched by place i; memory touched before the session is first touched
// again, in the model, by the session's first access.
void first_touch_by_place(void* p, std::size_t bytes);
void first_touch_by_place(runtime& rt, void* p, std::size_t bytes);

// A standard allocator (std::vector<T, place_allocator<T>>) whose memory is on one place, or
// interleaved over all of them; each allocation is place_alloc (interleaved_alloc) of whole pages,
// so it suits large containers. Allocators of any place free each other's memory (place_free),
// so they compare equal, and move assignment and swap take the other container's allocator along
// with its memory. No default constructor: a container's place is a decision.
template <class T>
class place_allocator {
 public:
  static_assert(alignof(T) <= 4096, "locus::place_allocator: page-aligned memory is all it gives");
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::true_type;

  // On place `where` of the calling worker's runtime (else the default runtime), decided at each
  // allocation.
  explicit place_allocator(place where) noexcept : where_(where) {}
  place_allocator(runtime& rt, place where) noexcept : rt_(&rt), where_(where) {}
  static place_allocator interleaved() noexcept {
    return place_allocator(nullptr, any_place, true);
  }
  static place_allocator interleaved(runtime& rt) noexcept {
    return place_allocator(&rt, any_place, true);
  }
  template <class U>
  place_allocator(const place_allocator<U>& other) noexcept
      : rt_(other.rt_), where_(other.where_), interleaved_(other.interleaved_) {}

  // Null for n == 0 (no page is taken for nothing).
  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    if (n == 0) return nullptr;
    const std::size_t bytes = n * sizeof(T);
    void* p =
        interleaved_
            ? (rt_ != nullptr ? interleaved_alloc(*rt_, bytes) : interleaved_alloc(bytes))
            : (rt_ != nullptr ? place_alloc(*rt_, bytes, where_) : place_alloc(bytes, where_));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept { place_free(p, n * sizeof(T)); }

  bool is_interleaved() const noexcept { return interleaved_; }
  place where() const noexcept { return where_; }  // any_place when interleaved

  template <class U>
  bool operator==(const place_allocator<U>&) const noexcept {
    return true;
  }

 private:
  template <class U>
  friend class place_allocator;
  place_allocator(runtime* rt, place where, bool interleaved) noexcept
      : rt_(rt), where_(where), interleaved_(interleaved) {}

  runtime* rt_ = nullptr;
  place where_;
  bool interleaved_ = false;
};

}  // namespace locus
