// Contention for `locus-bench run --contend`: other processes competing for this machine's CPUs
// while a configuration runs, the way a user's program shares a machine with a build or a noisy
// neighbour. A load is N processes, each pinned to one of the last N CPUs this process may use,
// either always busy (a spinning loop) or in bursts (spinning BUSY microseconds, then asleep IDLE
// microseconds). The harness starts a configuration's load before each of its runs and ends it
// after, outside the timed interval, so quiet and loaded configurations interleave in one
// invocation.
#pragma once

#include <sys/types.h>

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace locus_bench {

struct contention {
  int processes = 0;  // 0: quiet
  int busy_us = 0;    // with idle_us: the length of a burst
  int idle_us = 0;    // 0: always busy

  bool quiet() const noexcept { return processes == 0; }
  // "none", "1" (always busy) or "1:1000/1000" (bursts): what --contend accepts.
  std::string text() const;
  bool operator==(const contention&) const = default;
};

// Parses one load: none, N or N:BUSY/IDLE (N in [1, cpus], BUSY and IDLE microseconds in
// [1, 10^7]). Throws usage_error naming --contend and the accepted forms.
contention parse_contention(std::string_view text, int cpus);

// The running processes of one load: `executable load CPU [BUSY/IDLE]` (a locus-bench binary;
// run_load below) once per process, each started (pinned and spinning) when the constructor
// returns, killed and reaped by the destructor. Separate programs rather than forks: a fork's
// copy-on-write pages would make the measured process fault on its first write to each page. Each
// process dies with this one (PR_SET_PDEATHSIG), so an interrupted run leaves nothing behind.
// Throws std::runtime_error when a process cannot be started or pinned.
class contender {
 public:
  contender(const contention& load, const std::string& executable);
  contender(const contender&) = delete;
  contender& operator=(const contender&) = delete;
  ~contender();

  const std::vector<pid_t>& pids() const noexcept { return pids_; }
  // The CPU process i is pinned to.
  const std::vector<int>& cpus() const noexcept { return cpus_; }

 private:
  void start(const contention& load, const std::string& executable, int cpu);
  void stop() noexcept;

  std::vector<pid_t> pids_;
  std::vector<int> cpus_;
};

// `locus-bench load CPU [BUSY/IDLE]`: one load process. Pins itself to CPU, writes "ready" on
// standard output, then spins forever, or BUSY microseconds at a time with IDLE microseconds
// asleep between, until it is killed or its parent dies. Returns only on bad arguments (status 2,
// message on err) or when it cannot be pinned (status 1).
int run_load(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace locus_bench
