#include "harness/contention.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ostream>
#include <stdexcept>

#include "harness/benchmark.hpp"
#include "harness/platform.hpp"

extern char** environ;

namespace locus_bench {
namespace {

constexpr int max_phase_us = 10'000'000;

long long now_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

int parse_int(std::string_view text, int min, int max, bool& ok) {
  int v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data(), end, v);
  ok = ok && !text.empty() && r.ec == std::errc{} && r.ptr == end && v >= min && v <= max;
  return v;
}

// BUSY/IDLE into load; false when malformed.
bool parse_phases(std::string_view text, contention& load) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  bool ok = true;
  load.busy_us = parse_int(text.substr(0, slash), 1, max_phase_us, ok);
  load.idle_us = parse_int(text.substr(slash + 1), 1, max_phase_us, ok);
  return ok;
}

std::string errno_text(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

}  // namespace

std::string contention::text() const {
  if (quiet()) return "none";
  std::string s = std::to_string(processes);
  if (idle_us > 0) s += ":" + std::to_string(busy_us) + "/" + std::to_string(idle_us);
  return s;
}

contention parse_contention(std::string_view text, int cpus) {
  if (text == "none") return {};
  contention c;
  bool ok = true;
  const std::size_t colon = text.find(':');
  c.processes = parse_int(text.substr(0, colon), 1, cpus, ok);
  if (colon != std::string_view::npos) ok = ok && parse_phases(text.substr(colon + 1), c);
  if (!ok) {
    throw usage_error("--contend: invalid value '" + std::string(text) +
                      "': expected none, N (N always-busy processes) or N:BUSY/IDLE (bursts of " +
                      "BUSY microseconds busy, IDLE asleep), N in [1, " + std::to_string(cpus) +
                      "] (the CPUs this process may use), BUSY and IDLE in [1, " +
                      std::to_string(max_phase_us) + "]");
  }
  return c;
}

contender::contender(const contention& load, const std::string& executable) {
  const std::vector<int> cpus = cpus_allowed();
  if (static_cast<int>(cpus.size()) < load.processes) {
    throw std::runtime_error("--contend " + load.text() + ": this process may use only " +
                             std::to_string(cpus.size()) + " CPUs");
  }
  try {
    for (int i = 0; i < load.processes; ++i) {
      start(load, executable, cpus[cpus.size() - static_cast<std::size_t>(load.processes - i)]);
    }
  } catch (...) {
    stop();
    throw;
  }
}

contender::~contender() {
  stop();
}

void contender::start(const contention& load, const std::string& executable, int cpu) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("--contend: pipe", errno));
  std::vector<std::string> args{executable, "load", std::to_string(cpu)};
  if (load.idle_us > 0) {
    args.push_back(std::to_string(load.busy_us) + "/" + std::to_string(load.idle_us));
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The child's standard output is the pipe (dup2 clears O_CLOEXEC on the copy).
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, executable.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    throw std::runtime_error("--contend: cannot start " + executable + ": " + std::strerror(err));
  }
  pids_.push_back(pid);
  cpus_.push_back(cpu);
  // Started only once it runs where it should: the timed run must not begin without it.
  char ready[6] = {};
  std::size_t got = 0;
  while (got < sizeof ready - 1) {
    const ssize_t n = read(fds[0], ready + got, sizeof ready - 1 - got);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  if (std::string_view(ready, got) != "ready") {
    throw std::runtime_error("--contend " + load.text() + ": the load process '" + executable +
                             " load " + std::to_string(cpu) +
                             "' did not start (see its message above)");
  }
}

void contender::stop() noexcept {
  for (const pid_t pid : pids_) kill(pid, SIGKILL);
  for (const pid_t pid : pids_) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pids_.clear();
  cpus_.clear();
}

int run_load(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const int cpus = CPU_SETSIZE;
  bool ok = args.size() == 2 || args.size() == 3;
  contention load{1, 0, 0};
  int cpu = 0;
  if (ok) cpu = parse_int(args[1], 0, cpus - 1, ok);
  if (ok && args.size() == 3) ok = parse_phases(args[2], load);
  if (!ok) {
    err << "locus-bench: error: usage: locus-bench load CPU [BUSY/IDLE] (CPU in [0, " << cpus - 1
        << "], BUSY and IDLE microseconds in [1, " << max_phase_us << "])\n";
    return 2;
  }
  const pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 0;  // the parent died before the line above took effect
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    err << "locus-bench: load: cannot run on CPU " << cpu << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  out << "ready" << std::flush;
  volatile unsigned long long spin = 0;
  for (;;) {
    const long long until = now_ns() + static_cast<long long>(load.busy_us) * 1000;
    while (load.idle_us == 0 || now_ns() < until) spin = spin + 1;
    timespec nap{load.idle_us / 1'000'000, static_cast<long>(load.idle_us % 1'000'000) * 1000};
    while (nanosleep(&nap, &nap) != 0 && errno == EINTR) {
    }
  }
}

}  // namespace locus_bench
