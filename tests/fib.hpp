// The fork-join program tests run when they need many spawns: fib with a task per call.
#pragma once

#include "locus/locus.hpp"

namespace locus_test {

inline long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  locus::task_group tg;
  tg.run([&] { a = fib(n - 1); });
  const long b = fib(n - 2);
  tg.wait();
  return a + b;
}

}  // namespace locus_test
