#include "dist/dist_config.hpp"

#include <cstdlib>
#include <string_view>

#include "config/config.hpp"

namespace locus::detail {

dist_config dist_config::from_environment() {
  dist_config c;
  constexpr int most_tasks = 1 << 20;
  if (const char* s = std::getenv("LOCUS_DIST_STEAL"); s != nullptr && *s != '\0') {
    const std::string_view v(s);
    if (v == "half") {
      c.chunk = 0;
    } else if (v == "one") {
      c.chunk = 1;
    } else if (v.find_first_not_of("0123456789") == std::string_view::npos) {
      c.chunk =
          static_cast<std::size_t>(config::parse_int_in("LOCUS_DIST_STEAL", v, 1, most_tasks));
    } else {
      config::reject("LOCUS_DIST_STEAL", v, "half, one, or a task count from 1 to 1048576");
    }
  }
  if (const char* s = std::getenv("LOCUS_DIST_POOL"); s != nullptr && *s != '\0') {
    c.pool = static_cast<std::size_t>(config::parse_int_in("LOCUS_DIST_POOL", s, 1, most_tasks));
  }
  if (const char* s = std::getenv("LOCUS_DIST_NODE_SIZE"); s != nullptr && *s != '\0') {
    c.node_size =
        static_cast<std::size_t>(config::parse_int_in("LOCUS_DIST_NODE_SIZE", s, 1, most_tasks));
  }
  if (const char* s = std::getenv("LOCUS_DIST_DELAY_US"); s != nullptr && *s != '\0') {
    c.delay_us = static_cast<unsigned>(config::parse_int_in("LOCUS_DIST_DELAY_US", s, 0, 1000000));
  }
  return c;
}

}  // namespace locus::detail
