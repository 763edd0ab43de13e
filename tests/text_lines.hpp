// The lines of a text, without their newlines: what a test reads locus-bench's JSON output as.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace locus_test {

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace locus_test
