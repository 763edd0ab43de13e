#include "prof/perf_event.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

namespace locus::prof {
namespace {

constexpr std::uint64_t group_read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                                            PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;

bool is_hardware(std::uint32_t type) {
  return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW;
}

std::string paranoid_level() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  if (!(in >> level)) return "unknown";
  return level;
}

// The kernel names the CPU's PMU "cpu" (x86), "cpu_core"/"cpu_atom" (hybrid x86) or after the
// architecture's PMU (arm*): none of them means no hardware counters reach this machine.
bool cpu_pmu_exposed() {
  for (const char* name : {"cpu", "cpu_core", "cpu_atom", "armv8_pmuv3", "armv8_pmuv3_0"}) {
    std::ifstream type(std::string("/sys/bus/event_source/devices/") + name + "/type");
    if (type.good()) return true;
  }
  return false;
}

}  // namespace

event_fd& event_fd::operator=(event_fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

event_fd::~event_fd() {
  if (fd_ >= 0) ::close(fd_);
}

int open_for_this_thread(const event_spec& spec, int group_fd) noexcept {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = spec.type;
  attr.config = spec.config;
  attr.read_format = group_read_format;
  // Members follow the leader's enable state; only the leader starts disabled.
  attr.disabled = group_fd < 0 ? 1 : 0;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = ::syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

std::string refusal_reason(const event_spec& spec, int error, bool as_group_member) {
  std::string why = spec.label + ": " + std::system_category().message(error);
  switch (error) {
    case EACCES:
    case EPERM:
      why += " (kernel.perf_event_paranoid = " + paranoid_level() +
             "; counting a process's own threads in user space needs 2 or less, or "
             "CAP_PERFMON; a container's seccomp profile can also refuse perf_event_open)";
      break;
    case ENOENT:
    case EOPNOTSUPP:
      if (is_hardware(spec.type) && !cpu_pmu_exposed()) {
        why +=
            " (the kernel exposes no CPU PMU: /sys/bus/event_source/devices/cpu is missing, "
            "as in a VM without a virtual PMU)";
      } else {
        why += " (the kernel has no such event on this CPU)";
      }
      break;
    case ENOSYS:
      why += " (this kernel was built without perf events)";
      break;
    case EMFILE:
    case ENFILE:
      why += " (out of file descriptors: one per counter per worker)";
      break;
    case EINVAL:
    case ENOSPC:
      if (as_group_member) why += " (it does not fit in one group with the other counters)";
      break;
    default:
      break;
  }
  return why;
}

bool group_reset(int leader) noexcept {
  return ::ioctl(leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) == 0;
}

bool group_enable(int leader) noexcept {
  return ::ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) == 0;
}

bool group_disable(int leader) noexcept {
  return ::ioctl(leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) == 0;
}

bool event_id(int fd, std::uint64_t& id) noexcept {
  return ::ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0;
}

bool read_group(int leader, group_sample& out) noexcept {
  // nr, time_enabled, time_running, then (value, id) per event.
  constexpr std::size_t max_events = 16;
  std::uint64_t buf[3 + 2 * max_events];
  const ssize_t n = ::read(leader, buf, sizeof buf);
  if (n < static_cast<ssize_t>(3 * sizeof(std::uint64_t))) return false;
  const std::uint64_t nr = buf[0];
  if (nr > max_events || static_cast<std::size_t>(n) < (3 + 2 * nr) * sizeof(std::uint64_t)) {
    return false;
  }
  out.enabled_ns = buf[1];
  out.running_ns = buf[2];
  out.values.clear();
  for (std::uint64_t i = 0; i < nr; ++i) out.values.emplace_back(buf[4 + 2 * i], buf[3 + 2 * i]);
  return true;
}

}  // namespace locus::prof
