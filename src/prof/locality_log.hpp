// Per-worker logs of the locality model: what one worker declared during a session, appended by
// that worker only, read after the session is closed.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace locus::prof {

struct range_record {
  std::uint64_t seq;  // global declaration order
  std::uintptr_t addr;
  std::uint64_t row_bytes;
  std::int64_t stride;
  std::uint64_t rows;
  bool write;
};

struct leaf_declaration {
  std::uint64_t seq;
  std::uint64_t iteration;
  std::uint64_t id;
};

// Append-only storage in fixed chunks: growing never moves what is recorded (no copy of a large
// log in the middle of a measured run), and a worker never waits for anyone. Chunks are not
// zeroed (every slot is written before it is read), and clear() keeps the first one, so that
// short sessions repeated back to back (locus-bench --locality) allocate nothing after the first.
template <class T, std::size_t ChunkSize = 4096>
class chunked_log {
 public:
  void push(const T& v) {
    if (size_ % ChunkSize == 0 && size_ / ChunkSize == chunks_.size()) {
      chunks_.push_back(std::make_unique_for_overwrite<std::array<T, ChunkSize>>());
    }
    (*chunks_[size_ / ChunkSize])[size_ % ChunkSize] = v;
    ++size_;
  }
  std::size_t size() const noexcept { return size_; }
  const T& operator[](std::size_t i) const { return (*chunks_[i / ChunkSize])[i % ChunkSize]; }
  void clear() noexcept {
    if (chunks_.size() > 1) chunks_.resize(1);
    size_ = 0;
  }

 private:
  std::vector<std::unique_ptr<std::array<T, ChunkSize>>> chunks_;
  std::size_t size_ = 0;
};

// One worker's log, on its own cache lines so that workers appending at once do not share any.
struct alignas(64) worker_log {
  // Set while the worker appends; end() waits for it to clear before reading (see recorder).
  std::atomic<bool> busy{false};
  chunked_log<range_record> ranges;
  chunked_log<leaf_declaration> leaves;
  std::uint64_t dropped = 0;  // declarations lost to a failed allocation
};

}  // namespace locus::prof
