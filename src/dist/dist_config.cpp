#include "dist/dist_config.hpp"

#include <charconv>
#include <cstddef>
#include <string>
#include <system_error>

#include "config/config.hpp"

namespace locus::detail {

dist_config dist_config::from_environment() {
  dist_config c;
  constexpr int most_tasks = 1 << 20;
  if (const char* s = config::env_value("LOCUS_DIST_STEAL")) {
    constexpr const char* accepted = "half, one, or a task count from 1 to 1048576";
    const std::string v = config::normalized(s);
    if (v == "half") {
      c.chunk = 0;
    } else if (v == "one") {
      c.chunk = 1;
    } else {
      std::size_t n = 0;
      const auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (v.empty() || error != std::errc{} || end != v.data() + v.size() || n < 1 ||
          n > static_cast<std::size_t>(most_tasks)) {
        config::reject("LOCUS_DIST_STEAL", s, accepted);
      }
      c.chunk = n;
    }
  }
  if (const char* s = config::env_value("LOCUS_DIST_POOL")) {
    c.pool = static_cast<std::size_t>(config::parse_int_in("LOCUS_DIST_POOL", s, 1, most_tasks));
  }
  if (const char* s = config::env_value("LOCUS_DIST_NODE_SIZE")) {
    c.node_size =
        static_cast<std::size_t>(config::parse_int_in("LOCUS_DIST_NODE_SIZE", s, 1, most_tasks));
  }
  if (const char* s = config::env_value("LOCUS_DIST_DELAY_US")) {
    c.delay_us = static_cast<unsigned>(config::parse_int_in("LOCUS_DIST_DELAY_US", s, 0, 1000000));
  }
  return c;
}

}  // namespace locus::detail
