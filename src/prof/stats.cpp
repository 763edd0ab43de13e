// Formatting of the per-worker statistics (JSON for locus-bench, a table for LOCUS_STATS=1).
#include <cstdio>
#include <sstream>

#include "locus/stats.hpp"

namespace locus {
namespace {

void add_levels(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from) {
  if (into.size() < from.size()) into.resize(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) into[i] += from[i];
}

void json_array(std::ostringstream& out, const std::vector<std::uint64_t>& v) {
  out << '[';
  for (std::size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << v[i];
  out << ']';
}

void json_worker(std::ostringstream& out, const worker_stats& w) {
  char times[160];
  std::snprintf(times, sizeof times, "\"busy_s\":%.6f,\"idle_s\":%.6f,\"overhead_s\":%.6f",
                w.busy_s, w.idle_s, w.overhead_s);
  out << "{\"worker\":" << w.worker << ',' << times << ",\"spawns\":" << w.spawns
      << ",\"suspensions\":" << w.suspensions << ",\"local_resumes\":" << w.local_resumes
      << ",\"sleeps\":" << w.sleeps << ",\"mailbox_pushes\":" << w.mailbox_pushes
      << ",\"steals_by_level\":";
  json_array(out, w.steals_by_level);
  out << ",\"failed_steals_by_level\":";
  json_array(out, w.failed_steals_by_level);
  out << '}';
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

}  // namespace

worker_stats& worker_stats::operator+=(const worker_stats& w) {
  busy_s += w.busy_s;
  idle_s += w.idle_s;
  overhead_s += w.overhead_s;
  spawns += w.spawns;
  suspensions += w.suspensions;
  local_resumes += w.local_resumes;
  sleeps += w.sleeps;
  mailbox_pushes += w.mailbox_pushes;
  add_levels(steals_by_level, w.steals_by_level);
  add_levels(failed_steals_by_level, w.failed_steals_by_level);
  return *this;
}

worker_stats stats::total() const {
  worker_stats t;
  t.worker = -1;
  for (const auto& w : workers) t += w;
  return t;
}

std::string stats::to_json() const {
  std::ostringstream out;
  out << "{\"scheduler\":\"" << scheduler
      << "\",\"suppressed_exceptions\":" << suppressed_exceptions << ",\"total\":";
  json_worker(out, total());
  out << ",\"workers\":[";
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (i) out << ',';
    json_worker(out, workers[i]);
  }
  out << "]}";
  return out.str();
}

std::string stats::to_text() const {
  std::ostringstream out;
  out << "locus statistics (scheduler " << scheduler << ")\n";
  char line[256];
  std::snprintf(line, sizeof line, "%6s %10s %10s %10s %12s %10s %10s %12s %s\n", "worker",
                "busy_s", "idle_s", "ovh_s", "spawns", "steals", "failed", "suspensions",
                "steals by level");
  out << line;
  auto row = [&](const worker_stats& w, const char* label) {
    std::snprintf(line, sizeof line, "%6s %10.4f %10.4f %10.4f %12llu %10llu %10llu %12llu ", label,
                  w.busy_s, w.idle_s, w.overhead_s, static_cast<unsigned long long>(w.spawns),
                  static_cast<unsigned long long>(sum(w.steals_by_level)),
                  static_cast<unsigned long long>(sum(w.failed_steals_by_level)),
                  static_cast<unsigned long long>(w.suspensions));
    out << line;
    for (std::size_t l = 0; l < w.steals_by_level.size(); ++l) {
      out << (l ? " " : "") << 'L' << l << '=' << w.steals_by_level[l];
    }
    out << '\n';
  };
  for (const auto& w : workers) row(w, std::to_string(w.worker).c_str());
  row(total(), "total");
  if (suppressed_exceptions != 0) {
    out << "suppressed exceptions (thrown after a group's first one): " << suppressed_exceptions
        << '\n';
  }
  return out.str();
}

}  // namespace locus
