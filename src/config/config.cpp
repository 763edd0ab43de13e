#include "config/config.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace locus::config {

void reject(std::string_view variable, std::string_view text, std::string_view accepted) {
  throw config_error("locus: invalid " + std::string(variable) + "='" + std::string(text) +
                     "'; accepted values: " + std::string(accepted));
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

namespace {
std::string size_text(std::size_t bytes) {
  for (const auto& [shift, unit] : {std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}}) {
    const std::size_t scale = std::size_t{1} << shift;
    if (bytes >= scale && bytes % scale == 0) return std::to_string(bytes / scale) + unit;
  }
  return std::to_string(bytes);
}
}  // namespace

std::size_t parse_bytes_in(std::string_view variable, std::string_view text, std::size_t min,
                           std::size_t max) {
  const std::string accepted =
      "a size in bytes with an optional K, M or G suffix (powers of 1024), between " +
      size_text(min) + " and " + size_text(max);
  const std::string_view t = trim(text);
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc{} || end == t.data()) reject(variable, text, accepted);
  std::string_view suffix = trim(std::string_view(end, t.data() + t.size() - end));
  std::size_t scale = 1;
  if (!suffix.empty()) {
    const std::string s = lower(suffix);
    if (s == "k" || s == "kb" || s == "kib") {
      scale = std::size_t{1} << 10;
    } else if (s == "m" || s == "mb" || s == "mib") {
      scale = std::size_t{1} << 20;
    } else if (s == "g" || s == "gb" || s == "gib") {
      scale = std::size_t{1} << 30;
    } else {
      reject(variable, text, accepted);
    }
  }
  if (value > std::numeric_limits<std::size_t>::max() / scale) reject(variable, text, accepted);
  value *= scale;
  if (value < min || value > max) reject(variable, text, accepted);
  return value;
}

std::size_t parse_size(std::string_view variable, std::string_view text) {
  return parse_bytes_in(variable, text, min_stack_size, max_stack_size);
}

std::size_t parse_line_size(std::string_view variable, std::string_view text) {
  const std::string_view accepted = "a power of two from 8 to 4096 (bytes)";
  const std::string_view t = trim(text);
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc{} || end == t.data()) reject(variable, text, accepted);
  const std::string suffix = lower(trim(std::string_view(end, t.data() + t.size() - end)));
  if (suffix == "k" || suffix == "kb" || suffix == "kib") {
    if (value > 4) reject(variable, text, accepted);
    value <<= 10;
  } else if (!suffix.empty() && suffix != "b") {
    reject(variable, text, accepted);
  }
  if (value < 8 || value > 4096 || (value & (value - 1)) != 0) reject(variable, text, accepted);
  return value;
}

int parse_positive_int(std::string_view variable, std::string_view text) {
  const std::string_view t = trim(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc{} || end != t.data() + t.size() || value < 1) {
    reject(variable, text, "a positive integer");
  }
  return value;
}

int parse_int_in(std::string_view variable, std::string_view text, int min, int max) {
  const std::string_view t = trim(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec != std::errc{} || end != t.data() + t.size() || value < min || value > max) {
    reject(variable, text, "an integer from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return value;
}

std::vector<double> parse_weights(std::string_view variable, std::string_view text,
                                  std::size_t count, std::string_view meaning) {
  const std::string accepted = std::to_string(count) + " comma-separated non-negative numbers " +
                               std::string(meaning) + ", not all zero";
  std::vector<double> out;
  std::string_view rest = trim(text);
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    double value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || !(value >= 0) ||
        value > 1e12) {
      reject(variable, text, accepted);
    }
    out.push_back(value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  bool any = false;
  for (const double w : out) any = any || w > 0;
  if (out.size() != count || !any) reject(variable, text, accepted);
  return out;
}

std::string normalized(std::string_view text) {
  return lower(trim(text));
}

const char* env_value(const char* name) noexcept {
  const char* v = std::getenv(name);
  if (v == nullptr) return nullptr;
  for (const char* c = v; *c != '\0'; ++c) {
    if (std::isspace(static_cast<unsigned char>(*c)) == 0) return v;
  }
  return nullptr;
}

double parse_positive_real(std::string_view variable, std::string_view text) {
  const std::string s(trim(text));
  char* end = nullptr;
  const double v = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v) || v <= 0) {
    reject(variable, text, "a positive number");
  }
  return v;
}

bool parse_bool(std::string_view variable, std::string_view text) {
  const std::string s = lower(trim(text));
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off" || s.empty()) return false;
  reject(variable, text, "1, 0, true, false, yes, no, on, off");
}

std::string parse_choice(std::string_view variable, std::string_view text,
                         const std::vector<std::string>& accepted) {
  const std::string s = lower(trim(text));
  for (const auto& a : accepted) {
    if (s == a) return a;
  }
  std::string list;
  for (const auto& a : accepted) list += (list.empty() ? "" : ", ") + a;
  reject(variable, text, list);
}

