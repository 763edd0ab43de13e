// Formatting and merging of locality reports (JSON for locus-bench, a table for LOCUS_LOCALITY=1).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "locus/locality.hpp"

namespace locus {
namespace {

std::optional<double> ratio(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return std::nullopt;
  return static_cast<double>(part) / static_cast<double>(whole);
}

std::string json_number(const std::optional<double>& v) {
  if (!v) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", *v);
  return buf;
}

std::string percent(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", 100 * *v);
  return buf;
}

}  // namespace

std::optional<double> locality_level::miss_ratio() const {
  return ratio(misses, accesses);
}

std::optional<double> locality_report::numa_remote_share() const {
  return ratio(remote_line_accesses, line_accesses);
}

std::optional<double> locality_report::numa_remote_memory_share() const {
  return ratio(remote_memory_accesses, memory_accesses);
}

std::optional<double> locality_report::mapping_stability() const {
  return ratio(leaves_same, leaves_compared);
}

locality_report& locality_report::operator+=(const locality_report& o) {
  if (line_bytes == 0) line_bytes = o.line_bytes;
  if (page_bytes == 0) page_bytes = o.page_bytes;
  numa_nodes = std::max(numa_nodes, o.numa_nodes);
  ranges += o.ranges;
  unattributed += o.unattributed;
  dropped += o.dropped;
  for (const locality_level& l : o.levels) {
    locality_level* mine = nullptr;
    for (auto& m : levels) {
      if (m.level == l.level) mine = &m;
    }
    if (mine == nullptr) {
      levels.push_back(l);
      continue;
    }
    mine->instances = std::max(mine->instances, l.instances);
    if (mine->cache_bytes == 0) mine->cache_bytes = l.cache_bytes;
    mine->accesses += l.accesses;
    mine->misses += l.misses;
    mine->write_misses += l.write_misses;
    mine->from_peers += l.from_peers;
    mine->invalidations += l.invalidations;
  }
  line_accesses += o.line_accesses;
  remote_line_accesses += o.remote_line_accesses;
  memory_accesses += o.memory_accesses;
  remote_memory_accesses += o.remote_memory_accesses;
  leaves_compared += o.leaves_compared;
  leaves_same += o.leaves_same;
  return *this;
}

std::string locality_report::to_json() const {
  std::ostringstream out;
  out << "{\"line_bytes\":" << line_bytes << ",\"page_bytes\":" << page_bytes
      << ",\"ranges\":" << ranges << ",\"unattributed\":" << unattributed
      << ",\"dropped\":" << dropped << ",\"levels\":[";
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const locality_level& l = levels[i];
    out << (i ? "," : "") << "{\"level\":" << l.level << ",\"instances\":" << l.instances
        << ",\"cache_bytes\":" << l.cache_bytes << ",\"accesses\":" << l.accesses
        << ",\"misses\":" << l.misses << ",\"miss_ratio\":" << json_number(l.miss_ratio())
        << ",\"write_misses\":" << l.write_misses << ",\"from_peers\":" << l.from_peers
        << ",\"invalidations\":" << l.invalidations << '}';
  }
  out << "],\"numa\":{\"nodes\":" << numa_nodes << ",\"line_accesses\":" << line_accesses
      << ",\"remote_line_accesses\":" << remote_line_accesses
      << ",\"remote_share\":" << json_number(numa_remote_share())
      << ",\"memory_accesses\":" << memory_accesses
      << ",\"remote_memory_accesses\":" << remote_memory_accesses
      << ",\"remote_memory_share\":" << json_number(numa_remote_memory_share())
      << "},\"mapping\":{\"leaves_compared\":" << leaves_compared
      << ",\"leaves_same\":" << leaves_same << ",\"stability\":" << json_number(mapping_stability())
      << "}}";
  return out.str();
}

std::string locality_report::to_text() const {
  std::ostringstream out;
  out << "locus locality model (" << line_bytes << "-byte lines, fully associative LRU caches)\n";
  char row[160];
  std::snprintf(row, sizeof row, "  %-6s %9s %12s %16s %16s %9s %14s\n", "level", "instances",
                "cache bytes", "accesses", "misses", "miss rate", "from peers");
  out << row;
  for (const locality_level& l : levels) {
    std::snprintf(row, sizeof row, "  L%-5d %9d %12zu %16llu %16llu %9s %14llu\n", l.level,
                  l.instances, l.cache_bytes, static_cast<unsigned long long>(l.accesses),
                  static_cast<unsigned long long>(l.misses), percent(l.miss_ratio()).c_str(),
                  static_cast<unsigned long long>(l.from_peers));
    out << row;
  }
  out << "  NUMA nodes " << numa_nodes << ": remote first touch " << percent(numa_remote_share())
      << " of line accesses, " << percent(numa_remote_memory_share()) << " of memory accesses\n";
  out << "  mapping stability " << percent(mapping_stability()) << " of " << leaves_compared
      << " leaves compared\n";
  if (unattributed != 0 || dropped != 0) {
    out << "  not modeled: " << unattributed << " declarations from other threads, " << dropped
        << " lost\n";
  }
  return out.str();
}

}  // namespace locus
