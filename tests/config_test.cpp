// Tests of src/config: the parsers, resolve() with an injected environment, and the public path
// (locus::runtime reading LOCUS_* variables, rejecting bad values with a config_error that names
// the variable and the accepted values, LOCUS_PRINT_CONFIG, describe()).
#include "config/config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "fake_env.hpp"
#include "locus/locus.hpp"
#include "saved_env.hpp"
#include "topology/topology.hpp"

using locus::config_error;

namespace {

constexpr const char* kEight = "pack:2 l3:1 l2:4 core:1 pu:1";
constexpr const char* kSixteen = "pack:2 l3:1 l2:8 core:1 pu:1";

const std::vector<std::string> kScheds{"ws", "hws", "numa-ws"};

// ---- helpers ---------------------------------------------------------------------------------

testing::AssertionResult contains_fmt(const char* text_expr, const char* part_expr,
                                      const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << text_expr << " does not contain " << part_expr
                                     << "\n  text: " << text << "\n  part: " << part;
}
testing::AssertionResult lacks_fmt(const char* text_expr, const char* part_expr,
                                   const std::string& text, const std::string& part) {
  if (text.find(part) == std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure()
         << text_expr << " contains " << part_expr << "\n  text: " << text << "\n  part: " << part;
}
#define EXPECT_CONTAINS(text, part) EXPECT_PRED_FORMAT2(contains_fmt, text, part)
#define EXPECT_LACKS(text, part) EXPECT_PRED_FORMAT2(lacks_fmt, text, part)

// Runs f, expects a config_error, returns its message.
template <class F>
std::string config_error_of(F&& f) {
  try {
    f();
  } catch (const config_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected locus::config_error, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected locus::config_error, nothing was thrown";
  return {};
}

// The injected environment for resolve() (tests/fake_env.hpp), with this file's policy names.
locus::config::settings resolve_with(std::map<std::string, std::string> env,
                                     const locus::options& o = {}) {
  return locus_test::resolve_with(std::move(env), o, kScheds);
}

// The real environment: every LOCUS_* variable this file touches is cleared for the test and
// restored afterwards (each test normally runs in its own process, but not when the binary is
// run by hand).
class ConfigRuntimeTest : public testing::Test {
 protected:
  static void set(const char* name, const char* value) { ::setenv(name, value, 1); }

  // Constructing a runtime from the environment must fail; returns the message.
  static std::string construct_error(const locus::options& o = {}) {
    return config_error_of([&] { locus::runtime rt{o}; });
  }

 private:
  locus_test::saved_env env_{"LOCUS_SCHED",      "LOCUS_WORKERS", "LOCUS_TOPOLOGY",
                             "LOCUS_STACK_SIZE", "LOCUS_STATS",   "LOCUS_PRINT_CONFIG",
                             "LOCUS_TRACE",      "LOCUS_PMU"};
};

// describe(): "key = value" per line, keys trimmed.
std::map<std::string, std::string> parse_description(const std::string& text) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t");
    const auto e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    if (const auto eq = line.find('='); eq != std::string::npos) {
      out[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
    pos = nl + 1;
  }
  return out;
}

// ---- config_error ----------------------------------------------------------------------------

TEST(ConfigTest, ConfigErrorIsAnInvalidArgument) {
  static_assert(std::is_base_of_v<std::invalid_argument, config_error>);
  const std::string msg =
      config_error_of([] { locus::config::parse_positive_int("LOCUS_WORKERS", "zero"); });
  EXPECT_CONTAINS(msg, "LOCUS_WORKERS");
}

// ---- parse_size ------------------------------------------------------------------------------

TEST(ConfigTest, ParseSizeAcceptsBytesAndBinarySuffixes) {
  using locus::config::parse_size;
  EXPECT_EQ(parse_size("V", "1048576"), 1048576u);
  EXPECT_EQ(parse_size("V", "64K"), 64u * 1024);
  EXPECT_EQ(parse_size("V", "64k"), 64u * 1024);
  EXPECT_EQ(parse_size("V", "64KB"), 64u * 1024);
  EXPECT_EQ(parse_size("V", "64KiB"), 64u * 1024);
  EXPECT_EQ(parse_size("V", "1M"), 1024u * 1024);
  EXPECT_EQ(parse_size("V", "2m"), 2u * 1024 * 1024);
  EXPECT_EQ(parse_size("V", "1G"), std::size_t{1} << 30);
  EXPECT_EQ(parse_size("V", " 256K "), 256u * 1024);
  EXPECT_EQ(parse_size("V", "256 K"), 256u * 1024);
  // The bounds themselves are accepted.
  EXPECT_EQ(parse_size("V", "16K"), locus::config::min_stack_size);
  EXPECT_EQ(parse_size("V", "16384"), locus::config::min_stack_size);
  EXPECT_EQ(parse_size("V", "1024M"), locus::config::max_stack_size);
}

TEST(ConfigTest, ParseSizeRejectsGarbageAndOutOfRange) {
  using locus::config::parse_size;
  for (const char* bad :
       {"12", "1T", "foo", "8K", "16383", "", "   ", "K", "-1", "-64K", "64Q", "64KK", "1.5M", "2G",
        "1025M", "99999999999999999999", "99999999999999999G"}) {
    SCOPED_TRACE(std::string("value '") + bad + "'");
    const std::string msg = config_error_of([&] { parse_size("LOCUS_STACK_SIZE", bad); });
    EXPECT_CONTAINS(msg, "LOCUS_STACK_SIZE");
    EXPECT_CONTAINS(msg, std::string("'") + bad + "'") << "the message quotes the value";
    EXPECT_CONTAINS(msg, "16K") << "the message gives the minimum";
    EXPECT_CONTAINS(msg, "K, M or G") << "the message lists the suffixes";
  }
}

// ---- parse_positive_int ----------------------------------------------------------------------

TEST(ConfigTest, ParsePositiveInt) {
  using locus::config::parse_positive_int;
  EXPECT_EQ(parse_positive_int("V", "1"), 1);
  EXPECT_EQ(parse_positive_int("V", "16"), 16);
  EXPECT_EQ(parse_positive_int("V", " 7 "), 7);
  for (const char* bad : {"0", "-3", "abc", "2x", "", " ", "1.5", "+", "x2", "99999999999"}) {
    SCOPED_TRACE(std::string("value '") + bad + "'");
    const std::string msg = config_error_of([&] { parse_positive_int("LOCUS_WORKERS", bad); });
    EXPECT_CONTAINS(msg, "LOCUS_WORKERS");
    EXPECT_CONTAINS(msg, "positive integer");
  }
}

// ---- parse_bool ------------------------------------------------------------------------------

TEST(ConfigTest, ParseBool) {
  using locus::config::parse_bool;
  for (const char* yes : {"1", "true", "TRUE", "yes", "on", " On "}) {
    EXPECT_TRUE(parse_bool("V", yes)) << yes;
  }
  for (const char* no : {"0", "false", "False", "no", "off", ""}) {
    EXPECT_FALSE(parse_bool("V", no)) << no;
  }
  for (const char* bad : {"maybe", "2", "y", "enable", "10"}) {
    SCOPED_TRACE(std::string("value '") + bad + "'");
    const std::string msg = config_error_of([&] { parse_bool("LOCUS_STATS", bad); });
    EXPECT_CONTAINS(msg, "LOCUS_STATS");
    EXPECT_CONTAINS(msg, "true");
    EXPECT_CONTAINS(msg, "false");
  }
}

// ---- parse_choice ----------------------------------------------------------------------------

TEST(ConfigTest, ParseChoice) {
  using locus::config::parse_choice;
  EXPECT_EQ(parse_choice("V", "ws", kScheds), "ws");
  EXPECT_EQ(parse_choice("V", "WS", kScheds), "ws");
  EXPECT_EQ(parse_choice("V", " numa-ws ", kScheds), "numa-ws");
  for (const char* bad : {"bogus", "", "w", "wss", "numa"}) {
    SCOPED_TRACE(std::string("value '") + bad + "'");
    const std::string msg = config_error_of([&] { parse_choice("LOCUS_SCHED", bad, kScheds); });
    EXPECT_CONTAINS(msg, "LOCUS_SCHED");
    for (const auto& s : kScheds) EXPECT_CONTAINS(msg, s) << "lists every choice";
  }
}

// ---- resolve ---------------------------------------------------------------------------------

TEST(ConfigTest, ResolveDefaults) {
  const auto s = resolve_with({});
  EXPECT_EQ(s.sched, "ws") << "the first scheduler is the default";
  EXPECT_FALSE(s.workers.has_value());
  EXPECT_EQ(s.topology, "");
  EXPECT_EQ(s.stack_size, locus::config::default_stack_size);
  EXPECT_FALSE(s.stats_at_exit);
  EXPECT_FALSE(s.print_config);
  EXPECT_FALSE(s.pmu) << "PMU counting is opt-in";
}

TEST(ConfigTest, ResolveReadsTheEnvironment) {
  const auto s = resolve_with({{"LOCUS_SCHED", "hws"},
                               {"LOCUS_WORKERS", "3"},
                               {"LOCUS_TOPOLOGY", std::string("  ") + kEight + " "},
                               {"LOCUS_STACK_SIZE", "1M"},
                               {"LOCUS_STATS", "yes"},
                               {"LOCUS_PRINT_CONFIG", "1"},
                               {"LOCUS_PMU", "on"}});
  EXPECT_EQ(s.sched, "hws");
  EXPECT_EQ(s.workers, std::optional<int>(3));
  EXPECT_EQ(s.topology, kEight) << "surrounding blanks are trimmed";
  EXPECT_EQ(s.stack_size, 1024u * 1024);
  EXPECT_TRUE(s.stats_at_exit);
  EXPECT_TRUE(s.print_config);
  EXPECT_TRUE(s.pmu);
}

TEST(ConfigTest, ResolveTreatsBlankValuesAsUnset) {
  const auto s = resolve_with({{"LOCUS_SCHED", ""},
                               {"LOCUS_WORKERS", "  "},
                               {"LOCUS_TOPOLOGY", ""},
                               {"LOCUS_STACK_SIZE", " "}});
  EXPECT_EQ(s.sched, "ws");
  EXPECT_FALSE(s.workers.has_value());
  EXPECT_EQ(s.topology, "");
  EXPECT_EQ(s.stack_size, locus::config::default_stack_size);
}

// A program that must run on the real machine says so with an empty topology, which the
// variable cannot override.
TEST(ConfigTest, AnEmptyTopologyOptionIsThisMachine) {
  const auto s = resolve_with({{"LOCUS_TOPOLOGY", kSixteen}}, locus::options{.topology = ""});
  EXPECT_EQ(s.topology, "");
  EXPECT_EQ(resolve_with({{"LOCUS_TOPOLOGY", kSixteen}}).topology, kSixteen);
}

// What LOCUS_PRINT_CONFIG prints is what describe() says once the runtime runs: whether the
// workers are pinned is decided before the print.
TEST(ConfigTest, PrintedConfigurationSaysWhetherWorkersArePinned) {
  const locus_test::saved_env print("LOCUS_PRINT_CONFIG", "1");
  testing::internal::CaptureStderr();
  std::string described;
  {
    locus::runtime rt{locus::options{.sched = "ws", .topology = ""}};
    described = rt.describe();
  }
  const std::string printed = testing::internal::GetCapturedStderr();
  const auto pinned_line = [](const std::string& text) {
    const auto at = text.find("pinned ");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  ASSERT_FALSE(pinned_line(described).empty()) << described;
  EXPECT_EQ(pinned_line(printed), pinned_line(described)) << printed;
}

TEST(ConfigTest, ResolveExplicitOptionsWinOverTheEnvironment) {
  // Even invalid environment values are ignored when the option is given.
  const auto s = resolve_with({{"LOCUS_SCHED", "bogus"},
                               {"LOCUS_WORKERS", "abc"},
                               {"LOCUS_TOPOLOGY", "garbage"},
                               {"LOCUS_STACK_SIZE", "foo"},
                               {"LOCUS_STATS", "maybe"},
                               {"LOCUS_PRINT_CONFIG", "maybe"},
                               {"LOCUS_PMU", "maybe"}},
                              locus::options{.sched = "numa-ws",
                                             .workers = 5,
                                             .topology = kSixteen,
                                             .stack_size = 128 * 1024,
                                             .stats_at_exit = false,
                                             .print_config = false,
                                             .pmu = true});
  EXPECT_EQ(s.sched, "numa-ws");
  EXPECT_EQ(s.workers, std::optional<int>(5));
  EXPECT_EQ(s.topology, kSixteen);
  EXPECT_EQ(s.stack_size, 128u * 1024);
  EXPECT_FALSE(s.stats_at_exit);
  EXPECT_FALSE(s.print_config);
  EXPECT_TRUE(s.pmu);
}

TEST(ConfigTest, ResolveRejectsBadEnvironmentValues) {
  struct bad_case {
    const char* var;
    const char* value;
    const char* accepted;  // something the message must list
  };
  for (const bad_case& c :
       {bad_case{"LOCUS_SCHED", "bogus", "ws"}, bad_case{"LOCUS_WORKERS", "0", "positive integer"},
        bad_case{"LOCUS_WORKERS", "-3", "positive integer"},
        bad_case{"LOCUS_WORKERS", "abc", "positive integer"},
        bad_case{"LOCUS_WORKERS", "2x", "positive integer"},
        bad_case{"LOCUS_STACK_SIZE", "12", "16K"}, bad_case{"LOCUS_STACK_SIZE", "1T", "16K"},
        bad_case{"LOCUS_STACK_SIZE", "foo", "16K"}, bad_case{"LOCUS_STACK_SIZE", "8K", "16K"},
        bad_case{"LOCUS_STATS", "maybe", "true"}, bad_case{"LOCUS_PRINT_CONFIG", "maybe", "true"},
        bad_case{"LOCUS_PMU", "2", "on, off"}, bad_case{"LOCUS_PMU", "hw", "true, false"},
        bad_case{"LOCUS_SIZE_HINTS", "learned", "given, learn, learn-all, none"},
        bad_case{"LOCUS_SIZE_HINTS_SAMPLES", "100", "1024"}}) {
    SCOPED_TRACE(std::string(c.var) + "=" + c.value);
    const std::string msg = config_error_of([&] { resolve_with({{c.var, c.value}}); });
    EXPECT_CONTAINS(msg, c.var);
    EXPECT_CONTAINS(msg, c.value);
    EXPECT_CONTAINS(msg, c.accepted);
  }
}

TEST(ConfigTest, ResolveReadsSizeHintSources) {
  EXPECT_EQ(resolve_with({}).size_hints, locus::size_hint_source::given);
  EXPECT_EQ(resolve_with({{"LOCUS_SIZE_HINTS", "learn"}}).size_hints,
            locus::size_hint_source::learn);
  EXPECT_EQ(resolve_with({{"LOCUS_SIZE_HINTS", " Learn-All "}}).size_hints,
            locus::size_hint_source::learn_all);
  EXPECT_EQ(resolve_with({{"LOCUS_SIZE_HINTS", "none"}}).size_hints, locus::size_hint_source::none);
  EXPECT_EQ(resolve_with({{"LOCUS_SIZE_HINTS", "none"}},
                         locus::options{.size_hints = locus::size_hint_source::learn})
                .size_hints,
            locus::size_hint_source::learn);
  EXPECT_EQ(resolve_with({{"LOCUS_SIZE_HINTS_SAMPLES", "4096"}}).size_hint_samples, 4096u);
}

TEST(ConfigTest, ResolveRejectsBadExplicitOptions) {
  std::string msg = config_error_of([] { resolve_with({}, locus::options{.sched = "bogus"}); });
  EXPECT_CONTAINS(msg, "sched");
  EXPECT_CONTAINS(msg, "ws");
  msg = config_error_of([] { resolve_with({}, locus::options{.workers = 0}); });
  EXPECT_CONTAINS(msg, "workers");
  EXPECT_CONTAINS(msg, "positive integer");
  msg = config_error_of([] { resolve_with({}, locus::options{.stack_size = 1024}); });
  EXPECT_CONTAINS(msg, "stack_size");
  EXPECT_CONTAINS(msg, "16K");
  msg = config_error_of([] { resolve_with({}, locus::options{.size_hint_samples = 10}); });
  EXPECT_CONTAINS(msg, "size_hint_samples");
  EXPECT_CONTAINS(msg, "1024");
}

// ---- the public path: locus::runtime and the real environment --------------------------------

TEST_F(ConfigRuntimeTest, BadSchedIsRejected) {
  set("LOCUS_SCHED", "bogus");
  const std::string msg = construct_error();
  EXPECT_CONTAINS(msg, "LOCUS_SCHED");
  EXPECT_CONTAINS(msg, "bogus");
  EXPECT_CONTAINS(msg, "ws");
}

TEST_F(ConfigRuntimeTest, ResolveOptionsChecksLikeTheConstructorWithoutStartingOne) {
  set("LOCUS_SCHED", "adws");
  set("LOCUS_STACK_SIZE", "64K");
  const locus::options r = locus::resolve_options({.workers = 3});
  EXPECT_EQ(r.sched, "adws");
  EXPECT_EQ(r.workers, 3);
  EXPECT_EQ(r.stack_size, std::size_t{64} << 10);
  EXPECT_EQ(r.stats_at_exit, false);
  EXPECT_FALSE(r.topology) << "the real machine";
  EXPECT_FALSE(r.trace) << "no trace";
  EXPECT_EQ(locus::resolve_options({.sched = "ws"}).sched, "ws") << "explicit options win";

  set("LOCUS_SCHED", "bogus");
  std::string msg = config_error_of([] { locus::resolve_options(); });
  EXPECT_CONTAINS(msg, "LOCUS_SCHED");
  EXPECT_CONTAINS(msg, "adws") << "lists the schedulers";
  ::unsetenv("LOCUS_SCHED");
  set("LOCUS_TOPOLOGY", "pack:x");
  msg = config_error_of([] { locus::resolve_options(); });
  EXPECT_CONTAINS(msg, "LOCUS_TOPOLOGY");
  set("LOCUS_TOPOLOGY", kEight);
  EXPECT_EQ(locus::resolve_options().topology, kEight);
}

TEST_F(ConfigRuntimeTest, BadWorkersIsRejected) {
  set("LOCUS_TOPOLOGY", kEight);
  for (const char* bad : {"0", "-3", "abc", "2x", "1.5"}) {
    SCOPED_TRACE(std::string("LOCUS_WORKERS=") + bad);
    set("LOCUS_WORKERS", bad);
    const std::string msg = construct_error();
    EXPECT_CONTAINS(msg, "LOCUS_WORKERS");
    EXPECT_CONTAINS(msg, bad);
    EXPECT_CONTAINS(msg, "positive integer");
  }
}

TEST_F(ConfigRuntimeTest, MoreWorkersThanTheMachineHasIsRejected) {
  // No LOCUS_TOPOLOGY: the real machine. Ask for one more worker than it has PUs.
  const int leaves = locus::topo::topology::detect().num_leaves();
  const std::string too_many = std::to_string(std::max(leaves + 1, 64));
  set("LOCUS_WORKERS", too_many.c_str());
  const std::string msg = construct_error();
  EXPECT_CONTAINS(msg, "LOCUS_WORKERS");
  EXPECT_CONTAINS(msg, too_many);
  EXPECT_CONTAINS(msg, "1 to " + std::to_string(leaves)) << "names the accepted range";
  EXPECT_CONTAINS(msg, "LOCUS_TOPOLOGY") << "suggests a larger synthetic topology";
}

TEST_F(ConfigRuntimeTest, MoreWorkersThanTheSyntheticTopologyHasIsRejected) {
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_WORKERS", "9");
  const std::string msg = construct_error();
  EXPECT_CONTAINS(msg, "LOCUS_WORKERS");
  EXPECT_CONTAINS(msg, "'9'");
  EXPECT_CONTAINS(msg, "1 to 8");
  // The same through the options names the limit too.
  ::unsetenv("LOCUS_WORKERS");
  EXPECT_CONTAINS(construct_error(locus::options{.workers = 9}), "1 to 8");
  // Exactly as many is fine.
  set("LOCUS_WORKERS", "8");
  locus::runtime rt;
  EXPECT_EQ(rt.num_workers(), 8);
}

TEST_F(ConfigRuntimeTest, BadTopologyIsRejected) {
  for (const char* bad : {"garbage", "pack:2 core:x pu:1", "pack:2 core:2"}) {
    SCOPED_TRACE(std::string("LOCUS_TOPOLOGY=") + bad);
    set("LOCUS_TOPOLOGY", bad);
    const std::string msg = construct_error();
    EXPECT_CONTAINS(msg, "LOCUS_TOPOLOGY");
    EXPECT_CONTAINS(msg, bad);
    EXPECT_CONTAINS(msg, "pu") << "the message shows what is expected";
  }
}

TEST_F(ConfigRuntimeTest, BadStackSizeIsRejected) {
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_WORKERS", "1");
  for (const char* bad : {"12", "1T", "foo", "8K"}) {
    SCOPED_TRACE(std::string("LOCUS_STACK_SIZE=") + bad);
    set("LOCUS_STACK_SIZE", bad);
    const std::string msg = construct_error();
    EXPECT_CONTAINS(msg, "LOCUS_STACK_SIZE");
    EXPECT_CONTAINS(msg, bad);
    EXPECT_CONTAINS(msg, "16K");
  }
}

// Three runtimes one after the other in one process, each running a task. Under AddressSanitizer
// this also checks that a destroyed runtime leaves no stale stack poisoning behind: its stack
// slabs are unmapped and the next runtime's slabs may be mapped at the same addresses.
TEST_F(ConfigRuntimeTest, GoodStackSizesAreAccepted) {
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_WORKERS", "2");
  for (const auto& [text, bytes] : {std::pair<const char*, std::size_t>{"64K", 64 * 1024},
                                    {"1M", 1024 * 1024},
                                    {"1048576", 1048576}}) {
    SCOPED_TRACE(std::string("LOCUS_STACK_SIZE=") + text);
    set("LOCUS_STACK_SIZE", text);
    locus::runtime rt;
    EXPECT_EQ(rt.num_workers(), 2);
    EXPECT_EQ(parse_description(rt.describe())["LOCUS_STACK_SIZE"], std::to_string(bytes));
    // Tasks run on stacks of that size: a modest frame fits.
    EXPECT_EQ(rt.exec([] {
      volatile char buf[8 * 1024];
      for (std::size_t i = 0; i < sizeof buf; i += 512) buf[i] = static_cast<char>(i / 512);
      return buf[512] + buf[1024];
    }),
              3);
  }
}

TEST_F(ConfigRuntimeTest, BadStatsIsRejected) {
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_STATS", "maybe");
  const std::string msg = construct_error();
  EXPECT_CONTAINS(msg, "LOCUS_STATS");
  EXPECT_CONTAINS(msg, "maybe");
  EXPECT_CONTAINS(msg, "true");
}

TEST_F(ConfigRuntimeTest, BadPrintConfigIsRejected) {
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_PRINT_CONFIG", "maybe");
  const std::string msg = construct_error();
  EXPECT_CONTAINS(msg, "LOCUS_PRINT_CONFIG");
  EXPECT_CONTAINS(msg, "maybe");
  EXPECT_CONTAINS(msg, "true");
}

TEST_F(ConfigRuntimeTest, BadPmuIsRejected) {
  set("LOCUS_PMU", "cycles");
  const std::string msg = construct_error();
  EXPECT_CONTAINS(msg, "LOCUS_PMU");
  EXPECT_CONTAINS(msg, "'cycles'");
  EXPECT_CONTAINS(msg, "1, 0, true, false");
}

TEST_F(ConfigRuntimeTest, PmuFromTheEnvironmentShowsInDescribe) {
  set("LOCUS_PMU", "1");
  locus::runtime rt{locus::options{.workers = 1}};
  EXPECT_EQ(parse_description(rt.describe()).at("LOCUS_PMU"), "1");
  EXPECT_FALSE(rt.stats().workers.at(0).pmu.empty()) << "LOCUS_PMU=1 adds the PMU counters";
  locus::runtime off{locus::options{.workers = 1, .pmu = false}};
  EXPECT_EQ(parse_description(off.describe()).at("LOCUS_PMU"), "0");
  EXPECT_TRUE(off.stats().workers.at(0).pmu.empty());
}

TEST_F(ConfigRuntimeTest, WorkersFromTheEnvironment) {
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_WORKERS", "3");
  locus::runtime rt;
  EXPECT_EQ(rt.num_workers(), 3);
  EXPECT_EQ(rt.scheduler(), "ws");
  const int w = rt.exec([] { return locus::this_worker(); });
  EXPECT_GE(w, 0);
  EXPECT_LT(w, 3);
}

TEST_F(ConfigRuntimeTest, ExplicitWorkersWinOverTheEnvironment) {
  set("LOCUS_WORKERS", "1");
  set("LOCUS_TOPOLOGY", kEight);
  locus::runtime rt{locus::options{.workers = 2}};
  EXPECT_EQ(rt.num_workers(), 2);
  EXPECT_EQ(parse_description(rt.describe())["LOCUS_WORKERS"], "2");
}

TEST_F(ConfigRuntimeTest, ExplicitOptionsIgnoreInvalidEnvironment) {
  set("LOCUS_SCHED", "bogus");
  set("LOCUS_WORKERS", "abc");
  set("LOCUS_TOPOLOGY", "garbage");
  set("LOCUS_STACK_SIZE", "foo");
  set("LOCUS_STATS", "maybe");
  set("LOCUS_PRINT_CONFIG", "maybe");
  locus::runtime rt{locus::options{.sched = "ws",
                                   .workers = 2,
                                   .topology = kEight,
                                   .stack_size = 64 * 1024,
                                   .stats_at_exit = false,
                                   .print_config = false}};
  EXPECT_EQ(rt.num_workers(), 2);
  EXPECT_EQ(rt.scheduler(), "ws");
  EXPECT_EQ(rt.exec([] { return 40 + 2; }), 42);
}

TEST_F(ConfigRuntimeTest, ExplicitSyntheticTopologyWithSixteenWorkers) {
  set("LOCUS_WORKERS", "1");
  locus::runtime rt{locus::options{.workers = 16, .topology = kSixteen}};
  EXPECT_EQ(rt.num_workers(), 16);
  const auto d = parse_description(rt.describe());
  EXPECT_EQ(d.at("LOCUS_WORKERS"), "16");
  // All 16 workers can run tasks: a root that fans out and sums.
  const int sum = rt.exec([] {
    std::atomic<int> total{0};
    locus::task_group g;
    for (int i = 1; i <= 100; ++i) g.run([&total, i] { total.fetch_add(i); });
    g.wait();
    return total.load();
  });
  EXPECT_EQ(sum, 5050);
}

TEST_F(ConfigRuntimeTest, PrintConfigWritesTheConfigurationToStderr) {
  set("LOCUS_PRINT_CONFIG", "1");
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_WORKERS", "3");
  testing::internal::CaptureStderr();
  std::string description;
  {
    locus::runtime rt;
    description = rt.describe();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_CONTAINS(err, "LOCUS_SCHED");
  EXPECT_CONTAINS(err, "LOCUS_WORKERS");
  EXPECT_CONTAINS(err, description) << "prints what describe() returns";
  const auto d = parse_description(err);
  EXPECT_EQ(d.count("LOCUS_SCHED") ? d.at("LOCUS_SCHED") : "", "ws");
  EXPECT_EQ(d.count("LOCUS_WORKERS") ? d.at("LOCUS_WORKERS") : "", "3");
}

TEST_F(ConfigRuntimeTest, NoConfigPrintedByDefault) {
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_WORKERS", "2");
  testing::internal::CaptureStderr();
  { locus::runtime rt; }
  EXPECT_LACKS(testing::internal::GetCapturedStderr(), "LOCUS_SCHED");
  // An explicit option wins over LOCUS_PRINT_CONFIG=1.
  set("LOCUS_PRINT_CONFIG", "1");
  testing::internal::CaptureStderr();
  { locus::runtime rt{locus::options{.print_config = false}}; }
  EXPECT_LACKS(testing::internal::GetCapturedStderr(), "LOCUS_SCHED");
}

TEST_F(ConfigRuntimeTest, StatsAtExitPrintsStatistics) {
  set("LOCUS_TOPOLOGY", kEight);
  set("LOCUS_WORKERS", "2");
  set("LOCUS_STATS", "1");
  testing::internal::CaptureStderr();
  {
    locus::runtime rt;
    EXPECT_EQ(rt.exec([] { return 1; }), 1);
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_CONTAINS(err, "ws") << "the statistics name the scheduler";
  EXPECT_FALSE(err.empty());
  set("LOCUS_STATS", "0");
  testing::internal::CaptureStderr();
  { locus::runtime rt; }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "LOCUS_STATS=0 prints nothing";
}

TEST_F(ConfigRuntimeTest, DescribeShowsTheEffectiveConfiguration) {
  testing::internal::CaptureStderr();  // the statistics printed at destruction
  std::string text;
  {
    locus::runtime rt{locus::options{.sched = "ws",
                                     .workers = 3,
                                     .topology = kEight,
                                     .stack_size = 128 * 1024,
                                     .stats_at_exit = true}};
    text = rt.describe();
  }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(err.empty()) << "stats_at_exit prints the statistics";
  const auto d = parse_description(text);
  ASSERT_TRUE(d.count("LOCUS_SCHED")) << text;
  ASSERT_TRUE(d.count("LOCUS_WORKERS")) << text;
  ASSERT_TRUE(d.count("LOCUS_TOPOLOGY")) << text;
  ASSERT_TRUE(d.count("LOCUS_STACK_SIZE")) << text;
  ASSERT_TRUE(d.count("LOCUS_STATS")) << text;
  EXPECT_EQ(d.at("LOCUS_SCHED"), "ws");
  EXPECT_EQ(d.at("LOCUS_WORKERS"), "3");
  EXPECT_EQ(d.at("LOCUS_STACK_SIZE"), std::to_string(128 * 1024));
  EXPECT_EQ(d.at("LOCUS_STATS"), "1");
  EXPECT_CONTAINS(d.at("LOCUS_TOPOLOGY"), "pu") << "describes the synthetic topology";
  EXPECT_LACKS(d.at("LOCUS_TOPOLOGY"), "this machine");
}

TEST_F(ConfigRuntimeTest, DescribeOfTheRealMachine) {
  set("LOCUS_WORKERS", "1");
  locus::runtime rt;
  const auto d = parse_description(rt.describe());
  EXPECT_EQ(d.count("LOCUS_WORKERS") ? d.at("LOCUS_WORKERS") : "", "1");
  EXPECT_EQ(d.count("LOCUS_STACK_SIZE") ? d.at("LOCUS_STACK_SIZE") : "",
            std::to_string(locus::config::default_stack_size));
  EXPECT_CONTAINS(d.count("LOCUS_TOPOLOGY") ? d.at("LOCUS_TOPOLOGY") : "", "this machine");
}

// Each scheduler's own settings show in describe() with the values it runs with.
TEST_F(ConfigRuntimeTest, SchedulerSettingsShowInDescribe) {
  const locus_test::saved_env policy_env{
      "LOCUS_WS_JOIN",           "LOCUS_ADWS_STEAL",         "LOCUS_NUMA_WS_WEIGHTS",
      "LOCUS_NUMA_WS_THRESHOLD", "LOCUS_HWS_QUEUE_BOUND",    "LOCUS_HWS_ATTEMPTS",
      "LOCUS_HWS_CHUNKS",        "LOCUS_CATS_SOURCE",        "LOCUS_CATS_BOUND",
      "LOCUS_CATS_CACHE",        "LOCUS_CATS_PROFILE_TASKS", "LOCUS_ADWS_PATIENCE"};
  set("LOCUS_WS_JOIN", "thief");
  set("LOCUS_ADWS_STEAL", "0");
  set("LOCUS_ADWS_PATIENCE", "0");
  set("LOCUS_NUMA_WS_THRESHOLD", "9");
  set("LOCUS_CATS_BOUND", "memory");
  const std::map<std::string, std::map<std::string, std::string>> expected = {
      {"ws", {{"LOCUS_WS_JOIN", "thief"}}},
      {"adws", {{"LOCUS_ADWS_STEAL", "0"}, {"LOCUS_ADWS_PATIENCE", "0"}}},
      {"ml-adws", {{"LOCUS_ADWS_STEAL", "0"}, {"LOCUS_ADWS_PATIENCE", "0"}}},
      {"numa-ws",
       {{"LOCUS_NUMA_WS_WEIGHTS", "8,2,1 (local,neighbour,remote)"},
        {"LOCUS_NUMA_WS_THRESHOLD", "9"}}},
      {"hws", {{"LOCUS_HWS_QUEUE_BOUND", "40"}}},
      {"ml-ws", {}},
      {"cats", {{"LOCUS_CATS_BOUND", "memory"}, {"LOCUS_CATS_PROFILE_TASKS", "262144"}}},
      {"tao", {{"LOCUS_TAO_STEAL", "1"}}},
  };
  for (const auto& [sched, settings] : expected) {
    locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
    const auto described = parse_description(rt.describe());
    for (const auto& [name, value] : settings) {
      ASSERT_TRUE(described.contains(name)) << sched << " lacks " << name;
      EXPECT_EQ(described.at(name), value) << sched;
    }
    // No other scheduler's settings.
    for (const auto& [other, its] : expected) {
      for (const auto& [name, value] : its) {
        if (!settings.contains(name)) {
          EXPECT_FALSE(described.contains(name)) << sched << " shows " << name;
        }
      }
    }
  }
}

// A blank value is an unset one for a scheduler's own variables too: the default stands (a
// blank LOCUS_ADWS_STEAL once read as 0 and turned stealing off).
TEST_F(ConfigRuntimeTest, BlankSchedulerSettingsAreUnset) {
  const locus_test::saved_env policy_env{"LOCUS_WS_JOIN", "LOCUS_ADWS_STEAL", "LOCUS_TAO_STEAL",
                                         "LOCUS_HWS_QUEUE_BOUND"};
  set("LOCUS_WS_JOIN", " ");
  set("LOCUS_ADWS_STEAL", "");
  set("LOCUS_TAO_STEAL", "");
  set("LOCUS_HWS_QUEUE_BOUND", "");
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"ws", {"LOCUS_WS_JOIN", "auto (home, 2 workers)"}},
      {"adws", {"LOCUS_ADWS_STEAL", "1"}},
      {"tao", {"LOCUS_TAO_STEAL", "1"}},
      {"hws", {"LOCUS_HWS_QUEUE_BOUND", "40"}},
  };
  for (const auto& [sched, setting] : expected) {
    locus::runtime rt{locus::options{.sched = sched, .workers = 2}};
    const auto described = parse_description(rt.describe());
    ASSERT_TRUE(described.contains(setting.first)) << sched;
    EXPECT_EQ(described.at(setting.first), setting.second) << sched;
  }
}

// ws's default names the rule `auto` chose and the worker count it chose it for, in the singular
// for one worker.
TEST_F(ConfigRuntimeTest, WsAutoJoinRuleNamesItsChoice) {
  const locus_test::saved_env policy_env{"LOCUS_WS_JOIN"};
  ::unsetenv("LOCUS_WS_JOIN");
  const std::map<int, std::string> expected = {
      {1, "auto (thief, 1 worker)"},
      {2, "auto (home, 2 workers)"},
      {4, "auto (thief, 4 workers)"},
  };
  for (const auto& [workers, setting] : expected) {
    locus::runtime rt{
        locus::options{.sched = "ws", .workers = workers, .topology = "pack:1 core:4 pu:1"}};
    const auto described = parse_description(rt.describe());
    ASSERT_TRUE(described.contains("LOCUS_WS_JOIN")) << workers;
    EXPECT_EQ(described.at("LOCUS_WS_JOIN"), setting) << workers;
  }
}

// ws shows its lone-item wait, and says when the rule does not use it (no hand-back).
TEST_F(ConfigRuntimeTest, WsShowsItsLoneItemWait) {
  const locus_test::saved_env policy_env{"LOCUS_WS_JOIN", "LOCUS_WS_LONE_WAIT_US"};
  ::unsetenv("LOCUS_WS_JOIN");
  ::unsetenv("LOCUS_WS_LONE_WAIT_US");
  const std::map<int, std::string> expected = {{2, "5"}, {4, "5 (unused: no hand-back)"}};
  for (const auto& [workers, setting] : expected) {
    locus::runtime rt{
        locus::options{.sched = "ws", .workers = workers, .topology = "pack:1 core:4 pu:1"}};
    const auto described = parse_description(rt.describe());
    ASSERT_TRUE(described.contains("LOCUS_WS_LONE_WAIT_US")) << workers;
    EXPECT_EQ(described.at("LOCUS_WS_LONE_WAIT_US"), setting) << workers;
  }
}

}  // namespace
