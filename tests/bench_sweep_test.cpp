// locus-bench --sweep: one plan per value (every combination of several sweeps), validated like
// --set, and the work units and working set of a benchmark that describes its size in the JSON.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "harness/cli.hpp"
#include "harness/platform.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "text_lines.hpp"

namespace {

using namespace locus_bench;

std::string usage_message(const std::vector<std::string>& args) {
  try {
    (void)make_plan(parse_command_line(args), registry::get(), 1);
  } catch (const usage_error& e) {
    return e.what();
  }
  return "no usage_error";
}

TEST(BenchSweep, OnePlanPerValueAndEveryCombination) {
  const run_plan p =
      make_plan(parse_command_line({"run", "heat2d,fib", "--size", "small", "--sweep",
                                    "heat2d.n=64,100", "--sweep", "iters=2,3", "--impl", "serial"}),
                registry::get(), 1);
  std::vector<std::string> params;
  for (const auto& bp : p.benches) params.push_back(bp.bench->name + " " + bp.params.to_json());
  // fib has no iters: it runs once, with its own parameters.
  ASSERT_EQ(params.size(), 5u);
  EXPECT_NE(params[0].find(R"(heat2d {"n":64,"iters":2,)"), std::string::npos) << params[0];
  EXPECT_NE(params[1].find(R"(heat2d {"n":64,"iters":3,)"), std::string::npos) << params[1];
  EXPECT_NE(params[2].find(R"(heat2d {"n":100,"iters":2,)"), std::string::npos) << params[2];
  EXPECT_NE(params[3].find(R"(heat2d {"n":100,"iters":3,)"), std::string::npos) << params[3];
  EXPECT_EQ(params[4].rfind("fib ", 0), 0u) << params[4];
}

TEST(BenchSweep, RejectsMalformedSweepsAndValuesTheParameterRejects) {
  for (const char* bad : {"n", "=1,2", "n=", "n=1,,2", "n=1,"}) {
    const std::string what = usage_message({"run", "heat2d", "--sweep", bad});
    EXPECT_NE(what.find("--sweep: invalid value '" + std::string(bad) + "'"), std::string::npos)
        << what;
  }
  EXPECT_NE(usage_message({"run", "heat2d", "--sweep", "n=64,2"}).find("--sweep heat2d.n"),
            std::string::npos);
  EXPECT_NE(usage_message({"run", "heat2d", "--sweep", "bogus=1,2"})
                .find("--sweep bogus: unknown parameter 'bogus'; heat2d accepts n"),
            std::string::npos);
  EXPECT_NE(usage_message({"run", "heat2d", "--sweep", "nope.n=1,2"}).find("unknown benchmark"),
            std::string::npos);
}

TEST(BenchSweep, JsonCarriesWorkUnitsWorkingSetAndTheTableTheParameters) {
  run_plan p =
      make_plan(parse_command_line({"run", "heat2d", "--sweep", "n=10,20", "--set", "iters=3",
                                    "--impl", "serial", "--reps", "1", "--warmup", "0", "--json"}),
                registry::get(), 1);
  std::ostringstream out, log;
  ASSERT_EQ(execute(p, out, log), 0) << log.str();
  const std::vector<std::string> lines = locus_test::lines_of(out.str());
  ASSERT_EQ(lines.size(), 2u);
  // n = 10: 8 x 8 interior cells, 3 iterations; two grids of 10 rows of 80 + 256 bytes.
  EXPECT_NE(lines[0].find(R"("work_units":192,"unit":"cell update","working_set_bytes":6720)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"("work_units":972,)"), std::string::npos) << lines[1];
  if (l2_cache_bytes() > 0) {
    EXPECT_NE(lines[0].find(R"("l2_bytes":)" + std::to_string(l2_cache_bytes())),
              std::string::npos);
  }
  p.json = false;
  std::ostringstream table, log2;
  ASSERT_EQ(execute(p, table, log2), 0);
  EXPECT_NE(table.str().find("params"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find(R"({"n":20,)"), std::string::npos) << table.str();
}

}  // namespace
