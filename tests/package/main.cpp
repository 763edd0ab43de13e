// Consumer of the installed locus package: fork-join through the public API only, checked
// against the serial answer. Exits non-zero on a mismatch.
#include <locus/locus.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

namespace {

long fib(int n) {
  if (n < 2) return n;
  long a = 0;
  long b = 0;
  locus::task_group tg;
  tg.run([&] { a = fib(n - 1); });
  b = fib(n - 2);
  tg.wait();
  return a + b;
}

long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

// Sum of v[lo, hi) by recursive halving, two children per group.
long sum(const std::vector<long>& v, std::size_t lo, std::size_t hi) {
  if (hi - lo <= 64) return std::accumulate(v.begin() + lo, v.begin() + hi, 0L);
  const std::size_t mid = lo + (hi - lo) / 2;
  long left = 0;
  long right = 0;
  locus::task_group tg;
  tg.run([&] { left = sum(v, lo, mid); });
  tg.run([&] { right = sum(v, mid, hi); });
  tg.wait();
  return left + right;
}

}  // namespace

int main() {
  int failures = 0;

  const int n = 24;
  const long got = locus::root_exec([] { return fib(n); });
  const long want = fib_serial(n);
  std::printf("fib(%d) = %ld (expected %ld)\n", n, got, want);
  failures += got != want;

  std::vector<long> v(100000);
  std::iota(v.begin(), v.end(), 1L);
  const long s = locus::root_exec([&] { return sum(v, 0, v.size()); });
  const long s_want = static_cast<long>(v.size()) * (static_cast<long>(v.size()) + 1) / 2;
  std::printf("sum(1..%zu) = %ld (expected %ld)\n", v.size(), s, s_want);
  failures += s != s_want;

  std::printf("workers: %d\n", locus::num_workers());
  std::puts(failures == 0 ? "package consumer: OK" : "package consumer: FAILED");
  return failures == 0 ? 0 : 1;
}
