// Formatting of the per-worker statistics (JSON for locus-bench, a table for LOCUS_STATS=1).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
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

void json_pmu(std::ostringstream& out, const std::vector<pmu_value>& pmu);

void json_worker(std::ostringstream& out, const worker_stats& w) {
  char times[160];
  std::snprintf(times, sizeof times, "\"busy_s\":%.6f,\"idle_s\":%.6f,\"overhead_s\":%.6f",
                w.busy_s, w.idle_s, w.overhead_s);
  out << "{\"worker\":" << w.worker << ',' << times << ",\"spawns\":" << w.spawns
      << ",\"serial_spawns\":" << w.serial_spawns << ",\"suspensions\":" << w.suspensions
      << ",\"local_resumes\":" << w.local_resumes << ",\"chained_tasks\":" << w.chained_tasks
      << ",\"sleeps\":" << w.sleeps << ",\"wakeups\":" << w.wakeups << ",\"pushes\":" << w.pushes
      << ",\"migrations\":" << w.migrations << ",\"cpu_unbinds\":" << w.cpu_unbinds
      << ",\"caller_moves\":" << w.caller_moves << ",\"stolen_items\":" << w.stolen_items
      << ",\"lost_races\":" << w.lost_races << ",\"steals_by_level\":";
  json_array(out, w.steals_by_level);
  out << ",\"failed_steals_by_level\":";
  json_array(out, w.failed_steals_by_level);
  out << ",\"stolen_items_by_level\":";
  json_array(out, w.stolen_items_by_level);
  if (!w.pmu.empty()) json_pmu(out, w.pmu);
  out << '}';
}

// Sums counter by counter (matched by name): a counter is available in the sum only if it is
// in every part; otherwise the sum keeps the first reason.
void add_pmu(std::vector<pmu_value>& into, const std::vector<pmu_value>& from) {
  if (into.empty()) {
    into = from;
    return;
  }
  for (const pmu_value& f : from) {
    auto it = std::find_if(into.begin(), into.end(),
                           [&](const pmu_value& v) { return v.name == f.name; });
    if (it == into.end()) {
      into.push_back(f);
      continue;
    }
    it->enabled_ns += f.enabled_ns;
    it->running_ns += f.running_ns;
    if (!it->value) continue;
    if (!f.value) {
      it->value.reset();
      it->unavailable = f.unavailable;
      it->event = f.event;
      continue;
    }
    *it->value += *f.value;
  }
}

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out + '"';
}

// Whole numbers (counts, bytes) exactly, others with 6 significant digits; never NaN or inf,
// which JSON cannot hold.
std::string policy_number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[64];
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
    std::snprintf(text, sizeof text, "%.0f", v);
  } else {
    std::snprintf(text, sizeof text, "%.6g", v);
  }
  return text;
}

// "pmu":{"instructions":123,"cycles":"unavailable: ...",...},"pmu_running_ratio":{"instructions":1}
// (running / enabled time of each counted counter: below 1 the value was scaled up).
void json_pmu(std::ostringstream& out, const std::vector<pmu_value>& pmu) {
  out << ",\"pmu\":{";
  const char* sep = "";
  for (const pmu_value& v : pmu) {
    out << sep << json_quote(v.name) << ':';
    if (v.value) {
      out << *v.value;
    } else {
      out << json_quote(v.text());
    }
    sep = ",";
  }
  out << "},\"pmu_running_ratio\":{";
  sep = "";
  for (const pmu_value& v : pmu) {
    if (!v.value || v.enabled_ns == 0) continue;
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.4f", v.running_ratio());
    out << sep << json_quote(v.name) << ':' << ratio;
    sep = ",";
  }
  out << '}';
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

// PMU counters, a column each; a counter unavailable in the total is shown as "-" in the table
// and explained below it.
void pmu_table(std::ostringstream& out, const std::vector<worker_stats>& workers,
               const worker_stats& total) {
  out << "PMU counters (user space, per worker thread, over pmu_start .. pmu_stop)\n";
  char cell[64];
  std::snprintf(cell, sizeof cell, "%6s", "worker");
  out << cell;
  for (const pmu_value& v : total.pmu) {
    std::snprintf(cell, sizeof cell, " %15s", v.name.c_str());
    out << cell;
  }
  out << '\n';
  auto row = [&](const worker_stats& w, const std::string& label) {
    std::snprintf(cell, sizeof cell, "%6s", label.c_str());
    out << cell;
    for (const pmu_value& t : total.pmu) {
      auto it = std::find_if(w.pmu.begin(), w.pmu.end(),
                             [&](const pmu_value& v) { return v.name == t.name; });
      const bool have = it != w.pmu.end() && it->value;
      std::snprintf(cell, sizeof cell, " %15s", have ? std::to_string(*it->value).c_str() : "-");
      out << cell;
    }
    out << '\n';
  };
  for (const auto& w : workers) row(w, std::to_string(w.worker));
  row(total, "total");
  for (const pmu_value& v : total.pmu) {
    if (!v.value) {
      out << "  " << v.name << ": " << v.text() << '\n';
    } else if (v.running_ratio() < 1.0) {
      std::snprintf(cell, sizeof cell, "%.1f%%", 100.0 * v.running_ratio());
      out << "  " << v.name << ": multiplexed, counted " << cell << " of the time and scaled up ("
          << v.event << ")\n";
    }
  }
}

}  // namespace

