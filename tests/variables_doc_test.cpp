// The registry of LOCUS_* variables (src/config/variables.hpp) against the user guide's table
// (docs/guide.md, between the variables:begin and variables:end markers), against the names the
// sources use, and against the defaults the code runs with. A variable added to the code without
// a registry entry and a guide row fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "config/variables.hpp"
#include "fake_env.hpp"
#include "locus/runtime.hpp"
#include "saved_env.hpp"
#include "sched/policy.hpp"

namespace {

namespace fs = std::filesystem;
using locus::config::find_variable;
using locus::config::variables;

const fs::path kSource = LOCUS_SOURCE_DIR;

// LOCUS_* names in the sources that are not environment variables locus reads.
const std::map<std::string, std::string, std::less<>> kNotVariables = {
    {"LOCUS_BENCH_PEERS", "a CMake option, named in locus-bench's usage errors"},
    {"LOCUS_BUILD_MPI", "a CMake option, named in locus-bench's usage errors"},
    {"LOCUS_REPORT_REEXEC", "set by tools/report for its own re-execution under another Python"},
    {"LOCUS_RUNTIME_IMPLS", "a constant of tools/report_lib"},
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool identifier_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// Every LOCUS_X name in `text` that is a whole identifier.
void names_in(std::string_view text, std::set<std::string>& out) {
  for (std::size_t at = text.find("LOCUS_"); at != std::string_view::npos;
       at = text.find("LOCUS_", at + 1)) {
    if (at > 0 && identifier_char(text[at - 1])) continue;
    std::size_t end = at + 6;
    while (end < text.size() && identifier_char(text[end])) ++end;
    std::string name(text.substr(at, end - at));
    while (name.ends_with('_')) name.pop_back();
    if (name.size() > 6) out.insert(name);
  }
}

// The LOCUS_X names inside the string literals of a C++ file (comments and macros are not
// variables); false when a literal or comment is left open, which would hide the rest.
bool literal_names(std::string_view src, std::set<std::string>& out) {
  std::size_t i = 0;
  const auto closed_at = [&](std::string_view end) {
    const std::size_t e = src.find(end, i);
    if (e == std::string_view::npos) return false;
    i = e + end.size();
    return true;
  };
  while (i < src.size()) {
    const char c = src[i];
    const char prev = i > 0 ? src[i - 1] : ' ';
    if (src.substr(i, 2) == "//") {
      if (!closed_at("\n")) i = src.size();
    } else if (src.substr(i, 2) == "/*") {
      if (!closed_at("*/")) return false;
    } else if (c == 'R' && i + 1 < src.size() && src[i + 1] == '"' &&
               (!identifier_char(prev) || prev == '8' || prev == 'u' || prev == 'U' ||
                prev == 'L')) {
      const std::size_t open = src.find('(', i + 2);
      if (open == std::string_view::npos) return false;
      const std::string end = ")" + std::string(src.substr(i + 2, open - i - 2)) + "\"";
      const std::size_t close = src.find(end, open);
      if (close == std::string_view::npos) return false;
      names_in(src.substr(open + 1, close - open - 1), out);
      i = close + end.size();
    } else if (c == '"' || (c == '\'' && !identifier_char(prev))) {  // not a digit separator
      std::size_t j = i + 1;
      while (j < src.size() && src[j] != c && src[j] != '\n') j += src[j] == '\\' ? 2 : 1;
      if (j >= src.size() || src[j] != c) return false;
      if (c == '"') names_in(src.substr(i + 1, j - i - 1), out);
      i = j + 1;
    } else {
      ++i;
    }
  }
  return true;
}

// Where each LOCUS_X name is used: string literals of the C++ sources (src, include, bench), and
// anywhere in the scripts of tools/ (shell and Python, where a variable is just a word).
std::map<std::string, std::string> names_in_sources() {
  std::map<std::string, std::string> where;
  const auto add = [&](const std::set<std::string>& names, const fs::path& p) {
    for (const auto& n : names) where.emplace(n, fs::relative(p, kSource).string());
  };
  for (const char* dir : {"src", "include", "bench"}) {
    for (const auto& e : fs::recursive_directory_iterator(kSource / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      std::set<std::string> names;
      EXPECT_TRUE(literal_names(read_file(e.path()), names))
          << e.path() << ": a literal or comment is not closed; the scan cannot read it";
      add(names, e.path());
    }
  }
  for (const auto& e : fs::recursive_directory_iterator(kSource / "tools")) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || ext == ".pyc") continue;
    std::set<std::string> names;
    names_in(read_file(e.path()), names);
    add(names, e.path());
  }
  return where;
}

std::string cell_text(std::string_view cell) {
  std::string out;
  for (const char c : cell) {
    if (c == '`') continue;  // code spans are formatting, not content
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

struct guide_row {
  int line = 0;
  std::vector<std::string> cells;
};

// The rows of the guide's variable table, header first.
std::vector<guide_row> guide_table() {
  std::ifstream in(kSource / "docs" / "guide.md");
  EXPECT_TRUE(in) << "cannot read " << (kSource / "docs" / "guide.md");
  std::vector<guide_row> rows;
  bool inside = false;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find("<!-- variables:begin -->") != std::string::npos) inside = true;
    if (line.find("<!-- variables:end -->") != std::string::npos) break;
    if (!inside || !line.starts_with('|') || line.starts_with("|---")) continue;
    guide_row row{line_no, {}};
    std::string_view rest = std::string_view(line).substr(1);
    for (std::size_t bar; (bar = rest.find('|')) != std::string_view::npos;) {
      row.cells.push_back(cell_text(rest.substr(0, bar)));
      rest = rest.substr(bar + 1);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> built_in_schedulers() {
  std::vector<std::string> out;
  for (const auto& name : locus::detail::policy_names()) {
    if (!name.starts_with("test-")) out.push_back(name);  // the tests' own policies
  }
  return out;
}

std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> out;
  for (std::size_t comma; !list.empty();
       list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 2)) {
    comma = list.find(", ");
    out.emplace_back(list.substr(0, comma));
  }
  return out;
}

TEST(VariablesDoc, GuideTableMatchesTheRegistry) {
  const std::vector<guide_row> rows = guide_table();
  ASSERT_FALSE(rows.empty()) << "docs/guide.md has no table between <!-- variables:begin --> and "
                                "<!-- variables:end -->";
  const std::vector<std::string> header{"variable", "applies to", "accepted values", "default",
                                        "meaning"};
  ASSERT_EQ(rows.front().cells, header) << "docs/guide.md:" << rows.front().line;
  std::map<std::string, int> seen;
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const guide_row& row = rows[r];
    ASSERT_EQ(row.cells.size(), header.size()) << "docs/guide.md:" << row.line;
    const std::string& name = row.cells[0];
    if (seen[name]++ > 0) ADD_FAILURE() << "docs/guide.md:" << row.line << ": " << name << " again";
    const locus::config::variable* v = find_variable(name);
    if (v == nullptr) {
      ADD_FAILURE() << "docs/guide.md:" << row.line << ": " << name
                    << " is not in the registry (src/config/variables.cpp)";
      continue;
    }
    EXPECT_EQ(row.cells[1], v->applies_to) << "docs/guide.md:" << row.line << ", " << name;
    EXPECT_EQ(row.cells[2], v->accepted) << "docs/guide.md:" << row.line << ", " << name;
    EXPECT_EQ(row.cells[3], v->default_value) << "docs/guide.md:" << row.line << ", " << name;
    EXPECT_EQ(row.cells[4], v->meaning) << "docs/guide.md:" << row.line << ", " << name;
  }
  for (const auto& v : variables()) {
    EXPECT_TRUE(seen.contains(std::string(v.name)))
        << v.name << " is in the registry but has no row in docs/guide.md's variable table";
  }
}

TEST(VariablesDoc, EveryNameInTheSourcesIsRegistered) {
  const std::map<std::string, std::string> used = names_in_sources();
  for (const auto& [name, file] : used) {
    EXPECT_TRUE(find_variable(name) != nullptr || kNotVariables.contains(name))
        << name << " (" << file
        << ") is not in the registry: add it to src/config/variables.cpp and a row to "
           "docs/guide.md, or, if it is not an environment variable, to kNotVariables here";
  }
  for (const auto& v : variables()) {
    EXPECT_TRUE(used.contains(std::string(v.name)))
        << v.name << " is registered but no source reads or names it any more";
  }
}

TEST(VariablesDoc, SchedulersAreTheBuiltInPolicies) {
  const std::vector<std::string> scheds = built_in_schedulers();
  const locus::config::variable* sched = find_variable("LOCUS_SCHED");
  ASSERT_NE(sched, nullptr);
  EXPECT_EQ(split_list(sched->accepted), scheds) << "src/sched/policy_registry.cpp";
  EXPECT_EQ(sched->default_value, scheds.front());
  for (const auto& v : variables()) {
    for (const auto& who : split_list(v.applies_to)) {
      const bool known = who == "all" || who == "dist_taskq" || who.starts_with("tools/") ||
                         std::find(scheds.begin(), scheds.end(), who) != scheds.end();
      EXPECT_TRUE(known) << v.name << " applies to " << who << ", which is no scheduler";
    }
  }
}

std::string default_of(std::string_view name) {
  const locus::config::variable* v = find_variable(name);
  return v != nullptr ? std::string(v->default_value) : "(not registered)";
}

TEST(VariablesDoc, RuntimeDefaultsAreTheRegistrys) {
  const locus::config::settings s = locus_test::resolve_with({}, {}, built_in_schedulers());
  EXPECT_EQ(s.sched, default_of("LOCUS_SCHED"));
  EXPECT_EQ(s.stack_size, locus::config::parse_size("", default_of("LOCUS_STACK_SIZE")));
  EXPECT_EQ(locus::config::size_hint_source_name(s.size_hints), default_of("LOCUS_SIZE_HINTS"));
  EXPECT_EQ(std::to_string(s.size_hint_samples), default_of("LOCUS_SIZE_HINTS_SAMPLES"));
  const std::pair<const char*, bool> flags[] = {{"LOCUS_STATS", s.stats_at_exit},
                                                {"LOCUS_PRINT_CONFIG", s.print_config},
                                                {"LOCUS_PMU", s.pmu},
                                                {"LOCUS_LOCALITY", s.locality},
                                                {"LOCUS_WORKSPAN", s.workspan}};
  for (const auto& [name, on] : flags) {
    EXPECT_EQ(on ? "1" : "0", default_of(name)) << name;
  }
}

// Equal as text, or as numbers ("0.002" and "0.002000").
bool same_value(std::string_view a, std::string_view b) {
  if (a == b) return true;
  double x = 0, y = 0;
  const auto ra = std::from_chars(a.data(), a.data() + a.size(), x);
  const auto rb = std::from_chars(b.data(), b.data() + b.size(), y);
  return ra.ec == std::errc{} && ra.ptr == a.data() + a.size() && rb.ec == std::errc{} &&
         rb.ptr == b.data() + b.size() && x == y;
}

// Each scheduler's settings as describe() shows them with nothing set: every LOCUS_* key it
// prints is registered, and those whose registry default is a plain value print that value.
TEST(VariablesDoc, SchedulerDefaultsAreTheRegistrys) {
  std::vector<std::unique_ptr<locus_test::saved_env>> cleared;
  for (const auto& v : variables()) {
    cleared.push_back(
        std::make_unique<locus_test::saved_env>(std::string(v.name).c_str(), nullptr));
  }
  const std::set<std::string> plain = {
      "LOCUS_WS_JOIN",           "LOCUS_ADWS_STEAL",      "LOCUS_NUMA_WS_WEIGHTS",
      "LOCUS_NUMA_WS_THRESHOLD", "LOCUS_HWS_QUEUE_BOUND", "LOCUS_CATS_SOURCE",
      "LOCUS_CATS_BOUND",        "LOCUS_CATS_CMPI",       "LOCUS_CATS_PROFILE_TASKS",
      "LOCUS_TAO_STEAL",         "LOCUS_ADWS_PATIENCE"};
  std::set<std::string> checked;
  for (const auto& sched : built_in_schedulers()) {
    locus::runtime rt{
        locus::options{.sched = sched, .workers = 2, .topology = "pack:2 core:1 pu:1"}};
    std::istringstream text(rt.describe());
    for (std::string line; std::getline(text, line);) {
      const std::size_t eq = line.find(" = ");
      std::istringstream key_in(line.substr(0, eq));
      std::string key;
      key_in >> key;
      if (eq == std::string::npos || !key.starts_with("LOCUS_")) continue;
      EXPECT_NE(find_variable(key), nullptr) << sched << " prints " << key << ", not registered";
      if (!plain.contains(key)) continue;
      std::istringstream value_in(line.substr(eq + 3));
      std::string value;
      value_in >> value;  // the first word: "8,2,1 (local,neighbour,remote)"
      EXPECT_TRUE(same_value(value, default_of(key)))
          << sched << ": " << key << " = " << value << ", registry default " << default_of(key);
      checked.insert(key);
    }
  }
  EXPECT_EQ(checked, plain) << "some scheduler no longer prints its setting";
}

}  // namespace
