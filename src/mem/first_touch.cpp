#include "mem/first_touch.hpp"

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "locus/locality.hpp"
#include "mem/pages.hpp"
#include "sched/gang.hpp"
#include "sched/runtime_impl.hpp"

namespace locus::mem {
namespace {

class touch_gang final : public detail::gang_task {
 public:
  touch_gang(std::uintptr_t begin, std::size_t bytes, std::vector<int> on)
      : gang_task(static_cast<int>(on.size())), begin_(begin), bytes_(bytes) {
    workers = std::move(on);
  }

  void run_member(int index) override {
    const touch_part part = part_of(begin_, bytes_, index, width());
    if (part.begin == part.end) return;
    void* p = reinterpret_cast<void*>(part.begin);
    const std::size_t bytes = part.end - part.begin;
    locality::touch_write(p, bytes);
    std::memset(p, 0, bytes);
  }

 private:
  std::uintptr_t begin_;
  std::size_t bytes_;
};

// The first worker of each place, by place.
std::vector<int> one_worker_per_place(detail::runtime_impl& rt) {
  std::vector<int> chosen(static_cast<std::size_t>(rt.num_places()), -1);
  for (int w = 0; w < rt.size(); ++w) {
    int& first = chosen[static_cast<std::size_t>(rt.at(w).place)];
    if (first < 0) first = w;
  }
  for (std::size_t p = 0; p < chosen.size(); ++p) {
    // The workers are spread over the places, and a place without one is not a place.
    if (chosen[p] < 0) {
      throw std::logic_error("locus: first_touch_by_place: place " + std::to_string(p) +
                             " has no worker");
    }
  }
  return chosen;
}

}  // namespace

touch_part part_of(std::uintptr_t begin, std::size_t bytes, int part, int parts) noexcept {
  const auto n = static_cast<std::size_t>(parts);
  const std::uintptr_t page_mask = page_size() - 1;
  auto start = [&](std::size_t i) -> std::uintptr_t {
    if (i == 0) return begin;
    if (i >= n) return begin + bytes;
    // i * bytes / n without overflow: bytes = q * n + r, and r * i < n * n.
    const std::size_t offset = bytes / n * i + bytes % n * i / n;
    const std::uintptr_t down = (begin + offset) & ~page_mask;
    return down < begin ? begin : down;
  };
  return touch_part{start(static_cast<std::size_t>(part)),
                    start(static_cast<std::size_t>(part) + 1)};
}

void touch_by_place(detail::runtime_impl& rt, void* p, std::size_t bytes) {
  detail::group_state g;
  detail::spawn_parent_first(g, std::make_unique<touch_gang>(reinterpret_cast<std::uintptr_t>(p),
                                                             bytes, one_worker_per_place(rt)));
  detail::wait(g);
}

}  // namespace locus::mem
