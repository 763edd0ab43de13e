#include "dist/dist_config.hpp"

#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>

#include "locus/runtime.hpp"

namespace locus::detail {
namespace {

// A decimal integer in [lo, hi], or nothing.
bool parse_count(std::string_view s, unsigned long long lo, unsigned long long hi,
                 unsigned long long& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size() && v >= lo && v <= hi;
}

}  // namespace

dist_config dist_config::from_environment() {
  dist_config c;
  if (const char* s = std::getenv("LOCUS_DIST_STEAL"); s != nullptr && *s != '\0') {
    const std::string_view v(s);
    unsigned long long n = 0;
    if (v == "half") {
      c.chunk = 0;
    } else if (v == "one") {
      c.chunk = 1;
    } else if (parse_count(v, 1, 1u << 20, n)) {
      c.chunk = static_cast<std::size_t>(n);
    } else {
      throw config_error("LOCUS_DIST_STEAL='" + std::string(v) +
                         "': accepted values are half, one, or a task count in [1, 1048576]");
    }
  }
  if (const char* s = std::getenv("LOCUS_DIST_POOL"); s != nullptr && *s != '\0') {
    unsigned long long n = 0;
    if (!parse_count(s, 1, 1u << 20, n)) {
      throw config_error(std::string("LOCUS_DIST_POOL='") + s +
                         "': accepted values are task counts in [1, 1048576]");
    }
    c.pool = static_cast<std::size_t>(n);
  }
  if (const char* s = std::getenv("LOCUS_DIST_DELAY_US"); s != nullptr && *s != '\0') {
    unsigned long long n = 0;
    if (!parse_count(s, 0, 1000000, n)) {
      throw config_error(std::string("LOCUS_DIST_DELAY_US='") + s +
                         "': accepted values are microseconds in [0, 1000000]");
    }
    c.delay_us = static_cast<unsigned>(n);
  }
  return c;
}

}  // namespace locus::detail
