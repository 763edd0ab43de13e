#include "harness/benchmark.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>

#include "harness/json.hpp"

namespace locus_bench {

namespace {

constexpr std::array<std::string_view, 7> impl_names{"serial", "locus",     "tbb", "omp",
                                                     "taskq",  "taskq-mpi", "tao"};
constexpr std::array<std::string_view, 3> size_names{"small", "medium", "large"};

std::optional<std::int64_t> parse_int(std::string_view s) {
  std::int64_t v = 0;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  if (s.empty() || r.ec != std::errc{} || r.ptr != end) return std::nullopt;
  return v;
}

std::optional<double> parse_real(std::string_view s) {
  double v = 0;
  const char* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  if (s.empty() || r.ec != std::errc{} || r.ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) {
    if (!s.empty()) s += ", ";
    s += i;
  }
  return s;
}

}  // namespace

std::string_view to_string(impl i) noexcept {
  return impl_names[static_cast<std::size_t>(i)];
}

std::optional<impl> parse_impl(std::string_view s) noexcept {
  for (const impl i : all_impls) {
    if (to_string(i) == s) return i;
  }
  return std::nullopt;
}

bool impl_compiled(impl i) noexcept {
  if (i == impl::taskq_mpi) return LOCUS_BENCH_MPI != 0;
#if LOCUS_BENCH_PEERS
  return true;
#else
  return i == impl::serial || i == impl::locus || i == impl::taskq || i == impl::tao;
#endif
}

std::string_view to_string(size_class s) noexcept {
  return size_names[static_cast<std::size_t>(s)];
}

std::optional<size_class> parse_size(std::string_view s) noexcept {
  for (std::size_t i = 0; i < size_names.size(); ++i) {
    if (size_names[i] == s) return static_cast<size_class>(i);
  }
  return std::nullopt;
}

param_spec param_spec::integer(std::string name, std::string description,
                               std::array<std::string, 3> defaults, std::int64_t min,
                               std::int64_t max) {
  param_spec p;
  p.name = std::move(name);
  p.description = std::move(description);
  p.type = kind::integer;
  p.defaults = std::move(defaults);
  p.min = static_cast<double>(min);
  p.max = static_cast<double>(max);
  return p;
}

param_spec param_spec::real(std::string name, std::string description,
                            std::array<std::string, 3> defaults, double min, double max) {
  param_spec p;
  p.name = std::move(name);
  p.description = std::move(description);
  p.type = kind::real;
  p.defaults = std::move(defaults);
  p.min = min;
  p.max = max;
  return p;
}

param_spec param_spec::choice(std::string name, std::string description,
                              std::array<std::string, 3> defaults,
                              std::vector<std::string> choices) {
  param_spec p;
  p.name = std::move(name);
  p.description = std::move(description);
  p.type = kind::choice;
  p.defaults = std::move(defaults);
  p.choices = std::move(choices);
  return p;
}

std::string param_spec::accepted() const {
  switch (type) {
    case kind::integer:
      return "an integer in [" + json::number(static_cast<std::int64_t>(min)) + ", " +
             json::number(static_cast<std::int64_t>(max)) + "]";
    case kind::real:
      return "a number in [" + json::number(min) + ", " + json::number(max) + "]";
    case kind::choice:
      return "one of " + join(choices);
  }
  return {};
}

void param_spec::validate(std::string_view value, std::string_view context) const {
  bool ok = false;
  switch (type) {
    case kind::integer: {
      const auto v = parse_int(value);
      ok = v && static_cast<double>(*v) >= min && static_cast<double>(*v) <= max;
      break;
    }
    case kind::real: {
      const auto v = parse_real(value);
      ok = v && *v >= min && *v <= max;
      break;
    }
    case kind::choice:
      ok = std::find(choices.begin(), choices.end(), value) != choices.end();
      break;
  }
  if (!ok) {
    throw usage_error(std::string(context) + ": invalid value '" + std::string(value) +
                      "': expected " + accepted());
  }
}

void param_values::set(std::string name, std::string value, param_spec::kind type, bool from_user) {
  for (auto& e : entries_) {
    if (e.name == name) {
      e.value = std::move(value);
      e.type = type;
      e.from_user = from_user;
      return;
    }
  }
  entries_.push_back({std::move(name), std::move(value), type, from_user});
}

bool param_values::user_set(std::string_view name) const noexcept {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const entry& e) { return e.name == name && e.from_user; });
}

void param_values::erase(std::string_view name) {
  std::erase_if(entries_, [&](const entry& e) { return e.name == name; });
}

bool param_values::contains(std::string_view name) const noexcept {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const entry& e) { return e.name == name; });
}

const std::string& param_values::text(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return e.value;
  }
  throw std::out_of_range("no parameter " + std::string(name));
}

std::int64_t param_values::integer(std::string_view name) const {
  const auto v = parse_int(text(name));
  if (!v) throw std::invalid_argument("parameter " + std::string(name) + " is not an integer");
  return *v;
}

double param_values::real(std::string_view name) const {
  const auto v = parse_real(text(name));
  if (!v) throw std::invalid_argument("parameter " + std::string(name) + " is not a number");
  return *v;
}

std::string param_values::to_json() const {
  json::object o;
  for (const auto& e : entries_) {
    switch (e.type) {
      case param_spec::kind::integer:
        if (const auto v = parse_int(e.value)) {
          o.num(e.name, *v);
          continue;
        }
        break;
      case param_spec::kind::real:
        if (const auto v = parse_real(e.value)) {
          o.num(e.name, *v);
          continue;
        }
        break;
      case param_spec::kind::choice:
        break;
    }
    o.str(e.name, e.value);
  }
  return o.str();
}

const param_spec* benchmark::find_param(std::string_view key) const noexcept {
  for (const auto& p : params) {
    if (p.name == key) return &p;
  }
  return nullptr;
}

bool benchmark::supports(impl i) const noexcept {
  return std::find(impls.begin(), impls.end(), i) != impls.end() ||
         std::find(on_request.begin(), on_request.end(), i) != on_request.end();
}

param_values benchmark::defaults(size_class size) const {
  param_values v;
  for (const auto& p : params) v.set(p.name, p.defaults[static_cast<std::size_t>(size)], p.type);
  return v;
}

}  // namespace locus_bench
