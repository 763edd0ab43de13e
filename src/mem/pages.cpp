#include "mem/pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace locus::mem {

std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t whole_pages(std::size_t bytes) noexcept {
  const std::size_t page = page_size();
  if (bytes > SIZE_MAX - (page - 1)) return 0;
  return (bytes + page - 1) & ~(page - 1);
}

page_span pages_of(const void* p, std::size_t bytes) noexcept {
  const std::uintptr_t mask = page_size() - 1;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return page_span{a & ~mask, (a + bytes + mask) & ~mask};
}

// Not hwloc_alloc: that takes the topology whose hooks free the memory again, and memory may
// outlive the runtime it was placed for. On Linux hwloc_alloc is this same anonymous mmap.
void* map_pages(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

void unmap_pages(void* p, std::size_t bytes) noexcept {
  if (::munmap(p, bytes) == 0) return;
  const int err = errno;
  std::fprintf(stderr,
               "locus: place_free(%p, %zu): not memory from place_alloc or interleaved_alloc, or "
               "not its size (munmap: %s)\n",
               p, bytes, std::strerror(err));
  std::abort();
}

}  // namespace locus::mem
