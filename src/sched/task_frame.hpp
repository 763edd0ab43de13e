// The runtime's record of one task: the scheduler policy's slot, the place hint and the spawn-path
// id. A running task's lives in its stack's owner data; a queued task's in task_base::record; a
// queued continuation's and a parked waiter's on their stack, which travels with them. The core
// writes it at spawn (a child inherits its parent's, see inherit()) and copies a queued task's
// onto the stack it runs on; it never reads the slot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

#include "locus/detail/spawn.hpp"
#include "ult/stack.hpp"

namespace locus::detail {

// Per-task storage whose layout the scheduler policy owns (a distribution range, a tier, a
// profile record). Zero for a root.
struct alignas(16) policy_slot {
  static constexpr std::size_t bytes = 32;

  template <class T>
  T& as() noexcept {
    check<T>();
    return *std::launder(reinterpret_cast<T*>(storage));
  }
  template <class T>
  const T& as() const noexcept {
    check<T>();
    return *std::launder(reinterpret_cast<const T*>(storage));
  }

  std::byte storage[bytes];

 private:
  template <class T>
  static constexpr void check() noexcept {
    // The core copies slots as bytes and starts roots from zero bytes: the type must be one whose
    // objects exist wherever suitable bytes are (an implicit-lifetime, trivially copyable type).
    static_assert(sizeof(T) <= bytes && alignof(T) <= 16,
                  "a policy's task state must fit the slot");
    static_assert(std::is_trivially_copyable_v<T> &&
                      (std::is_aggregate_v<T> || std::is_trivially_default_constructible_v<T>),
                  "a policy's task state must be a trivially copyable aggregate");
  }
};

struct task_frame {
  // The place hint in the low 16 bits and the spawn path in the high 48, written by one store on
  // every spawn (see place() and path()).
  std::uint64_t position;
  // The policy needs no hook for the children of this task's groups: they are spawned with a
  // copy of this record, and neither they nor their groups call the policy (see
  // group_state::unhooked). Set by the policy; inherited by such children.
  bool children_unhooked;
  // This task is such a child: the core calls no task hook for it.
  bool unhooked;
  // The task groups this task has spawned into first, hooked or not, since it started or since
  // the iteration it drives last ended: with its path, the name of its next group for learned
  // size hints (sched/size_learning.hpp).
  std::uint16_t groups_started;
  // Last: every spawn writes the position, only spawns that a policy watches the rest, and a
  // stack keeps the first 16 bytes of its record on the cache line of its other hot fields.
  policy_slot slot;

  // The place hint (locus::place): inherited from the parent unless the spawn names one;
  // any_place (-1) means none.
  std::int32_t place() const noexcept { return static_cast<std::int16_t>(position & 0xFFFF); }
  // Names the task by its position in the fork tree: the root's is root_path, and a child's mixes
  // its parent's with its ordinal among the children spawned into its task group, so that an
  // iteration that repeats the same forks (with groups of its own) repeats the same paths.
  std::uint64_t path() const noexcept { return position >> 16; }
};
static_assert(sizeof(task_frame) <= task_record_bytes && alignof(task_frame) <= 16 &&
              sizeof(task_frame) <= ult::stack::owner_bytes);
static_assert(std::is_trivially_copyable_v<task_frame> && std::is_aggregate_v<task_frame>);

inline constexpr std::uint64_t root_path = 0x243F6A8885A3ULL;  // 48 bits

// A child's position: its path is its parent's times an odd constant plus its ordinal, so that
// distinct ordinals of one parent never collide and different parents' children rarely do (a
// difference in a parent's path survives the multiplication in every bit at or above its lowest
// set bit), computed in the shifted form so that the multiply is the only long step before the
// store; its place is its parent's, or the one its spawn names.
inline std::uint64_t child_position(std::uint64_t parent, std::uint32_t ordinal) noexcept {
  constexpr std::uint64_t place_bits = 0xFFFF;
  return (parent & ~place_bits) * 0x9E3779B97F4A7C15ULL + ((ordinal + std::uint64_t{1}) << 16) +
         (parent & place_bits);
}
inline std::uint64_t child_position(std::uint64_t parent, std::uint32_t ordinal,
                                    int place_hint) noexcept {
  if (place_hint == inherit_place) return child_position(parent, ordinal);
  return (child_position(parent, ordinal) & ~std::uint64_t{0xFFFF}) |
         static_cast<std::uint16_t>(static_cast<std::int16_t>(place_hint));
}

// The owner data bytes and task_base::record hold a task_frame from the start of their lifetime
// on (byte arrays create implicit-lifetime objects, C++20 [intro.object]).
inline task_frame& frame_of(ult::stack& s) noexcept {
  return *std::launder(reinterpret_cast<task_frame*>(s.owner_data));
}
inline task_frame& frame_of(task_base& t) noexcept {
  return *std::launder(reinterpret_cast<task_frame*>(t.record));
}
inline task_frame& record_of(spawn_record& r) noexcept {
  return *std::launder(reinterpret_cast<task_frame*>(r.child_record));
}
inline const task_frame& record_of(const spawn_record& r) noexcept {
  return *std::launder(reinterpret_cast<const task_frame*>(r.child_record));
}

inline void set_place(task_frame& f, int place) noexcept {
  f.position = (f.position & ~std::uint64_t{0xFFFF}) |
               static_cast<std::uint16_t>(static_cast<std::int16_t>(place));
}

inline void make_root_frame(task_frame& f) noexcept {
  std::memset(&f.slot, 0, sizeof f.slot);
  f.position = root_path << 16 | 0xFFFF;  // no place
  f.children_unhooked = false;
  f.unhooked = false;
  f.groups_started = 0;
}

// A new child's record: its position, which every spawn writes; then, for a spawn the policy
// watches, its parent's children_unhooked and slot (a spawn the policy does not watch leaves them
// alone: nothing reads them without a hook).
[[gnu::always_inline]] inline std::uint32_t next_ordinal(group_state& g) noexcept {
  const std::uint32_t n = g.spawned.load(std::memory_order_relaxed);
  g.spawned.store(n + 1, std::memory_order_relaxed);
  return n;
}
[[gnu::always_inline]] inline void inherit(task_frame& child, const task_frame& parent,
                                           std::uint32_t ordinal, int place_hint) noexcept {
  child.position = child_position(parent.position, ordinal, place_hint);
  child.children_unhooked = parent.children_unhooked;
  child.unhooked = false;
  child.groups_started = 0;
  child.slot = parent.slot;
}
[[gnu::always_inline]] inline void inherit(task_frame& child, const task_frame& parent,
                                           group_state& g, int place_hint) noexcept {
  inherit(child, parent, next_ordinal(g), place_hint);
}

}  // namespace locus::detail
