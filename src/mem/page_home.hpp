// Where the OS puts the pages of a bound range, as the locality model needs to know it: on one
// place, or page by page over all places (interleaved).
#pragma once

#include <cstdint>

namespace locus::mem {

struct page_home {
  int place = 0;   // -1: interleaved
  int places = 1;  // interleaved over places 0 .. places - 1

  static page_home on(int place) noexcept { return {place, 1}; }
  static page_home interleaved(int places) noexcept { return {-1, places}; }
  // The place of page number `page` (an address divided by the page size). Interleaving goes by
  // the page's number, not its offset in the range: Linux interleaves an anonymous mapping by
  // virtual page number, so a page is on the same node however the range was cut.
  int place_of(std::uint64_t page) const noexcept {
    return place >= 0 ? place : static_cast<int>(page % static_cast<std::uint64_t>(places));
  }
  bool operator==(const page_home&) const = default;
};

}  // namespace locus::mem
