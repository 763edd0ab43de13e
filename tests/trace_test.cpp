// LOCUS_TRACE: the Chrome trace JSON parsed back (one event per line, as the writer promises):
// one slice per task, balanced begin/end per worker track, both ends of every flow, one steal
// flow per counted steal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fib.hpp"
#include "locus/locus.hpp"

namespace {

using locus_test::fib;

struct event {
  std::string ph, cat, name;
  int tid = -1;
  double ts = 0;
  std::optional<unsigned long long> id;
};

// The value after "key": in one event line; strings without escapes are all the tests need.
std::optional<std::string> field(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  const auto at = line.find(k);
  if (at == std::string::npos) return std::nullopt;
  std::size_t p = at + k.size();
  if (line[p] == '"') {
    const auto end = line.find('"', p + 1);
    return line.substr(p + 1, end - p - 1);
  }
  const auto end = line.find_first_of(",}", p);
  return line.substr(p, end - p);
}

struct trace {
  std::vector<event> events;  // in file order, metadata excluded
  std::map<int, std::string> thread_names;
  bool well_formed = false;
};

trace parse(const std::string& path) {
  trace t;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const bool header = line.rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0) == 0;
  std::string last;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line == "]}") break;
    if (line.back() == ',') line.pop_back();
    const std::string ph = field(line, "ph").value_or("");
    if (ph == "M") {
      if (field(line, "name") == "thread_name") {
        const auto tid = std::stoi(*field(line, "tid"));
        const auto at = line.find("\"args\":{\"name\":\"");
        t.thread_names[tid] = line.substr(at + 16, line.find('"', at + 16) - at - 16);
      }
      continue;
    }
    event e;
    e.ph = ph;
    e.cat = field(line, "cat").value_or("");
    e.name = field(line, "name").value_or("");
    e.tid = std::stoi(field(line, "tid").value_or("-1"));
    e.ts = std::stod(field(line, "ts").value_or("0"));
    if (auto id = field(line, "id")) e.id = std::stoull(*id);
    t.events.push_back(e);
  }
  t.well_formed = header && last == "]}";
  return t;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("locus_trace_") + std::to_string(::getpid()) + "_" + name + ".json"))
      .string();
}

