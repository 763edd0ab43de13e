// cgroup CPU quotas: v2 cpu.max and v1 cpu.cfs_quota_us / cpu.cfs_period_us, read along the
// process's cgroup path up to the hierarchy's root; the smallest quota on the way wins.
#include "topology/cgroup.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace locus::topo {
namespace fs = std::filesystem;

namespace {

constexpr double kNone = -1.0;

// The cgroup paths of /proc/self/cgroup ("ID:controllers:path"): the v2 one ("0::path") and
// the v1 one whose controller list names "cpu". Paths default to the hierarchy's root.
struct cgroup_paths {
  std::string v2 = "/";
  std::string v1_cpu = "/";
};

cgroup_paths read_cgroup_paths(const fs::path& root) {
  cgroup_paths paths;
  std::error_code ec;
  fs::path file = root / "proc/self/cgroup";
  if (!fs::exists(file, ec)) file = "/proc/self/cgroup";
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (id == "0" && controllers.empty()) {
      paths.v2 = path;
      continue;
    }
    std::istringstream list(controllers);
    std::string controller;
    while (std::getline(list, controller, ',')) {
      if (controller == "cpu") paths.v1_cpu = path;
    }
  }
  return paths;
}

// `base`/`path` and each of its parents down to `base` itself, deepest first.
std::vector<fs::path> chain(const fs::path& base, const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& part : fs::path(path).relative_path()) {
    const std::string s = part.string();
    if (s.empty() || s == "." || s == "..") continue;
    parts.push_back(s);
  }
  std::vector<fs::path> dirs;
  for (std::size_t keep = parts.size() + 1; keep-- > 0;) {
    fs::path dir = base;
    for (std::size_t i = 0; i < keep; ++i) dir /= parts[i];
    dirs.push_back(dir);
  }
  return dirs;
}

double smaller(double a, double b) {
  if (a <= 0) return b;
  if (b <= 0) return a;
  return std::min(a, b);
}

// cgroup v2 cpu.max: "max 100000" (no limit) or "150000 100000" (1.5 CPUs).
double read_cpu_max(const fs::path& file) {
  std::ifstream in(file);
  std::string quota;
  double period = 100000;
  if (!(in >> quota) || quota == "max") return kNone;
  in >> period;
  try {
    const double q = std::stod(quota);
    return q > 0 && period > 0 ? q / period : kNone;
  } catch (const std::exception&) {
    return kNone;
  }
}

// cgroup v1: cpu.cfs_quota_us (-1 when unlimited) over cpu.cfs_period_us.
double read_cfs(const fs::path& dir) {
  std::ifstream quota_in(dir / "cpu.cfs_quota_us");
  std::ifstream period_in(dir / "cpu.cfs_period_us");
  double quota = -1;
  double period = 0;
  if (!(quota_in >> quota) || !(period_in >> period)) return kNone;
  return quota > 0 && period > 0 ? quota / period : kNone;
}

}  // namespace

double cgroup_cpu_quota(const std::string& root) {
  const fs::path top = root.empty() ? fs::path("/") : fs::path(root);
  const cgroup_paths paths = read_cgroup_paths(top);
  double best = kNone;
  // v2, unified at /sys/fs/cgroup or, on hybrid systems, at /sys/fs/cgroup/unified.
  for (const char* base : {"sys/fs/cgroup", "sys/fs/cgroup/unified"}) {
    for (const auto& dir : chain(top / base, paths.v2)) {
      best = smaller(best, read_cpu_max(dir / "cpu.max"));
    }
  }
  // v1, where the cpu controller may be mounted alone or together with cpuacct.
  for (const char* base :
       {"sys/fs/cgroup/cpu", "sys/fs/cgroup/cpu,cpuacct", "sys/fs/cgroup/cpuacct,cpu"}) {
    for (const auto& dir : chain(top / base, paths.v1_cpu)) best = smaller(best, read_cfs(dir));
  }
  return best;
}

int cap_workers(int allowed_pus, double quota_cpus) noexcept {
  int workers = std::max(allowed_pus, 1);
  if (quota_cpus > 0 && std::isfinite(quota_cpus)) {
    // A tiny tolerance so that 2.0000000001 CPUs (period rounding) still mean 2 workers.
    const double rounded = std::ceil(quota_cpus - 1e-6);
    const int cap = rounded >= workers ? workers : static_cast<int>(rounded);
    workers = std::min(workers, std::max(cap, 1));
  }
  return workers;
}

}  // namespace locus::topo
