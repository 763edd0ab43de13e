#include "harness/quiesce.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace locus_bench {

std::vector<char> other_thread_states() {
  const std::string self = std::to_string(::syscall(SYS_gettid));
  std::vector<char> states;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const std::string tid = task.path().filename().string();
    if (tid == self) continue;
    std::ifstream stat(task.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;  // the thread has just ended
    // "tid (comm) S ...": the name may hold spaces and parentheses, the state follows the last ')'.
    const auto close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) continue;
    states.push_back(line[close + 2]);
  }
  return states;
}

quiesce_result wait_for_other_threads_to_sleep(const std::function<std::vector<char>()>& states,
                                               std::chrono::microseconds poll,
                                               std::chrono::milliseconds limit) {
  quiesce_result r;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const std::vector<char> now = states();
    ++r.looks;
    if (std::none_of(now.begin(), now.end(), [](char s) { return s == 'R'; })) {
      r.asleep = true;
      return r;
    }
    if (std::chrono::steady_clock::now() >= deadline) return r;
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace locus_bench
