// locus-bench --contend: parsing and planning of loads, the load processes (pinned to the last
// CPUs, gone when the contender is, gone when the process that started them dies), and the JSON
// and ratios of loaded configurations.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/cli.hpp"
#include "harness/contention.hpp"
#include "harness/platform.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "text_lines.hpp"

namespace {

using namespace locus_bench;

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const usage_error& e) {
    return e.what();
  }
  return "no usage_error";
}

// Whether pid still runs (a zombie whose parent has not reaped it does not).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const std::size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

TEST(BenchContend, ParsesLoads) {
  EXPECT_TRUE(parse_contention("none", 2).quiet());
  EXPECT_EQ(parse_contention("1", 2), (contention{1, 0, 0}));
  EXPECT_EQ(parse_contention("2:1000/500", 2), (contention{2, 1000, 500}));
  EXPECT_EQ(parse_contention("1:1000/500", 2).text(), "1:1000/500");
  EXPECT_EQ(parse_contention("1", 2).text(), "1");
  EXPECT_EQ(contention{}.text(), "none");
  for (const char* bad : {"", "0", "3", "x", "1:", "1:1000", "1:0/5", "1:5/0", "1:5/x", "-1",
                          "1:5/20000000", "none2"}) {
    const std::string what = usage_message([&] { parse_contention(bad, 2); });
    EXPECT_NE(what.find("--contend: invalid value '" + std::string(bad) + "'"), std::string::npos)
        << what;
    EXPECT_NE(what.find("N:BUSY/IDLE"), std::string::npos) << what;
    EXPECT_NE(what.find("[1, 2]"), std::string::npos) << what;
  }
}

TEST(BenchContend, EveryConfigurationRunsUnderEveryLoad) {
  const cli_options o = parse_command_line(
      {"run", "fib", "--impl", "serial,locus", "--workers", "1", "--contend", "none,1:200/300"});
  ASSERT_EQ(o.loads.size(), 2u);
  const run_plan p = make_plan(o, registry::get(), 1);
  ASSERT_EQ(p.benches.size(), 1u);
  std::vector<std::string> labels;
  for (const auto& c : p.benches[0].configs) labels.push_back(c.label());
  EXPECT_EQ(labels, (std::vector<std::string>{"serial", "locus/ws/1", "serial+contend=1:200/300",
                                              "locus/ws/1+contend=1:200/300"}));
  const std::string what = usage_message([] {
    parse_command_line({"run", "fib", "--contend", std::to_string(available_cpus() + 1)});
  });
  EXPECT_NE(what.find("--contend"), std::string::npos) << what;
}

// The tests below start the load command of the locus-bench built beside these tests.
#ifdef LOCUS_BENCH_EXE

TEST(BenchContend, LoadProcessesRunPinnedToTheLastCpusUntilTheContenderGoes) {
  const std::vector<int> cpus = cpus_allowed();
  for (const contention load : {contention{1, 0, 0}, contention{1, 300, 300}}) {
    SCOPED_TRACE(load.text());
    std::vector<pid_t> pids;
    {
      const contender c(load, LOCUS_BENCH_EXE);
      ASSERT_EQ(c.pids().size(), 1u);
      ASSERT_EQ(c.cpus(), std::vector<int>{cpus.back()});
      pids = c.pids();
      cpu_set_t set;
      CPU_ZERO(&set);
      ASSERT_EQ(sched_getaffinity(pids[0], sizeof set, &set), 0);
      EXPECT_EQ(CPU_COUNT(&set), 1);
      EXPECT_TRUE(CPU_ISSET(cpus.back(), &set));
      EXPECT_TRUE(running(pids[0]));
    }
    // Killed and reaped: the pid names nothing any more.
    EXPECT_EQ(kill(pids[0], 0), -1);
    EXPECT_EQ(errno, ESRCH);
  }
  if (cpus.size() >= 2) {
    const contender both(contention{2, 0, 0}, LOCUS_BENCH_EXE);
    EXPECT_EQ(both.cpus(), (std::vector<int>{cpus[cpus.size() - 2], cpus.back()}));
  }
}

