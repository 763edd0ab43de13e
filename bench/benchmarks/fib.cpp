// fib: the naive doubly recursive Fibonacci with a spawn at every call down to n < 2 and, by
// default, no cutoff at all. Almost no work per task, so it measures the cost of a spawn and a
// join: with one worker, locus/serial is the per-spawn overhead of the work-first fast path.
// `cutoff` makes calls with n < cutoff serial (the usual way to write it: T1/TS close to 1).
#include <cstdint>
#include <memory>
#include <string>

#include <locus/task_group.hpp>
#include <locus/taskq.hpp>

#include "harness/benchmark.hpp"
#include "harness/dist_stats.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench {

namespace {

std::int64_t fib_serial(int n) {
  if (n < 2) return n;
  return fib_serial(n - 1) + fib_serial(n - 2);
}

// Cut: the version with a cutoff. Without one the code is exactly the naive fib (the cutoff's
// test, its serial branch and one more capture cost the spawning function 1-2 ns of a 20 ns
// spawn): `cutoff` stays out of the Cut = false instantiations.
template <bool Cut>
std::int64_t fib_locus(int n, int cutoff) {
  if constexpr (Cut) {
    if (n < cutoff) return fib_serial(n);
  }
  if (n < 2) return n;
  std::int64_t a = 0;
  locus::task_group tg;
  tg.run([&] {
    if constexpr (Cut) {
      a = fib_locus<Cut>(n - 1, cutoff);
    } else {
      a = fib_locus<Cut>(n - 1, 0);
    }
  });
  const std::int64_t b = fib_locus<Cut>(n - 2, cutoff);
  tg.wait();
  return a + b;
}

// The seed's Fig. 2 through locus::taskq (and, across the ranks of an MPI job,
// locus::dist_taskq): both calls are tasks, joined by wait(); calls with n < cutoff run the
// serial code (FIB_serial). Task functions find their queue through a global, as the seed's do;
// one run at a time uses it.
int fib_cutoff = 0;

template <class Queue, Queue** queue>
void fib_task_on(const int& n, std::int64_t& out) {
  if (n < fib_cutoff || n < 2) {
    out = fib_serial(n);
    return;
  }
  std::int64_t x = 0, y = 0;
  (*queue)->put(fib_task_on<Queue, queue>, n - 1, x);
  (*queue)->put(fib_task_on<Queue, queue>, n - 2, y);
  (*queue)->wait();
  out = x + y;
}

locus::taskq* fib_queue = nullptr;
constexpr auto fib_task = fib_task_on<locus::taskq, &fib_queue>;

#if LOCUS_BENCH_MPI
locus::dist_taskq* fib_dist_queue = nullptr;
constexpr auto fib_task_mpi = fib_task_on<locus::dist_taskq, &fib_dist_queue>;
#endif

#if LOCUS_BENCH_PEERS

template <bool Cut>
std::int64_t fib_tbb(int n, int cutoff) {
  if constexpr (Cut) {
    if (n < cutoff) return fib_serial(n);
  }
  if (n < 2) return n;
  std::int64_t a = 0;
  tbb::task_group tg;
  tg.run([&] {
    if constexpr (Cut) {
      a = fib_tbb<Cut>(n - 1, cutoff);
    } else {
      a = fib_tbb<Cut>(n - 1, 0);
    }
  });
  const std::int64_t b = fib_tbb<Cut>(n - 2, cutoff);
  tg.wait();
  return a + b;
}

template <bool Cut>
std::int64_t fib_omp(int n, int cutoff) {
  if constexpr (Cut) {
    if (n < cutoff) return fib_serial(n);
  }
  if (n < 2) return n;
  std::int64_t a = 0;
#pragma omp task default(none) shared(a) firstprivate(n, cutoff)
  a = fib_omp<Cut>(n - 1, cutoff);  // OpenMP copies what it captures either way
  const std::int64_t b = fib_omp<Cut>(n - 2, cutoff);
#pragma omp taskwait
  return a + b;
}

#endif

// The reference: iterative, exact for n <= 92.
std::int64_t fib_iterative(int n) {
  std::int64_t a = 0, b = 1;
  for (int i = 0; i < n; ++i) {
    const std::int64_t next = a + b;
    a = b;
    b = next;
  }
  return a;
}

class fib_instance final : public instance {
 public:
  fib_instance(int n, int cutoff) : n_(n), cutoff_(cutoff), expected_(fib_iterative(n)) {}

  void reset() override {
    result_ = -1;
    elsewhere_ = false;
  }

  void run(const run_context& ctx) override {
    switch (ctx.which) {
      case impl::serial:
        result_ = fib_serial(n_);
        break;
      case impl::locus:
        result_ = cutoff_ > 0 ? fib_locus<true>(n_, cutoff_) : fib_locus<false>(n_, 0);
        break;
      case impl::taskq:
        fib_queue = &queue_;
        fib_cutoff = cutoff_;
        queue_.put(fib_task, n_, result_);
        queue_.wait();
        break;
#if LOCUS_BENCH_MPI
      case impl::taskq_mpi:
        if (!dist_)
          dist_ = std::make_unique<locus::dist_taskq>(
              std::initializer_list<locus::taskq_function>{locus::task_function(fib_task_mpi)});
        fib_dist_queue = dist_.get();
        fib_cutoff = cutoff_;
        dist_->reset_stats();
        if (dist_->rank() == 0) dist_->put(fib_task_mpi, n_, result_);
        dist_->wait();
        elsewhere_ = dist_->rank() != 0;
        return;
#endif
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        result_ = cutoff_ > 0 ? fib_tbb<true>(n_, cutoff_) : fib_tbb<false>(n_, 0);
        break;
      case impl::omp:
        result_ = cutoff_ > 0 ? fib_omp<true>(n_, cutoff_) : fib_omp<false>(n_, 0);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    if (elsewhere_) return {true, "on rank 0", ""};
    v.result = std::to_string(result_);
    v.ok = result_ == expected_;
    if (!v.ok) v.message = "fib(" + std::to_string(n_) + ") = " + std::to_string(expected_);
    return v;
  }

#if LOCUS_BENCH_MPI
  std::string dist_stats_json() override {
    return dist_ ? locus_bench::dist_stats_json(*dist_) : std::string();
  }
#endif

 private:
  int n_;
  int cutoff_;
  std::int64_t expected_;
  std::int64_t result_ = -1;
  bool elsewhere_ = false;  // a taskq-mpi run on a rank other than 0: the result is there
  locus::taskq queue_{locus::task_function(fib_task)};
#if LOCUS_BENCH_MPI
  std::unique_ptr<locus::dist_taskq> dist_;  // collective: made at the first taskq-mpi run
#endif
};

}  // namespace

benchmark make_fib_benchmark() {
  benchmark b;
  b.name = "fib";
  b.description =
      "naive recursive Fibonacci, one task per call down to n < 2 (no cutoff by default): spawn "
      "and join overhead. Verified against an iterative fib.";
  b.params = {param_spec::integer("n", "compute fib(n), with fib(n+1) - 1 spawns",
                                  {"20", "30", "35"}, 0, 92),
              param_spec::integer("cutoff",
                                  "calls with n < cutoff run the serial code inside their task; 0 "
                                  "= no cutoff (a spawn per call, fib(n+1) - 1 spawns)",
                                  {"0", "0", "0"}, 0, 92)};
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.on_request = {impl::taskq, impl::taskq_mpi};
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    return std::make_unique<fib_instance>(static_cast<int>(p.integer("n")),
                                          static_cast<int>(p.integer("cutoff")));
  };
  return b;
}

}  // namespace locus_bench
