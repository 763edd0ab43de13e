#include "dist/node_doorbells.hpp"

#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "sched/futex.hpp"

namespace locus::detail {
namespace {

constexpr std::uint32_t sleeping = 1;
constexpr std::uint32_t one_ring = 2;
// A bell to a cache line, so that one rank's rings do not disturb a neighbour's sleep.
constexpr std::size_t bell_bytes = 64;

std::string object_name(std::uint64_t nonce) {
  char name[40];
  std::snprintf(name, sizeof name, "/locus-bells-%016llx", static_cast<unsigned long long>(nonce));
  return name;
}

// Maps the node's object (the node's first rank creates it, sized for every rank); null when
// that fails.
void* map_bells(bool create, std::uint64_t nonce, std::size_t bytes) {
  const std::string name = object_name(nonce);
  const int fd = create ? ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)
                        : ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) return nullptr;
  if (create && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    ::close(fd);
    return nullptr;
  }
  void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  return at == MAP_FAILED ? nullptr : at;
}

}  // namespace

node_doorbells::node_doorbells() : own_(&private_bell_) {
  int world_size = 0;
  int world_rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  by_rank_.assign(static_cast<std::size_t>(world_size), nullptr);
  by_rank_[static_cast<std::size_t>(world_rank)] = own_;

  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  int node_size = 0;
  int node_rank = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_rank(node, &node_rank);
  const std::size_t bytes = bell_bytes * static_cast<std::size_t>(node_size);

  // The first rank creates the object under a fresh name and tells the others; everyone maps it,
  // and only if all of them could does any rank use it.
  std::uint64_t nonce = 0;
  void* mapping = nullptr;
  if (node_rank == 0) {
    std::random_device entropy;
    nonce = (static_cast<std::uint64_t>(entropy()) << 32) ^ entropy() ^
            static_cast<std::uint64_t>(::getpid());
    mapping = map_bells(true, nonce, bytes);
    if (mapping == nullptr) nonce = 0;
  }
  MPI_Bcast(&nonce, 1, MPI_UINT64_T, 0, node);
  if (node_rank != 0 && nonce != 0) mapping = map_bells(false, nonce, bytes);
  auto* bells = static_cast<std::byte*>(mapping);
  if (mapping != nullptr) {
    std::construct_at(reinterpret_cast<std::atomic<std::uint32_t>*>(bells + bell_bytes * node_rank),
                      0u);
  }
  int mapped = mapping != nullptr ? 1 : 0;
  int everywhere = 0;
  // Also the barrier after which every bell is made and the name may go.
  MPI_Allreduce(&mapped, &everywhere, 1, MPI_INT, MPI_MIN, node);
  if (node_rank == 0 && nonce != 0) ::shm_unlink(object_name(nonce).c_str());
  if (everywhere == 0) {
    if (mapping != nullptr) ::munmap(mapping, bytes);
    MPI_Comm_free(&node);
    return;
  }
  mapping_ = mapping;
  mapped_bytes_ = bytes;

  std::vector<int> node_ranks(static_cast<std::size_t>(node_size));
  std::vector<int> world_ranks(static_cast<std::size_t>(node_size));
  for (int i = 0; i < node_size; ++i) node_ranks[static_cast<std::size_t>(i)] = i;
  MPI_Group node_group = MPI_GROUP_NULL;
  MPI_Group world_group = MPI_GROUP_NULL;
  MPI_Comm_group(node, &node_group);
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_translate_ranks(node_group, node_size, node_ranks.data(), world_group,
                            world_ranks.data());
  MPI_Group_free(&node_group);
  MPI_Group_free(&world_group);
  MPI_Comm_free(&node);
  for (int i = 0; i < node_size; ++i) {
    by_rank_[static_cast<std::size_t>(world_ranks[static_cast<std::size_t>(i)])] =
        std::launder(reinterpret_cast<std::atomic<std::uint32_t>*>(bells + bell_bytes * i));
  }
  own_ = by_rank_[static_cast<std::size_t>(world_rank)];
  covers_every_rank_ = node_size == world_size;
}

node_doorbells::~node_doorbells() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapped_bytes_);
}

void node_doorbells::ring(int rank) noexcept {
  std::atomic<std::uint32_t>* bell = by_rank_[static_cast<std::size_t>(rank)];
  if (bell == nullptr) return;
  if ((bell->fetch_add(one_ring, std::memory_order_seq_cst) & sleeping) != 0)
    futex_wake_all_shared(bell);
}

void node_doorbells::ring_own() noexcept {
  if ((own_->fetch_add(one_ring, std::memory_order_seq_cst) & sleeping) != 0)
    futex_wake_all_shared(own_);
}

std::uint32_t node_doorbells::own_value() const noexcept {
  return own_->load(std::memory_order_seq_cst) & ~sleeping;
}

void node_doorbells::sleep(std::uint32_t seen, std::chrono::microseconds limit) noexcept {
  std::uint32_t expected = seen;
  // Marks the sleep only if nothing rang since `seen` was read: a ring after the mark changes
  // the word, and the futex then does not sleep at all.
  if (!own_->compare_exchange_strong(expected, seen | sleeping, std::memory_order_seq_cst)) return;
  const auto us = limit.count();
  const timespec timeout{static_cast<time_t>(us / 1'000'000),
                         static_cast<long>(us % 1'000'000) * 1000L};
  futex_wait_shared(own_, seen | sleeping, &timeout);
  own_->fetch_and(~sleeping, std::memory_order_seq_cst);
}

}  // namespace locus::detail
