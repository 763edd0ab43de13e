// A thin layer over perf_event_open(2): one event description, an owned descriptor, the group
// ioctls and the PERF_FORMAT_GROUP read, and the reason text for a refused open.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace locus::prof {

struct event_spec {
  std::uint32_t type = 0;    // PERF_TYPE_*
  std::uint64_t config = 0;  // the type's event encoding
  std::string label;         // for people: "hardware instructions", "raw 0x964 (...)"
};

// Owns one perf event descriptor.
class event_fd {
 public:
  event_fd() = default;
  explicit event_fd(int fd) noexcept : fd_(fd) {}
  event_fd(event_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  event_fd& operator=(event_fd&& o) noexcept;
  event_fd(const event_fd&) = delete;
  event_fd& operator=(const event_fd&) = delete;
  ~event_fd();
  int get() const noexcept { return fd_; }
  bool valid() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Opens `spec` counting the calling thread on any CPU, user space only (what
// perf_event_paranoid <= 2 allows without privileges), readable as a group with enabled and
// running times. group_fd = -1 makes it a leader, opened disabled; members follow their leader.
// Returns the descriptor, or -errno.
using open_fn = int (*)(const event_spec& spec, int group_fd);
int open_for_this_thread(const event_spec& spec, int group_fd) noexcept;

// Why an open failed, for the "unavailable: ..." text: errno explained with what usually causes
// it (no PMU in a VM, perf_event_paranoid, seccomp, descriptor limits).
std::string refusal_reason(const event_spec& spec, int error, bool as_group_member);

// Group-wide ioctls on a leader (PERF_IOC_FLAG_GROUP). False when the kernel refused.
bool group_reset(int leader) noexcept;
bool group_enable(int leader) noexcept;
bool group_disable(int leader) noexcept;
// The kernel's id of one event, to match values in a group read.
bool event_id(int fd, std::uint64_t& id) noexcept;

// One PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID read of a group.
struct group_sample {
  std::uint64_t enabled_ns = 0, running_ns = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> values;  // (id, count)
};
// Reads into `out` (whose vector keeps its capacity); false on failure.
bool read_group(int leader, group_sample& out) noexcept;

}  // namespace locus::prof
