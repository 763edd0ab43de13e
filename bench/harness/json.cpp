#include "harness/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace locus_bench::json {

std::string quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  if (r.ec != std::errc{}) return "null";
  return std::string(buf, r.ptr);
}

std::string number(std::int64_t v) {
  return std::to_string(v);
}

std::string array(const std::vector<double>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ',';
    out += number(values[i]);
  }
  out += ']';
  return out;
}

object& object::raw(std::string_view key, std::string_view json_text) {
  if (text_.size() > 1) text_ += ',';
  text_ += quote(key);
  text_ += ':';
  text_ += json_text;
  return *this;
}

}  // namespace locus_bench::json
