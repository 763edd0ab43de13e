// nqueens: counts the placements of n non-attacking queens on an n x n board by exhaustive
// search, one row at a time. Every safe column of a row is a task (the BOTS nqueens shape), down
// to the last row unless `cutoff` says otherwise; the board is three bit masks passed by value.
// Verified against the known solution counts (OEIS A000170).
#include <array>
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

constexpr int max_n = 16;

// Solutions for n = 1..16.
constexpr std::array<std::uint64_t, max_n + 1> known_solutions{
    0, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};

// Columns, and the two diagonal directions, attacked in the current row.
struct board {
  std::uint32_t cols = 0, left = 0, right = 0;
};

struct problem {
  int n;
  int cutoff;  // rows >= cutoff are searched serially; 0: no cutoff
  std::uint32_t full;

  std::uint32_t free_cols(const board& b) const { return ~(b.cols | b.left | b.right) & full; }
  board place(const board& b, std::uint32_t bit) const {
    return {b.cols | bit, ((b.left | bit) << 1) & full, (b.right | bit) >> 1};
  }
  bool serial_below(int row) const { return cutoff > 0 && row >= cutoff; }
};

std::uint64_t solve_serial(const problem& p, int row, board b) {
  if (row == p.n) return 1;
  std::uint64_t count = 0;
  for (std::uint32_t avail = p.free_cols(b); avail != 0; avail &= avail - 1) {
    count += solve_serial(p, row + 1, p.place(b, avail & -avail));
  }
  return count;
}

std::uint64_t solve_locus(const problem& p, int row, board b) {
  if (row == p.n) return 1;
  if (p.serial_below(row)) return solve_serial(p, row, b);
  std::array<std::uint64_t, max_n> counts{};
  int k = 0;
  locus::task_group tg;
  for (std::uint32_t avail = p.free_cols(b); avail != 0; avail &= avail - 1, ++k) {
    const board next = p.place(b, avail & -avail);
    tg.run([&p, &counts, k, row, next] { counts[k] = solve_locus(p, row + 1, next); });
  }
  tg.wait();
  std::uint64_t count = 0;
  for (int i = 0; i < k; ++i) count += counts[i];
  return count;
}

// Through locus::taskq: a task per safe column, its input the problem and the board after
// placing the queen (copied into the task), its output the subtree's count.
struct nqueens_input {
  const problem* p;
  int row;
  board b;
};

locus::taskq* nqueens_queue = nullptr;

std::uint64_t solve_taskq(const problem& p, int row, board b);

void nqueens_task(const nqueens_input& in, std::uint64_t& out) {
  out = solve_taskq(*in.p, in.row, in.b);
}

std::uint64_t solve_taskq(const problem& p, int row, board b) {
  if (row == p.n) return 1;
  if (p.serial_below(row)) return solve_serial(p, row, b);
  std::array<std::uint64_t, max_n> counts{};
  int k = 0;
  for (std::uint32_t avail = p.free_cols(b); avail != 0; avail &= avail - 1, ++k) {
    nqueens_queue->put(nqueens_task, nqueens_input{&p, row + 1, p.place(b, avail & -avail)},
                       counts[static_cast<std::size_t>(k)]);
  }
  nqueens_queue->wait();
  std::uint64_t count = 0;
  for (int i = 0; i < k; ++i) count += counts[static_cast<std::size_t>(i)];
  return count;
}

#if LOCUS_BENCH_MPI

// Across the ranks of an MPI job: the input carries no pointer (it would mean nothing on another
// rank); every rank sets the problem up identically before the run.
problem nqueens_dist_problem{};
locus::dist_taskq* nqueens_dist_queue = nullptr;

struct nqueens_mpi_input {
  int row;
  board b;
};

std::uint64_t solve_taskq_mpi(int row, board b);

void nqueens_task_mpi(const nqueens_mpi_input& in, std::uint64_t& out) {
  out = solve_taskq_mpi(in.row, in.b);
}

std::uint64_t solve_taskq_mpi(int row, board b) {
  const problem& p = nqueens_dist_problem;
  if (row == p.n) return 1;
  if (p.serial_below(row)) return solve_serial(p, row, b);
  std::array<std::uint64_t, max_n> counts{};
  int k = 0;
  for (std::uint32_t avail = p.free_cols(b); avail != 0; avail &= avail - 1, ++k) {
    nqueens_dist_queue->put(nqueens_task_mpi,
                            nqueens_mpi_input{row + 1, p.place(b, avail & -avail)},
                            counts[static_cast<std::size_t>(k)]);
  }
  nqueens_dist_queue->wait();
  std::uint64_t count = 0;
  for (int i = 0; i < k; ++i) count += counts[static_cast<std::size_t>(i)];
  return count;
}

#endif

#if LOCUS_BENCH_PEERS

