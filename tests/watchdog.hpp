// Turns a hang into a failure: unless it is destroyed within `limit`, the whole test process
// ends with a message naming `what` (a deadlock cannot be recovered from inside the test).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace locus_test {

class watchdog {
 public:
  watchdog(std::string what, std::chrono::seconds limit)
      : what_(std::move(what)), thread_([this, limit] {
          std::unique_lock hold(lock_);
          if (!done_cv_.wait_for(hold, limit, [this] { return done_; })) {
            std::fprintf(stderr, "%s: still running after %lld s: deadlock\n", what_.c_str(),
                         static_cast<long long>(limit.count()));
            std::_Exit(1);
          }
        }) {}
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;
  ~watchdog() {
    {
      const std::lock_guard hold(lock_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

 private:
  std::string what_;
  std::mutex lock_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;  // last: it starts once the rest exists
};

}  // namespace locus_test
