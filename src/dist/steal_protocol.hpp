// The messages distributed queues exchange, and their byte layout. Every message is a byte
// string received whole (sized by probing), so inputs and outputs of any size travel in one
// message: there is no fixed message buffer to overflow. Numbers are in the host's byte order:
// the ranks of one job are assumed to share an architecture.
//
//   steal_request  thief -> victim   one byte (unused)
//   tasks          victim -> thief   u32 count, then per task: u32 function index, i32 origin
//                                    rank, u64 origin handle, u32 input size, input bytes
//                                    (count 0: the victim had nothing to give)
//   result         runner -> origin  u64 origin handle, then the output bytes
//   token          rank i -> i + 1   Dijkstra-Safra's token: u64 epoch, i64 count, u8 black
//   done           rank 0 -> all     u64 epoch: no task of that epoch exists anywhere
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace locus::detail::dist_wire {

enum tag : int { steal_request = 1, tasks = 2, result = 3, token = 4, done = 5 };

struct task {
  std::uint32_t fn = 0;
  std::int32_t origin = 0;
  std::uint64_t handle = 0;
  std::span<const std::byte> input;
};

struct token_msg {
  std::uint64_t epoch = 0;
  std::int64_t count = 0;
  bool black = false;
};

// Builds a tasks message.
class batch_writer {
 public:
  batch_writer();
  void add(const task& t);
  std::uint32_t count() const noexcept { return count_; }
  std::vector<std::byte> take();

 private:
  std::vector<std::byte> buf_;
  std::uint32_t count_ = 0;
};

// Reads a tasks message; throws std::runtime_error on a malformed one.
std::vector<task> read_batch(std::span<const std::byte> msg);

std::vector<std::byte> write_result(std::uint64_t handle, std::span<const std::byte> out);
// The handle; `out` is set to the output bytes.
std::uint64_t read_result(std::span<const std::byte> msg, std::span<const std::byte>& out);

std::vector<std::byte> write_token(const token_msg& t);
token_msg read_token(std::span<const std::byte> msg);

std::vector<std::byte> write_epoch(std::uint64_t epoch);
std::uint64_t read_epoch(std::span<const std::byte> msg);

}  // namespace locus::detail::dist_wire
