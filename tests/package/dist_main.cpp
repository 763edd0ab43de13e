// Consumer of the installed package's `dist` component: the distributed taskq started without
// mpirun, which runs as a single rank. Exits non-zero on a wrong answer.
#include <locus/dist_taskq.hpp>
#include <locus/locus.hpp>

#include <cstdio>

namespace {

locus::dist_taskq* queue = nullptr;

void fib_task(const int& n, long& out) {
  if (n < 2) {
    out = n;
    return;
  }
  long x = 0;
  long y = 0;
  queue->put(fib_task, n - 1, x);
  queue->put(fib_task, n - 2, y);
  queue->wait();
  out = x + y;
}

}  // namespace

int main() {
  locus::dist_taskq q{locus::task_function(fib_task)};
  queue = &q;
  long r = 0;
  locus::root_exec([&] {
    if (q.rank() == 0) q.put(fib_task, 20, r);
    q.wait();
  });
  std::printf("dist fib(20) = %ld on %d rank(s)\n", r, q.ranks());
  const bool ok = r == 6765 && q.ranks() == 1;
  std::puts(ok ? "dist consumer: OK" : "dist consumer: FAILED");
  return ok ? 0 : 1;
}
