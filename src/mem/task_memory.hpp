// What the memory for queued tasks holds (task_base's allocation, task_memory.cpp), for tests.
#pragma once

#include <cstddef>

namespace locus::detail {

// Chains of free blocks the shared depot holds for tasks of `task_bytes`; 0 where tasks of that
// size come from the C library (sanitizer builds, large tasks).
std::size_t task_depot_chains(std::size_t task_bytes) noexcept;
// The most chains the depot keeps per size class, and the blocks in a chain.
inline constexpr std::size_t task_depot_max_chains = 64;
inline constexpr std::size_t task_depot_chain_length = 64;
// Free blocks a thread keeps per size class before it gathers chains for the depot.
inline constexpr std::size_t task_blocks_kept_per_thread = 256;

}  // namespace locus::detail