std::uint64_t solve_tbb(const problem& p, int row, board b) {
  if (row == p.n) return 1;
  if (p.serial_below(row)) return solve_serial(p, row, b);
  std::array<std::uint64_t, max_n> counts{};
  int k = 0;
  tbb::task_group tg;
  for (std::uint32_t avail = p.free_cols(b); avail != 0; avail &= avail - 1, ++k) {
    const board next = p.place(b, avail & -avail);
    tg.run([&p, &counts, k, row, next] { counts[k] = solve_tbb(p, row + 1, next); });
  }
  tg.wait();
  std::uint64_t count = 0;
  for (int i = 0; i < k; ++i) count += counts[i];
  return count;
}

std::uint64_t solve_omp(const problem* p, int row, board b) {
  if (row == p->n) return 1;
  if (p->serial_below(row)) return solve_serial(*p, row, b);
  std::array<std::uint64_t, max_n> counts{};
  std::uint64_t* slots = counts.data();
  int k = 0;
  for (std::uint32_t avail = p->free_cols(b); avail != 0; avail &= avail - 1, ++k) {
    const board next = p->place(b, avail & -avail);
#pragma omp task default(none) firstprivate(p, slots, k, row, next)
    slots[k] = solve_omp(p, row + 1, next);
  }
#pragma omp taskwait
  std::uint64_t count = 0;
  for (int i = 0; i < k; ++i) count += counts[i];
  return count;
}

#endif

class nqueens_instance final : public instance {
 public:
  nqueens_instance(int n, int cutoff) : p_{n, cutoff, (std::uint32_t{1} << n) - 1} {}

  void reset() override {
    result_ = ~std::uint64_t{0};
    elsewhere_ = false;
  }

  void run(const run_context& ctx) override {
    switch (ctx.which) {
      case impl::serial:
        result_ = solve_serial(p_, 0, {});
        break;
      case impl::locus:
        result_ = solve_locus(p_, 0, {});
        break;
      case impl::taskq:
        nqueens_queue = &queue_;
        queue_.put(nqueens_task, nqueens_input{&p_, 0, {}}, result_);
        queue_.wait();
        break;
#if LOCUS_BENCH_MPI
      case impl::taskq_mpi:
        if (!dist_) {
          dist_ = std::make_unique<locus::dist_taskq>(
              std::initializer_list<locus::taskq_function>{locus::task_function(nqueens_task_mpi)});
        }
        nqueens_dist_problem = p_;
        nqueens_dist_queue = dist_.get();
        dist_->reset_stats();
        if (dist_->rank() == 0) dist_->put(nqueens_task_mpi, nqueens_mpi_input{0, {}}, result_);
        dist_->wait();
        elsewhere_ = dist_->rank() != 0;
        break;
#endif
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        result_ = solve_tbb(p_, 0, {});
        break;
      case impl::omp:
        result_ = solve_omp(&p_, 0, {});
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    if (elsewhere_) return {true, "on rank 0", ""};
    const std::uint64_t expected = known_solutions[static_cast<std::size_t>(p_.n)];
    v.result = std::to_string(result_);
    v.ok = result_ == expected;
    if (!v.ok) {
      v.message = std::to_string(p_.n) + " queens have " + std::to_string(expected) +
                  " solutions, not " + v.result;
    }
    return v;
  }

#if LOCUS_BENCH_MPI
  std::string dist_stats_json() override {
    return dist_ ? locus_bench::dist_stats_json(*dist_) : std::string();
  }
#endif

 private:
  problem p_;
  std::uint64_t result_ = ~std::uint64_t{0};
  bool elsewhere_ = false;  // a taskq-mpi run on a rank other than 0: the result is there
  locus::taskq queue_{locus::task_function(nqueens_task)};
#if LOCUS_BENCH_MPI
  std::unique_ptr<locus::dist_taskq> dist_;  // collective: made at the first taskq-mpi run
#endif
};

}  // namespace

benchmark make_nqueens_benchmark() {
  benchmark b;
  b.name = "nqueens";
  b.description =
      "count the solutions of the n-queens problem, one task per safe column of every row. "
      "Verified against the known counts for n = 1..16.";
  b.params = {
      param_spec::integer("n", "board size", {"8", "12", "14"}, 1, max_n),
      param_spec::integer("cutoff",
                          "rows with index >= cutoff (row 0 is the first) are searched serially "
                          "inside their task; 0 = no cutoff, a task per column down to the last "
                          "row",
                          {"0", "0", "0"}, 0, max_n),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.on_request = {impl::taskq, impl::taskq_mpi};
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    return std::make_unique<nqueens_instance>(static_cast<int>(p.integer("n")),
                                              static_cast<int>(p.integer("cutoff")));
  };
  return b;
}

}  // namespace locus_bench
