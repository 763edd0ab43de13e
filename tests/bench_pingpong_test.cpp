// locus-bench pingpong: a positive round trip between two CPUs, the caller's affinity restored,
// and bad arguments rejected naming the option.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness/benchmark.hpp"
#include "harness/pingpong.hpp"
#include "harness/platform.hpp"

namespace {

using namespace locus_bench;

std::string usage_message(const std::vector<std::string>& args) {
  std::ostringstream out;
  try {
    run_pingpong(args, out);
  } catch (const usage_error& e) {
    return e.what();
  }
  return "no usage_error";
}

TEST(BenchPingpong, MeasuresARoundTripAndRestoresTheCallersCpus) {
  if (available_cpus() < 2) GTEST_SKIP() << "needs two CPUs";
  cpu_set_t before, after;
  CPU_ZERO(&before);
  CPU_ZERO(&after);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof before, &before), 0);
  std::ostringstream out;
  ASSERT_EQ(run_pingpong({"pingpong", "--round-trips", "2000"}, out), 0);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
  const std::string line = out.str();
  EXPECT_NE(line.find("cache-line round trip "), std::string::npos) << line;
  EXPECT_NE(line.find(" ns (median of 5 x 2000)\n"), std::string::npos) << line;
  const double ns = std::stod(line.substr(line.find("trip ") + 5));
  EXPECT_GT(ns, 0);
}

TEST(BenchPingpong, RejectsBadArguments) {
  EXPECT_NE(usage_message({"pingpong", "--bogus"}).find("unknown option '--bogus'"),
            std::string::npos);
  EXPECT_NE(usage_message({"pingpong", "--cpus"}).find("--cpus needs a value"), std::string::npos);
  EXPECT_NE(usage_message({"pingpong", "--cpus", "0"}).find("expected A,B"), std::string::npos);
  EXPECT_NE(usage_message({"pingpong", "--cpus", "0,0"}).find("two different CPUs"),
            std::string::npos);
  EXPECT_NE(usage_message({"pingpong", "--cpus", "0,x"}).find("invalid value 'x'"),
            std::string::npos);
  EXPECT_NE(usage_message({"pingpong", "--round-trips", "-3"}).find("--round-trips"),
            std::string::npos);
}

}  // namespace