std::uint64_t sum(const std::vector<std::uint64_t>& v) {
  std::uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

// Runs `body` as one root on a traced runtime, then checks the trace against its statistics.
template <class F>
trace run_and_check(locus::options opts, const char* name, F body) {
  const std::string path = temp_path(name);
  opts.trace = path;
  locus::stats st;
  int workers = 0;
  {
    locus::runtime rt(opts);
    workers = rt.num_workers();
    rt.exec(body);
    st = rt.stats();
  }  // the trace is written here
  trace t = parse(path);
  std::remove(path.c_str());
  EXPECT_TRUE(t.well_formed);

  const locus::worker_stats total = st.total();
  // One slice per task: every spawn plus the root.
  std::uint64_t task_slices = 0;
  std::map<int, int> depth;
  std::map<int, double> last_ts;
  std::map<unsigned long long, std::pair<int, int>> flows;  // id -> (starts, finishes)
  std::uint64_t steal_flows = 0;
  for (const event& e : t.events) {
    EXPECT_GE(e.tid, 0);
    EXPECT_LT(e.tid, workers);
    if (e.ph == "B" || e.ph == "E") {
      // Only the track's own worker writes its slices, in time order.
      EXPECT_GE(e.ts, last_ts[e.tid]);
      last_ts[e.tid] = e.ts;
      if (e.ph == "B") {
        ++depth[e.tid];
        if (e.cat == "task") ++task_slices;
      } else {
        EXPECT_GT(depth[e.tid], 0) << "end without begin on worker " << e.tid;
        --depth[e.tid];
      }
    } else if (e.ph == "s" || e.ph == "f") {
      EXPECT_TRUE(e.id.has_value());
      auto& f = flows[*e.id];
      (e.ph == "s" ? f.first : f.second)++;
      if (e.ph == "s" && e.cat == "steal") ++steal_flows;
    } else {
      ADD_FAILURE() << "unexpected phase " << e.ph;
    }
  }
  EXPECT_EQ(task_slices, total.spawns + 1);
  for (const auto& [tid, d] : depth) EXPECT_EQ(d, 0) << "unbalanced track " << tid;
  for (const auto& [id, f] : flows) {
    EXPECT_EQ(f.first, 1) << "flow " << id;
    EXPECT_EQ(f.second, 1) << "flow " << id;
  }
  EXPECT_EQ(steal_flows, sum(total.steals_by_level));
  EXPECT_EQ(static_cast<int>(t.thread_names.size()), workers);
  for (int i = 0; i < workers; ++i) EXPECT_EQ(t.thread_names[i], "worker " + std::to_string(i));
  return t;
}

TEST(Trace, FibOneWorkerHasOneSlicePerSpawnAndNoFlows) {
  const trace t =
      run_and_check(locus::options{.workers = 1}, "fib1", [] { EXPECT_EQ(fib(15), 610); });
  for (const event& e : t.events) EXPECT_NE(e.ph, "s");
}

TEST(Trace, FibTwoWorkers) {
  run_and_check(locus::options{.workers = 2}, "fib2", [] { EXPECT_EQ(fib(20), 6765); });
}

TEST(Trace, FibSixteenSyntheticWorkers) {
  const trace t = run_and_check(
      locus::options{.workers = 16, .topology = "pack:2 l3:1(size=8MB) l2:8(size=1MB) core:1 pu:1"},
      "fib16", [] { EXPECT_EQ(fib(20), 6765); });
  EXPECT_GT(t.events.size(), 0u);
}

TEST(Trace, ParentFirstTasksAreSlicesToo) {
  run_and_check(
      locus::options{.workers = 4, .topology = "pack:1 l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1"},
      "pf", [] {
        locus::task_group tg;
        for (int i = 0; i < 64; ++i) {
          tg.run([] { EXPECT_EQ(fib(8), 21); }, locus::parent_first);
        }
        tg.wait();
      });
}

TEST(Trace, LabelsAndSpawnSitesNameSlices) {
  const trace t = run_and_check(locus::options{.workers = 2}, "labels", [] {
    locus::task_group tg;
    for (int i = 0; i < 10; ++i) tg.run([] { EXPECT_EQ(fib(5), 5); }, locus::label{"leaf"});
    tg.run([] {}, locus::parent_first, locus::label{"queued"});
    tg.wait();
  });
  int leaf = 0, queued = 0, site = 0, root = 0;
  for (const event& e : t.events) {
    if (e.ph != "B" || e.cat != "task") continue;
    if (e.name == "leaf") ++leaf;
    if (e.name == "queued") ++queued;
    if (e.name == "root") ++root;
    // fib's own spawns are named after the closure's type, which names fib.
    if (e.name.find("fib") != std::string::npos) ++site;
  }
  EXPECT_EQ(leaf, 10);
  EXPECT_EQ(queued, 1);
  EXPECT_EQ(root, 1);
  EXPECT_GT(site, 0);
}

TEST(Trace, UnwritablePathNamesTheVariable) {
  try {
    locus::runtime rt(locus::options{.workers = 1, .trace = "/nonexistent-locus-dir/t.json"});
    FAIL() << "expected config_error";
  } catch (const locus::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("options::trace"), std::string::npos) << e.what();
  }
  ::setenv("LOCUS_TRACE", "/nonexistent-locus-dir/t.json", 1);
  try {
    locus::runtime rt(locus::options{.workers = 1});
    ::unsetenv("LOCUS_TRACE");
    FAIL() << "expected config_error";
  } catch (const locus::config_error& e) {
    ::unsetenv("LOCUS_TRACE");
    EXPECT_NE(std::string(e.what()).find("LOCUS_TRACE='/nonexistent-locus-dir/t.json'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Trace, OffWritesNothing) {
  locus::runtime rt(locus::options{.workers = 1, .trace = ""});
  EXPECT_EQ(rt.exec([] { return fib(10); }), 55);
  EXPECT_NE(rt.describe().find("LOCUS_TRACE        = (off)"), std::string::npos);
}

}  // namespace
