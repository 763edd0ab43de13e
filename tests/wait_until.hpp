// Waiting in a test for another thread's progress without hanging the suite when it never comes.
#pragma once

#include <chrono>
#include <thread>

namespace locus_test {

// Spins (yielding) until `done()` or a minute has passed; false on the timeout.
template <class Done>
bool wait_until(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace locus_test
