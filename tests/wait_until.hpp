// Waiting in a test for another thread's progress without hanging the suite when it never comes.
#pragma once

#include <chrono>
#include <thread>

namespace locus_test {

// Spins until `done()` or `limit` has passed; false on the timeout. Between looks it yields, or
// sleeps for `pause` where one is given (a waiter that must leave the CPUs to the threads it
// waits for).
template <class Done>
bool wait_until(Done done, std::chrono::milliseconds limit = std::chrono::seconds(60),
                std::chrono::microseconds pause = std::chrono::microseconds(0)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    if (pause.count() > 0) {
      std::this_thread::sleep_for(pause);
    } else {
      std::this_thread::yield();
    }
  }
  return true;
}

}  // namespace locus_test
