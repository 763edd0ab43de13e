// How long an adws worker that ran out of work waits before its first steal within a group whose
// tasks carry data (a size hint). ADWS's plan places every task where its data was the last time
// round; a steal moves one task's data to the thief's cache, and the plan moves it back in the
// next iteration. A thief that steals as soon as it runs dry does so at the end of every step of
// an iterative program whose plan is balanced but not exact (its creator's worker starts a
// little late, say), and each stolen task then runs slower on the thief than it would have on
// its owner. So the thief waits first, like a skier who rents until the rent paid equals the
// price of buying: for about as long as moving the task's data would take, which bounds what the
// wait can cost to that of the steal it replaces. It waits at most as long as its own part of
// the group took, so that a plan whose hints are wrong loses at most about that before load
// balancing starts. After the first steal in a group, later ones do not wait: the owner is behind
// by then. (adws does not wait at all while another process shares a worker's PU.)
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace locus::detail {

class steal_patience {
 public:
  // Copying a task's data into another core's cache, in bytes per nanosecond: a stream of
  // cache-to-cache transfers, a few lines in flight at a time.
  static constexpr double move_bytes_per_ns = 16;
  // The longest wait, as a share of the time from the group's start to the thief's first try.
  static constexpr double most_of_elapsed = 1.0;

  // The wait of a worker that first tries to steal at now_ns within a group that began at
  // begun_ns and whose tasks each hold part_bytes of data.
  static std::uint64_t wait_ns(std::size_t part_bytes, std::uint64_t begun_ns,
                               std::uint64_t now_ns) noexcept {
    const double move = static_cast<double>(part_bytes) / move_bytes_per_ns;
    const double elapsed = now_ns > begun_ns ? static_cast<double>(now_ns - begun_ns) : 0.0;
    return static_cast<std::uint64_t>(std::min(move, elapsed * most_of_elapsed));
  }

  // Whether may_steal ever said no within `group`.
  bool held_back_in(std::uint64_t group) const noexcept { return group == held_group_; }

  // Whether the worker may steal within `group` now; called each time it would steal. The first
  // call for a group starts the wait.
  bool may_steal(std::uint64_t group, std::size_t part_bytes, std::uint64_t begun_ns,
                 std::uint64_t now_ns) noexcept {
    if (part_bytes == 0 || group == free_group_) return true;
    if (group != waiting_group_) {
      waiting_group_ = group;
      until_ns_ = now_ns + wait_ns(part_bytes, begun_ns, now_ns);
    }
    if (now_ns < until_ns_) {
      held_group_ = group;
      return false;
    }
    free_group_ = group;
    return true;
  }

 private:
  static constexpr std::uint64_t no_group = ~std::uint64_t{0};
  std::uint64_t waiting_group_ = no_group;
  std::uint64_t free_group_ = no_group;
  std::uint64_t held_group_ = no_group;
  std::uint64_t until_ns_ = 0;
};

}  // namespace locus::detail
