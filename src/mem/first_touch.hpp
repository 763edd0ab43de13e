// locus::first_touch_by_place: part i of a range written by a worker of place i, at once on all
// places (a gang with one member per place).
#pragma once

#include <cstddef>
#include <cstdint>

namespace locus::detail {
class runtime_impl;
}

namespace locus::mem {

struct touch_part {
  std::uintptr_t begin = 0, end = 0;  // empty when begin == end
};

// Part `part` of `parts` of [begin, begin + bytes): from the point part * bytes / parts moved
// down to a page boundary (but not below begin) to the next part's start; the last part ends at
// begin + bytes. The parts tile the range, and no page is shared by two of them.
touch_part part_of(std::uintptr_t begin, std::size_t bytes, int part, int parts) noexcept;

// Zero-fills [p, p + bytes), part i by the first worker of place i of `rt` (declaring the
// write to an open locality session), and returns when all parts are done. Runs on a worker of
// `rt`.
void touch_by_place(detail::runtime_impl& rt, void* p, std::size_t bytes);

}  // namespace locus::mem
