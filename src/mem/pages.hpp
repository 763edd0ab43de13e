// Whole pages for NUMA-placed memory: fresh anonymous mappings, so that nothing has touched a page
// before its binding decides where the OS puts it, and page arithmetic on address ranges.
#pragma once

#include <cstddef>
#include <cstdint>

namespace locus::mem {

// The OS page size.
std::size_t page_size() noexcept;

// `bytes` rounded up to whole pages; 0 when that does not fit in a size_t.
std::size_t whole_pages(std::size_t bytes) noexcept;

// The pages a range overlaps: [begin, end) page-aligned, begin <= p and p + bytes <= end.
struct page_span {
  std::uintptr_t begin = 0, end = 0;
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(end - begin); }
};
page_span pages_of(const void* p, std::size_t bytes) noexcept;

// `bytes` (a positive multiple of page_size()) of fresh zero pages. Throws std::bad_alloc when
// the OS has none to give.
void* map_pages(std::size_t bytes);
// Gives back a mapping of map_pages. Ends the program with a message when the OS rejects it:
// the range was not one map_pages returned, and going on would unmap whatever lies there.
void unmap_pages(void* p, std::size_t bytes) noexcept;

}  // namespace locus::mem