std::vector<int> parse_int_list(std::string_view variable, std::string_view text, int min, int max,
                                const std::vector<std::string>& words, std::size_t max_entries,
                                std::string_view accepted) {
  std::vector<int> out;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    const std::string word = lower(item);
    int value = 0;
    bool named = false;
    for (std::size_t i = 0; i < words.size() && !named; ++i) {
      if (word == words[i]) {
        value = -1 - static_cast<int>(i);
        named = true;
      }
    }
    if (!named) {
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || value < min ||
          value > max) {
        reject(variable, text, accepted);
      }
    }
    out.push_back(value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  if (out.size() > max_entries) reject(variable, text, accepted);
  return out;
}

settings resolve(const options& o, const std::vector<std::string>& schedulers,
                 env_lookup getenv_fn) {
  if (getenv_fn == nullptr) getenv_fn = [](const char* n) -> const char* { return std::getenv(n); };
  auto env = [&](const char* name) -> std::optional<std::string_view> {
    const char* v = getenv_fn(name);
    if (v == nullptr) return std::nullopt;
    return std::string_view(v);
  };
  settings s;
  if (o.sched) {
    s.sched = parse_choice("options::sched", *o.sched, schedulers);
  } else if (auto v = env("LOCUS_SCHED"); v && !trim(*v).empty()) {
    s.sched = parse_choice("LOCUS_SCHED", *v, schedulers);
  } else {
    s.sched = schedulers.front();
  }
  if (o.workers) {
    if (*o.workers < 1)
      reject("options::workers", std::to_string(*o.workers), "a positive integer");
    s.workers = *o.workers;
  } else if (auto v = env("LOCUS_WORKERS"); v && !trim(*v).empty()) {
    s.workers = parse_positive_int("LOCUS_WORKERS", *v);
  }
  if (o.topology) {
    s.topology = *o.topology;
  } else if (auto v = env("LOCUS_TOPOLOGY")) {
    s.topology = std::string(trim(*v));
  }
  if (o.stack_size) {
    s.stack_size = parse_size("options::stack_size", std::to_string(*o.stack_size));
  } else if (auto v = env("LOCUS_STACK_SIZE"); v && !trim(*v).empty()) {
    s.stack_size = parse_size("LOCUS_STACK_SIZE", *v);
  }
  if (o.stats_at_exit) {
    s.stats_at_exit = *o.stats_at_exit;
  } else if (auto v = env("LOCUS_STATS")) {
    s.stats_at_exit = parse_bool("LOCUS_STATS", *v);
  }
  if (o.print_config) {
    s.print_config = *o.print_config;
  } else if (auto v = env("LOCUS_PRINT_CONFIG")) {
    s.print_config = parse_bool("LOCUS_PRINT_CONFIG", *v);
  }
  if (o.pmu) {
    s.pmu = *o.pmu;
  } else if (auto v = env("LOCUS_PMU")) {
    s.pmu = parse_bool("LOCUS_PMU", *v);
  }
  if (o.locality) {
    s.locality = *o.locality;
  } else if (auto v = env("LOCUS_LOCALITY")) {
    s.locality = parse_bool("LOCUS_LOCALITY", *v);
  }
  if (o.locality_line) {
    s.locality_line = parse_line_size("options::locality_line", std::to_string(*o.locality_line));
  } else if (auto v = env("LOCUS_LOCALITY_LINE"); v && !trim(*v).empty()) {
    s.locality_line = parse_line_size("LOCUS_LOCALITY_LINE", *v);
  }
  if (o.trace) {
    s.trace = *o.trace;
    s.trace_variable = "options::trace";
  } else if (auto v = env("LOCUS_TRACE")) {
    // An empty value means no trace; the path itself is checked by opening it at start-up.
    s.trace = std::string(trim(*v));
  }
  if (o.workspan) {
    s.workspan = *o.workspan;
  } else if (auto v = env("LOCUS_WORKSPAN")) {
    s.workspan = parse_bool("LOCUS_WORKSPAN", *v);
  }
  if (o.size_hints) {
    s.size_hints = *o.size_hints;
  } else if (auto v = env("LOCUS_SIZE_HINTS"); v && !trim(*v).empty()) {
    const std::string c =
        parse_choice("LOCUS_SIZE_HINTS", *v, {"given", "learn", "learn-all", "none"});
    s.size_hints = c == "learn"       ? size_hint_source::learn
                   : c == "learn-all" ? size_hint_source::learn_all
                   : c == "none"      ? size_hint_source::none
                                      : size_hint_source::given;
  }
  if (o.size_hint_samples) {
    if (*o.size_hint_samples < min_size_hint_samples ||
        *o.size_hint_samples > max_size_hint_samples) {
      reject("options::size_hint_samples", std::to_string(*o.size_hint_samples),
             "an integer from 1024 to 2^30");
    }
    s.size_hint_samples = *o.size_hint_samples;
  } else if (auto v = env("LOCUS_SIZE_HINTS_SAMPLES"); v && !trim(*v).empty()) {
    s.size_hint_samples = static_cast<std::size_t>(
        parse_int_in("LOCUS_SIZE_HINTS_SAMPLES", *v, static_cast<int>(min_size_hint_samples),
                     static_cast<int>(max_size_hint_samples)));
  }
  return s;
}

const char* size_hint_source_name(size_hint_source s) noexcept {
  switch (s) {
    case size_hint_source::given:
      return "given";
    case size_hint_source::learn:
      return "learn";
    case size_hint_source::learn_all:
      return "learn-all";
    case size_hint_source::none:
      return "none";
  }
  return "given";
}

}  // namespace locus::config
