// taskq_fib: Fibonacci through HotSLAW's task-queue API (seed 004, Fig. 2; docs/taskq.md). A
// task is a registered function with a copied input and an output buffer; it puts its children
// into the queue and waits for them, and the queue's wait runs or steals other tasks meanwhile.
// The scheduler is locus's (LOCUS_SCHED): hws is HotSLAW's own (bounded split queues,
// hierarchical victim selection).
//
//   LOCUS_SCHED=hws build/release/examples/taskq_fib [n]
//
// Verified against an iterative Fibonacci.
#include <cstdio>
#include <cstdlib>

#include <locus/runtime.hpp>
#include <locus/taskq.hpp>

namespace {

constexpr int cutoff = 20;  // below this, fib runs serially (Fig. 2's CUTOFF)

// As in the seed, task functions reach their queue through a global.
locus::taskq* q = nullptr;

long fib_serial(int n) {
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

// Fig. 2's FIB in the typed form void f(const In&, Out&): In and Out must be trivially copyable.
void fib(const int& n, long& out) {
  if (n < cutoff) {
    out = fib_serial(n);
    return;
  }
  long x = 0, y = 0;
  q->put(fib, n - 1, x);  // the input is copied into the task: a temporary is fine
  q->put(fib, n - 2, y);
  q->wait();  // joins the two tasks this task put; x and y are defined after it
  out = x + y;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 32;

  // The queue is created over the functions it may run (the seed's taskq_all_alloc).
  locus::taskq queue{locus::task_function(fib)};
  q = &queue;
  long result = 0;
  // root_exec runs on the default runtime, configured from the environment (LOCUS_SCHED, ...).
  locus::root_exec([&] {
    queue.put(fib, n, result);
    queue.wait();
  });

  long a = 0, b = 1;  // the serial check: fib(n) iteratively
  for (int i = 0; i < n; ++i) {
    const long next = a + b;
    a = b;
    b = next;
  }
  const bool ok = result == a;
  std::printf("taskq-fib: fib(%d) = %ld under %s on %d workers, %s\n", n, result,
              locus::default_runtime().scheduler().c_str(), locus::num_workers(),
              ok ? "ok" : "WRONG");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