TEST(BenchContend, LoadProcessesDieWithTheProcessThatStartedThem) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t starter = fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {
    // Ends without the contender's destructor: only PR_SET_PDEATHSIG can stop the load.
    close(fds[0]);
    static std::optional<contender> c;
    c.emplace(contention{1, 0, 0}, LOCUS_BENCH_EXE);
    const pid_t load = c->pids().front();
    (void)!write(fds[1], &load, sizeof load);
    _exit(0);
  }
  close(fds[1]);
  pid_t load = 0;
  ASSERT_EQ(read(fds[0], &load, sizeof load), static_cast<ssize_t>(sizeof load));
  close(fds[0]);
  ASSERT_EQ(waitpid(starter, nullptr, 0), starter);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (running(load) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(running(load)) << "load process " << load << " outlived its parent";
}

#endif  // LOCUS_BENCH_EXE

TEST(BenchContend, LoadCommandRejectsBadArguments) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"load"},
                                               {"load", "x"},
                                               {"load", "0", "5"},
                                               {"load", "0", "1/0"},
                                               {"load", "0", "1/1", "extra"}}) {
    std::ostringstream out, err;
    EXPECT_EQ(run_load(args, out, err), 2);
    EXPECT_NE(err.str().find("usage: locus-bench load CPU [BUSY/IDLE]"), std::string::npos)
        << err.str();
    EXPECT_EQ(out.str(), "");
  }
}

TEST(BenchContend, RatiosPairConfigurationsOfTheSameLoad) {
  const contention busy{1, 0, 0};
  const auto result = [](impl which, int workers, contention load, double t) {
    config_result r;
    r.bench = "b";
    r.config = {which, which == impl::locus ? "ws" : "", workers, load};
    r.times_s = {t};
    return r;
  };
  std::vector<config_result> rs{
      result(impl::serial, 1, {}, 1.0),  result(impl::locus, 1, {}, 1.5),
      result(impl::locus, 2, {}, 0.5),   result(impl::serial, 1, busy, 2.0),
      result(impl::locus, 1, busy, 4.0), result(impl::locus, 2, busy, 8.0)};
  derive_ratios(rs);
  EXPECT_DOUBLE_EQ(*rs[1].t1_over_ts, 1.5);
  EXPECT_DOUBLE_EQ(*rs[2].t1_over_tp, 3.0);
  EXPECT_DOUBLE_EQ(*rs[4].t1_over_ts, 2.0);
  EXPECT_DOUBLE_EQ(*rs[5].t1_over_tp, 0.5);
  const std::string table = format_table(rs);
  EXPECT_NE(table.find("contend"), std::string::npos) << table;
  // median/serial of the loaded 2-worker run: 8.0 / 2.0.
  EXPECT_NE(table.find("4.000"), std::string::npos) << table;
}

#ifdef LOCUS_BENCH_EXE
// The JSON names the load of a loaded configuration, and its ratios come from the same invocation.
TEST(BenchContend, JsonAndRatiosPerLoad) {
  run_plan p = make_plan(
      parse_command_line({"run", "fib", "--size", "small", "--impl", "serial,locus", "--workers",
                          "1", "--reps", "2", "--contend", "none,1", "--json"}),
      registry::get(), 1);
  p.load_executable = LOCUS_BENCH_EXE;
  std::ostringstream out, log;
  ASSERT_EQ(execute(p, out, log), 0) << log.str();
  const std::vector<std::string> lines = locus_test::lines_of(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  EXPECT_EQ(lines[0].find(R"("contend")"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].find(R"("contend")"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(R"("impl":"serial","sched":null,"workers":1,"contend":"1")"),
            std::string::npos)
      << lines[2];
  EXPECT_NE(lines[3].find(R"("contend":"1")"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find(R"("t1_over_ts":)"), std::string::npos);
  EXPECT_EQ(lines[3].find(R"("t1_over_ts":null)"), std::string::npos) << lines[3];
  EXPECT_NE(log.str().find("locus/ws/1+contend=1 rep 2/2"), std::string::npos) << log.str();
}
#endif  // LOCUS_BENCH_EXE

}  // namespace