double pmu_value::running_ratio() const noexcept {
  return enabled_ns == 0 ? 1.0 : static_cast<double>(running_ns) / static_cast<double>(enabled_ns);
}

std::string pmu_value::text() const {
  if (value) return std::to_string(*value);
  return "unavailable: " + unavailable;
}

std::uint64_t worker_stats::steals() const noexcept {
  return std::accumulate(steals_by_level.begin(), steals_by_level.end(), std::uint64_t{0});
}

std::uint64_t worker_stats::failed_steals() const noexcept {
  return std::accumulate(failed_steals_by_level.begin(), failed_steals_by_level.end(),
                         std::uint64_t{0});
}

worker_stats& worker_stats::operator+=(const worker_stats& w) {
  busy_s += w.busy_s;
  idle_s += w.idle_s;
  overhead_s += w.overhead_s;
  spawns += w.spawns;
  serial_spawns += w.serial_spawns;
  suspensions += w.suspensions;
  local_resumes += w.local_resumes;
  chained_tasks += w.chained_tasks;
  sleeps += w.sleeps;
  wakeups += w.wakeups;
  pushes += w.pushes;
  migrations += w.migrations;
  cpu_unbinds += w.cpu_unbinds;
  caller_moves += w.caller_moves;
  stolen_items += w.stolen_items;
  lost_races += w.lost_races;
  add_levels(steals_by_level, w.steals_by_level);
  add_levels(failed_steals_by_level, w.failed_steals_by_level);
  add_levels(stolen_items_by_level, w.stolen_items_by_level);
  add_pmu(pmu, w.pmu);
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
  out << "{\"scheduler\":\"" << scheduler << "\",\"steal_levels\":[";
  for (std::size_t i = 0; i < level_names.size(); ++i) {
    out << (i ? "," : "") << json_quote(level_names[i]);
  }
  out << "],\"suppressed_exceptions\":" << suppressed_exceptions
      << ",\"canceled_tasks\":" << canceled_tasks << ",\"policy\":{";
  for (std::size_t i = 0; i < policy.size(); ++i) {
    out << (i ? "," : "") << json_quote(policy[i].name) << ':' << policy_number(policy[i].value);
  }
  out << "},\"total\":";
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
  // Statistics put together by hand may lack the names.
  auto level_name = [&](std::size_t l) {
    return l < level_names.size() ? level_names[l] : "level" + std::to_string(l);
  };
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
      out << (l ? " " : "") << level_name(l) << '=' << w.steals_by_level[l];
    }
    out << '\n';
  };
  for (const auto& w : workers) row(w, std::to_string(w.worker).c_str());
  const worker_stats sum_of_workers = total();
  row(sum_of_workers, "total");
  if (sum_of_workers.serial_spawns != 0) {
    std::snprintf(line, sizeof line,
                  "serial spawns (plain calls, nothing stealable): %llu, %.1f%%\n",
                  static_cast<unsigned long long>(sum_of_workers.serial_spawns),
                  100.0 * static_cast<double>(sum_of_workers.serial_spawns) /
                      static_cast<double>(std::max<std::uint64_t>(sum_of_workers.spawns, 1)));
    out << line;
  }
  if (!sum_of_workers.pmu.empty()) pmu_table(out, workers, sum_of_workers);
  if (suppressed_exceptions != 0) {
    out << "suppressed exceptions (thrown after a group's first one): " << suppressed_exceptions
        << '\n';
  }
  if (canceled_tasks != 0) {
    out << "cancelled tasks (not run: their group was cancelling): " << canceled_tasks << '\n';
  }
  if (!policy.empty()) {
    out << scheduler << ':';
    for (const auto& f : policy) out << ' ' << f.name << '=' << policy_number(f.value);
    out << '\n';
  }
  return out.str();
}

}  // namespace locus
