// The registry of every LOCUS_* environment variable that locus reads: the library, locus-bench
// and the scripts in tools/. It is the one list the user guide's variable table (docs/guide.md,
// "Every variable") is checked against, and tests/variables_doc_test.cpp fails when a LOCUS_*
// name appears in the sources without an entry here, or an entry without its row in the guide.
#pragma once

#include <span>
#include <string_view>

namespace locus::config {

struct variable {
  std::string_view name;
  // Who reads it: "all" (every scheduler), scheduler names ("adws, ml-adws"), "dist_taskq",
  // "locus-bench", or tools/ scripts.
  std::string_view applies_to;
  std::string_view accepted;       // the values the parser accepts, as the guide states them
  std::string_view default_value;  // what holds when the variable is unset
  std::string_view meaning;        // one line
};

// In the guide's order: runtime-wide settings, each scheduler's own, the distributed taskq's,
// then the tools' scripts'.
std::span<const variable> variables() noexcept;

// The entry named `name`, or null.
const variable* find_variable(std::string_view name) noexcept;

}  // namespace locus::config
