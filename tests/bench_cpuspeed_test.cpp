// locus-bench cpuspeed: one positive time per CPU and window from threads that stayed on their
// CPUs, the report's lines in order, and bad arguments rejected naming the option.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness/benchmark.hpp"
#include "harness/cpu_speed.hpp"
#include "harness/platform.hpp"

namespace {

using namespace locus_bench;

std::string usage_message(const std::vector<std::string>& args) {
  std::ostringstream out;
  try {
    run_cpu_speed(args, out);
  } catch (const usage_error& e) {
    return e.what();
  }
  return "no usage_error";
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(BenchCpuSpeed, TimesEveryCpuInEveryWindow) {
  const std::vector<int> cpus = cpus_allowed();
  ASSERT_FALSE(cpus.empty());
  const cpu_speed_series s = measure_cpu_speeds(cpus, 100, 3);
  EXPECT_EQ(s.cpus, cpus);
  EXPECT_EQ(s.window_ms, 100);
  ASSERT_EQ(s.window_us.size(), 3U);
  for (const auto& window : s.window_us) {
    ASSERT_EQ(window.size(), cpus.size());
    // A call of 65,536 flops takes more than a nanosecond and far less than a 100 ms window.
    for (const double us : window) {
      EXPECT_GT(us, 0.001);
      EXPECT_LT(us, 100'000.0);
    }
  }
}

TEST(BenchCpuSpeed, ReportsAHeaderAWindowPerLineAndASummary) {
  const std::vector<int> cpus = cpus_allowed();
  ASSERT_FALSE(cpus.empty());
  const std::string first = std::to_string(cpus.front());
  std::ostringstream out;
  ASSERT_EQ(
      run_cpu_speed({"cpuspeed", "--cpus", first, "--seconds", "0.4", "--window-ms", "100"}, out),
      0);
  const std::vector<std::string> lines = lines_of(out.str());
  // Header, column names, four windows, one CPU's summary, the spread.
  ASSERT_EQ(lines.size(), 8U) << out.str();
  EXPECT_EQ(lines[0].rfind("one 32x32 block update", 0), 0U) << lines[0];
  EXPECT_NE(lines[0].find("on CPUs " + first + " at once, 4 windows of 100 ms"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("cpu " + first), std::string::npos) << lines[1];
  for (int w = 0; w < 4; ++w) {
    std::istringstream row(lines[static_cast<std::size_t>(2 + w)]);
    double start_ms = -1, us = -1, spread = -1;
    row >> start_ms >> us >> spread;
    EXPECT_EQ(start_ms, 100.0 * w);
    EXPECT_GT(us, 0);
    EXPECT_EQ(spread, 1.0);  // one CPU is its own slowest and fastest
  }
  EXPECT_EQ(lines[6].rfind("cpu " + first + ": median ", 0), 0U) << lines[6];
  EXPECT_EQ(lines[7], "slowest/fastest above 1.25 in 0 of 4 windows, at most 1.00");
}

TEST(BenchCpuSpeed, RejectsBadArguments) {
  EXPECT_NE(usage_message({"cpuspeed", "--bogus"}).find("unknown option '--bogus'"),
            std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--cpus"}).find("--cpus needs a value"), std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--cpus", "x"}).find("--cpus: invalid value 'x'"),
            std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--cpus", "0,"}).find("--cpus: invalid value ''"),
            std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--cpus", "0,0"}).find("CPU 0 is named twice"),
            std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--cpus", "1023"}).find("not one this process may use"),
            std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--seconds", "0"}).find("(0, 3600]"), std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--seconds", "2s"}).find("invalid value '2s'"),
            std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--window-ms", "0"}).find("[1, 60000]"), std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--seconds", "0.01", "--window-ms", "100"})
                .find("at least one --window-ms window"),
            std::string::npos);
  EXPECT_NE(usage_message({"cpuspeed", "--seconds", "3600", "--window-ms", "1"})
                .find("gives 3600000 windows; at most 100000"),
            std::string::npos);
}

}  // namespace
