#include "dist/steal_protocol.hpp"

#include <cstring>

namespace locus::detail::dist_wire {
namespace {

template <class T>
void append(std::vector<std::byte>& buf, const T& v) {
  const std::size_t at = buf.size();
  buf.resize(at + sizeof(T));
  std::memcpy(buf.data() + at, &v, sizeof(T));
}

class reader {
 public:
  explicit reader(std::span<const std::byte> msg) : msg_(msg) {}
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, bytes(sizeof(T)).data(), sizeof(T));
    return v;
  }
  std::span<const std::byte> bytes(std::size_t n) {
    if (msg_.size() - at_ < n) {
      throw std::runtime_error("locus::dist_taskq: a truncated message from another rank");
    }
    auto s = msg_.subspan(at_, n);
    at_ += n;
    return s;
  }
  std::span<const std::byte> rest() { return bytes(msg_.size() - at_); }

 private:
  std::span<const std::byte> msg_;
  std::size_t at_ = 0;
};

}  // namespace

batch_writer::batch_writer() {
  append(buf_, std::uint32_t{0});
}

void batch_writer::add(const task& t) {
  append(buf_, t.fn);
  append(buf_, t.origin);
  append(buf_, t.handle);
  append(buf_, static_cast<std::uint32_t>(t.input.size()));
  buf_.insert(buf_.end(), t.input.begin(), t.input.end());
  ++count_;
}

std::vector<std::byte> batch_writer::take() {
  std::memcpy(buf_.data(), &count_, sizeof count_);
  return std::move(buf_);
}

std::vector<task> read_batch(std::span<const std::byte> msg) {
  reader r(msg);
  const auto n = r.get<std::uint32_t>();
  std::vector<task> tasks(n);
  for (auto& t : tasks) {
    t.fn = r.get<std::uint32_t>();
    t.origin = r.get<std::int32_t>();
    t.handle = r.get<std::uint64_t>();
    t.input = r.bytes(r.get<std::uint32_t>());
  }
  return tasks;
}

std::vector<std::byte> write_result(std::uint64_t handle, std::span<const std::byte> out) {
  std::vector<std::byte> buf;
  buf.reserve(sizeof handle + out.size());
  append(buf, handle);
  buf.insert(buf.end(), out.begin(), out.end());
  return buf;
}

std::uint64_t read_result(std::span<const std::byte> msg, std::span<const std::byte>& out) {
  reader r(msg);
  const auto handle = r.get<std::uint64_t>();
  out = r.rest();
  return handle;
}

std::vector<std::byte> write_token(const token_msg& t) {
  std::vector<std::byte> buf;
  append(buf, t.epoch);
  append(buf, t.count);
  append(buf, static_cast<std::uint8_t>(t.black ? 1 : 0));
  return buf;
}

token_msg read_token(std::span<const std::byte> msg) {
  reader r(msg);
  token_msg t;
  t.epoch = r.get<std::uint64_t>();
  t.count = r.get<std::int64_t>();
  t.black = r.get<std::uint8_t>() != 0;
  return t;
}

std::vector<std::byte> write_epoch(std::uint64_t epoch) {
  std::vector<std::byte> buf;
  append(buf, epoch);
  return buf;
}

std::uint64_t read_epoch(std::span<const std::byte> msg) {
  reader r(msg);
  return r.get<std::uint64_t>();
}

}  // namespace locus::detail::dist_wire
