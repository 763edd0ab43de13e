// Minimal JSON writing for locus-bench's one-line-per-configuration output.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace locus_bench::json {

// "text" with quotes, backslashes and control characters escaped.
std::string quote(std::string_view text);
// Shortest text that reads back to the same double; non-finite values become null.
std::string number(double v);
std::string number(std::int64_t v);
// [1.5,2]
std::string array(const std::vector<double>& values);

// Builds {"key":value,...} in insertion order; values are raw JSON text.
class object {
 public:
  object& raw(std::string_view key, std::string_view json_text);
  object& str(std::string_view key, std::string_view value) { return raw(key, quote(value)); }
  object& num(std::string_view key, double v) { return raw(key, number(v)); }
  object& num(std::string_view key, std::int64_t v) { return raw(key, number(v)); }
  object& boolean(std::string_view key, bool v) { return raw(key, v ? "true" : "false"); }
  object& null(std::string_view key) { return raw(key, "null"); }
  std::string str() const { return text_ + "}"; }

 private:
  std::string text_ = "{";
};

}  // namespace locus_bench::json
