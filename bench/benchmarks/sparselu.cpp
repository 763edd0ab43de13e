// sparselu: LU factorisation without pivoting of a sparse matrix of nb x nb blocks of bs x bs
// floats, some blocks null, as in BOTS sparselu (Duran et al., ICPP 2009), the SparseLU of seed
// 004 (HotSLAW, Sec. 4: "the matrix is organized in blocks and not all blocks are allocated";
// its OpenMP peer there is BOTS's). Step kk of the right-looking block factorisation:
//   lu0(A_kk)                                    by the parent, then in parallel
//   fwd(A_kk, A_kj)   for every non-null A_kj, j > kk   (A_kj = L_kk^-1 A_kj), and
//   bdiv(A_kk, A_ik)  for every non-null A_ik, i > kk   (A_ik = A_ik U_kk^-1); wait; then
//   bmod(A_ik, A_kj, A_ij) for every non-null pair      (A_ij -= A_ik A_kj), in parallel; wait.
// One task per fwd, bdiv and bmod (BOTS's task structure; no cutoff), the same in every
// implementation. A null A_ij that a bmod updates is filled in: the fill-in is computed when the
// matrix is prepared (it depends on the structure only) and its blocks start as zeros, so no
// allocation happens in the timed region. The kernels are BOTS's loops, reordered so the
// innermost loop runs along rows (vectorisable) while every element still receives its updates
// in the same order. locus tasks carry work hints (fwd and bdiv bs^3, bmod 2 bs^3) and each
// phase's group a size hint (the blocks it touches).
//
// Input: BOTS's genmat: block (i, j) is null when (i < j and i % 3 != 0) or (i > j and j % 3 != 0)
// or i or j is odd, except that the diagonal and the two neighbouring diagonals are always
// present; present blocks are filled in row-major block order with x = (x * 3125) % 65536 from
// x = 1325, each value (x - 32768) / 16384. Unlike BOTS, every diagonal entry then gains
// 2 c + 1, c the number of nonzeros of its row, which makes the matrix strictly diagonally
// dominant: without it the unpivoted factorisation of BOTS's matrix overflows to inf and NaN
// (at 25 x 32 already), and BOTS's own check, a relative difference, lets NaN pass.
//
// Parameters: nb (blocks per side; small 25, medium 50, large 256), bs (block order; small 32,
// medium 64, large 32). BOTS's default input is nb 50, bs 100; large has HotSLAW's task count
// (its Table 1: 1,430,912 tasks = the fwd, bdiv and bmod tasks of nb = 256) with small blocks.
// Verified two ways:
//  - against the factorisation by the serial code made when prepared: every entry within a
//    relative 1e-5 (BOTS's check uses 1e-6; the operation order is identical, so the results
//    normally agree bitwise);
//  - independently of that code: sampled entries of L U (L unit lower, U upper, both read from
//    the result) against the original matrix, within the backward error bound of Gaussian
//    elimination |A - L U| <= gamma_n |L| |U|, gamma_n = n u / (1 - n u), n = nb bs, u = 2^-24,
//    here with a factor 2 of slack.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <locus/locality.hpp>
#include <locus/task_group.hpp>
#include <locus/taskq.hpp>

#include "benchmarks/dense_common.hpp"
#include "harness/benchmark.hpp"
#include "harness/dist_stats.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench {

namespace {

using dense::dim;

// What a kernel reads and writes, for the locality model (one flag test outside a session).
void reads_block(dim bs, const float* b) {
  locus::locality::touch_read(b, static_cast<std::size_t>(bs * bs) * sizeof(float));
}
void writes_block(dim bs, const float* b) {
  locus::locality::touch_write(b, static_cast<std::size_t>(bs * bs) * sizeof(float));
}

// The BOTS kernels on bs x bs row-major blocks. Each is one out-of-line copy that every
// implementation calls: inlined into each one's tasks, the same loops were laid out differently
// per implementation, and a rebuild that moved them changed locus / oneTBB from 1.01 to 1.25.
[[gnu::noinline]] void lu0(dim bs, float* __restrict d) {
  writes_block(bs, d);
  for (dim k = 0; k < bs; ++k) {
    for (dim i = k + 1; i < bs; ++i) {
      d[i * bs + k] /= d[k * bs + k];
      const float l = d[i * bs + k];
      for (dim j = k + 1; j < bs; ++j) d[i * bs + j] -= l * d[k * bs + j];
    }
  }
}

// col = L^-1 col, L the unit lower triangle of d (BOTS loops j, k, i; here k, i, j).
[[gnu::noinline]] void fwd(dim bs, const float* __restrict d, float* __restrict col) {
  reads_block(bs, d);
  writes_block(bs, col);
  for (dim k = 0; k < bs; ++k) {
    for (dim i = k + 1; i < bs; ++i) {
      const float l = d[i * bs + k];
      for (dim j = 0; j < bs; ++j) col[i * bs + j] -= l * col[k * bs + j];
    }
  }
}

// row = row U^-1, U the upper triangle of d.
[[gnu::noinline]] void bdiv(dim bs, const float* __restrict d, float* __restrict row) {
  reads_block(bs, d);
  writes_block(bs, row);
  for (dim i = 0; i < bs; ++i) {
    for (dim k = 0; k < bs; ++k) {
      row[i * bs + k] /= d[k * bs + k];
      const float x = row[i * bs + k];
      for (dim j = k + 1; j < bs; ++j) row[i * bs + j] -= x * d[k * bs + j];
    }
  }
}

// inner -= row * col (BOTS loops i, j, k; here i, k, j).
[[gnu::noinline]] void bmod(dim bs, const float* __restrict row, const float* __restrict col,
                            float* __restrict inner) {
  reads_block(bs, row);
  reads_block(bs, col);
  writes_block(bs, inner);
  for (dim i = 0; i < bs; ++i) {
    for (dim k = 0; k < bs; ++k) {
      const float x = row[i * bs + k];
      for (dim j = 0; j < bs; ++j) inner[i * bs + j] -= x * col[k * bs + j];
    }
  }
}

// The block structure after fill-in and one storage pool laid out by it.
struct structure {
  dim nb = 0, bs = 0;
  std::vector<std::int32_t> slot;  // nb * nb; -1 = null block
  std::int32_t blocks = 0;

  bool present(dim i, dim j) const { return slot[static_cast<std::size_t>(i * nb + j)] >= 0; }
  std::size_t floats() const { return static_cast<std::size_t>(blocks) * bs * bs; }
};

class block_matrix {
 public:
  explicit block_matrix(const structure* s) : s_(s), pool_(s->floats()) {}
  float* at(dim i, dim j) {
    return pool_.data() +
           static_cast<std::size_t>(s_->slot[static_cast<std::size_t>(i * s_->nb + j)]) * s_->bs *
               s_->bs;
  }
  const float* at(dim i, dim j) const {
    return pool_.data() +
           static_cast<std::size_t>(s_->slot[static_cast<std::size_t>(i * s_->nb + j)]) * s_->bs *
               s_->bs;
  }
  float* data() { return pool_.data(); }
  const float* data() const { return pool_.data(); }
  std::size_t size() const { return pool_.size(); }

 private:
  const structure* s_;
  dense::aligned_buffer<float> pool_;
};

// BOTS genmat's null blocks.
bool bots_null(dim ii, dim jj) {
  bool null_entry = false;
  if (ii < jj && ii % 3 != 0) null_entry = true;
  if (ii > jj && jj % 3 != 0) null_entry = true;
  if (ii % 2 == 1) null_entry = true;
  if (jj % 2 == 1) null_entry = true;
  if (ii == jj) null_entry = false;
  if (ii == jj - 1) null_entry = false;
  if (ii - 1 == jj) null_entry = false;
  return null_entry;
}

void factor_serial(const structure& s, block_matrix& m) {
  const dim nb = s.nb, bs = s.bs;
  for (dim kk = 0; kk < nb; ++kk) {
    lu0(bs, m.at(kk, kk));
    for (dim jj = kk + 1; jj < nb; ++jj) {
      if (s.present(kk, jj)) fwd(bs, m.at(kk, kk), m.at(kk, jj));
    }
    for (dim ii = kk + 1; ii < nb; ++ii) {
      if (s.present(ii, kk)) bdiv(bs, m.at(kk, kk), m.at(ii, kk));
    }
    for (dim ii = kk + 1; ii < nb; ++ii) {
      if (!s.present(ii, kk)) continue;
      for (dim jj = kk + 1; jj < nb; ++jj) {
        if (s.present(kk, jj)) bmod(bs, m.at(ii, kk), m.at(kk, jj), m.at(ii, jj));
      }
    }
  }
}

// Blocks in row kk right of the diagonal and in column kk below it (the phase-1 tasks).
std::size_t panel_blocks(const structure& s, dim kk, std::size_t* rows, std::size_t* cols) {
  *rows = *cols = 0;
  for (dim x = kk + 1; x < s.nb; ++x) {
    if (s.present(kk, x)) ++*cols;
    if (s.present(x, kk)) ++*rows;
  }
  return *rows + *cols;
}

void factor_locus(const structure& s, block_matrix& m) {
  const dim nb = s.nb, bs = s.bs;
  const double unit = dense::cube(bs);
  const std::size_t block_bytes = static_cast<std::size_t>(bs * bs) * sizeof(float);
  for (dim kk = 0; kk < nb; ++kk) {
    float* diag = m.at(kk, kk);
    lu0(bs, diag);
    std::size_t rows = 0, cols = 0;
    const std::size_t panel = panel_blocks(s, kk, &rows, &cols);
    {
      locus::task_group tg{locus::work_hint{unit * static_cast<double>(panel)},
                           locus::size_hint{(panel + 1) * block_bytes}};
      for (dim jj = kk + 1; jj < nb; ++jj) {
        if (!s.present(kk, jj)) continue;
        float* col = m.at(kk, jj);
        tg.run([bs, diag, col] { fwd(bs, diag, col); }, locus::work_hint{unit});
      }
      for (dim ii = kk + 1; ii < nb; ++ii) {
        if (!s.present(ii, kk)) continue;
        float* row = m.at(ii, kk);
        tg.run([bs, diag, row] { bdiv(bs, diag, row); }, locus::work_hint{unit});
      }
      tg.wait();
    }
    {
      locus::task_group tg{locus::work_hint{2 * unit * static_cast<double>(rows * cols)},
                           locus::size_hint{(rows * cols + rows + cols) * block_bytes}};
      for (dim ii = kk + 1; ii < nb; ++ii) {
        if (!s.present(ii, kk)) continue;
        const float* row = m.at(ii, kk);
        for (dim jj = kk + 1; jj < nb; ++jj) {
          if (!s.present(kk, jj)) continue;
          const float* col = m.at(kk, jj);
          float* inner = m.at(ii, jj);
          tg.run([bs, row, col, inner] { bmod(bs, row, col, inner); }, locus::work_hint{2 * unit});
        }
      }
      tg.wait();
    }
  }
}

// Through locus::taskq, as the seed's SparseLU: three task functions whose inputs are the block
// pointers (16, 16 and 24 bytes, its Table 1), the block order a global. Per step the parent
// factors the diagonal block, puts the fwd and bdiv tasks, a fence, then the bmod tasks, which
// the fence holds until the panel is done, and waits.
struct panel_input {
  const float* diag;
  float* block;
};
struct update_input {
  const float* row;
  const float* col;
  float* inner;
};

dim taskq_bs = 0;

void fwd_task(const panel_input& in) {
  fwd(taskq_bs, in.diag, in.block);
}
void bdiv_task(const panel_input& in) {
  bdiv(taskq_bs, in.diag, in.block);
}
void bmod_task(const update_input& in) {
  bmod(taskq_bs, in.row, in.col, in.inner);
}

void factor_taskq(const structure& s, block_matrix& m, locus::taskq& q) {
  const dim nb = s.nb, bs = s.bs;
  taskq_bs = bs;
  for (dim kk = 0; kk < nb; ++kk) {
    float* diag = m.at(kk, kk);
    lu0(bs, diag);
    for (dim jj = kk + 1; jj < nb; ++jj) {
      if (s.present(kk, jj)) q.put(fwd_task, panel_input{diag, m.at(kk, jj)});
    }
    for (dim ii = kk + 1; ii < nb; ++ii) {
      if (s.present(ii, kk)) q.put(bdiv_task, panel_input{diag, m.at(ii, kk)});
    }
    q.fence();
    for (dim ii = kk + 1; ii < nb; ++ii) {
      if (!s.present(ii, kk)) continue;
      const float* row = m.at(ii, kk);
      for (dim jj = kk + 1; jj < nb; ++jj) {
        if (s.present(kk, jj)) q.put(bmod_task, update_input{row, m.at(kk, jj), m.at(ii, jj)});
      }
    }
    q.wait();
  }
}

#if LOCUS_BENCH_MPI

// Through locus::dist_taskq across MPI ranks. The matrix lives on rank 0; a task's input is the
// bytes of the blocks it reads (fwd, bdiv: the diagonal block, then the block; bmod: the row,
// column and inner blocks) and its output the updated block, which lands on the block itself on
// rank 0 (at once where the task runs there, when it comes back otherwise). Fenced puts never
// migrate (docs/distributed.md), so each step waits where the taskq version fences: twice a
// step, and every other rank calls the collective top-level wait as often.
dim mpi_bs = 0;

std::size_t block_bytes(dim bs) {
  return static_cast<std::size_t>(bs * bs) * sizeof(float);
}

void fwd_raw(void* in, void* out) {
  const auto* diag = static_cast<const float*>(in);
  std::memcpy(out, diag + mpi_bs * mpi_bs, block_bytes(mpi_bs));
  fwd(mpi_bs, diag, static_cast<float*>(out));
}
void bdiv_raw(void* in, void* out) {
  const auto* diag = static_cast<const float*>(in);
  std::memcpy(out, diag + mpi_bs * mpi_bs, block_bytes(mpi_bs));
  bdiv(mpi_bs, diag, static_cast<float*>(out));
}
void bmod_raw(void* in, void* out) {
  const auto* row = static_cast<const float*>(in);
  const float* col = row + mpi_bs * mpi_bs;
  std::memcpy(out, col + mpi_bs * mpi_bs, block_bytes(mpi_bs));
  bmod(mpi_bs, row, col, static_cast<float*>(out));
}

std::unique_ptr<locus::dist_taskq> make_sparselu_queue(dim bs) {
  const std::size_t b = block_bytes(bs);
  return std::make_unique<locus::dist_taskq>(std::initializer_list<locus::taskq_function>{
      locus::task_function(fwd_raw, 2 * b, b), locus::task_function(bdiv_raw, 2 * b, b),
      locus::task_function(bmod_raw, 3 * b, b)});
}

// The calling rank's part of a factorisation: rank 0 puts the tasks, every rank waits.
void factor_taskq_mpi(const structure& s, block_matrix& m, locus::dist_taskq& q) {
  const dim nb = s.nb, bs = s.bs;
  mpi_bs = bs;
  const auto elems = static_cast<std::size_t>(bs * bs);
  std::vector<float> in(3 * elems);
  const auto put = [&](locus::task_fn fn, std::initializer_list<const float*> blocks, float* out) {
    std::size_t at = 0;
    for (const float* b : blocks) {
      std::copy(b, b + elems, in.data() + at);
      at += elems;
    }
    q.put(fn, in.data(), out);
  };
  const bool puts = q.rank() == 0;
  for (dim kk = 0; kk < nb; ++kk) {
    if (puts) {
      float* diag = m.at(kk, kk);
      lu0(bs, diag);
      for (dim jj = kk + 1; jj < nb; ++jj) {
        if (s.present(kk, jj)) put(fwd_raw, {diag, m.at(kk, jj)}, m.at(kk, jj));
      }
      for (dim ii = kk + 1; ii < nb; ++ii) {
        if (s.present(ii, kk)) put(bdiv_raw, {diag, m.at(ii, kk)}, m.at(ii, kk));
      }
    }
    q.wait();
    if (puts) {
      for (dim ii = kk + 1; ii < nb; ++ii) {
        if (!s.present(ii, kk)) continue;
        for (dim jj = kk + 1; jj < nb; ++jj) {
          if (s.present(kk, jj)) {
            put(bmod_raw, {m.at(ii, kk), m.at(kk, jj), m.at(ii, jj)}, m.at(ii, jj));
          }
        }
      }
    }
    q.wait();
  }
}

#endif

#if LOCUS_BENCH_PEERS

void factor_tbb(const structure& s, block_matrix& m) {
  const dim nb = s.nb, bs = s.bs;
  for (dim kk = 0; kk < nb; ++kk) {
    float* diag = m.at(kk, kk);
    lu0(bs, diag);
    {
      tbb::task_group tg;
      for (dim jj = kk + 1; jj < nb; ++jj) {
        if (!s.present(kk, jj)) continue;
        float* col = m.at(kk, jj);
        tg.run([bs, diag, col] { fwd(bs, diag, col); });
      }
      for (dim ii = kk + 1; ii < nb; ++ii) {
        if (!s.present(ii, kk)) continue;
        float* row = m.at(ii, kk);
        tg.run([bs, diag, row] { bdiv(bs, diag, row); });
      }
      tg.wait();
    }
    {
      tbb::task_group tg;
      for (dim ii = kk + 1; ii < nb; ++ii) {
        if (!s.present(ii, kk)) continue;
        const float* row = m.at(ii, kk);
        for (dim jj = kk + 1; jj < nb; ++jj) {
          if (!s.present(kk, jj)) continue;
          const float* col = m.at(kk, jj);
          float* inner = m.at(ii, jj);
          tg.run([bs, row, col, inner] { bmod(bs, row, col, inner); });
        }
      }
      tg.wait();
    }
  }
}

void factor_omp(const structure& s, block_matrix& m) {
  const dim nb = s.nb, bs = s.bs;
  for (dim kk = 0; kk < nb; ++kk) {
    float* diag = m.at(kk, kk);
    lu0(bs, diag);
    for (dim jj = kk + 1; jj < nb; ++jj) {
      if (!s.present(kk, jj)) continue;
      float* col = m.at(kk, jj);
#pragma omp task default(none) firstprivate(bs, diag, col)
      fwd(bs, diag, col);
    }
    for (dim ii = kk + 1; ii < nb; ++ii) {
      if (!s.present(ii, kk)) continue;
      float* row = m.at(ii, kk);
#pragma omp task default(none) firstprivate(bs, diag, row)
      bdiv(bs, diag, row);
    }
#pragma omp taskwait
    for (dim ii = kk + 1; ii < nb; ++ii) {
      if (!s.present(ii, kk)) continue;
      const float* row = m.at(ii, kk);
      for (dim jj = kk + 1; jj < nb; ++jj) {
        if (!s.present(kk, jj)) continue;
        const float* col = m.at(kk, jj);
        float* inner = m.at(ii, jj);
#pragma omp task default(none) firstprivate(bs, row, col, inner)
        bmod(bs, row, col, inner);
      }
    }
#pragma omp taskwait
  }
}

#endif

class sparselu_instance final : public instance {
 public:
  sparselu_instance(dim nb, dim bs)
      : s_(make_structure(nb, bs)), orig_(&s_), ref_(&s_), work_(&s_) {
    generate();
    std::copy(orig_.data(), orig_.data() + orig_.size(), ref_.data());
    factor_serial(s_, ref_);
  }

  void reset() override { std::copy(orig_.data(), orig_.data() + orig_.size(), work_.data()); }

  void run(const run_context& ctx) override {
    switch (ctx.which) {
      case impl::serial:
        factor_serial(s_, work_);
        break;
      case impl::locus:
        factor_locus(s_, work_);
        break;
      case impl::taskq:
        factor_taskq(s_, work_, queue_);
        break;
#if LOCUS_BENCH_MPI
      case impl::taskq_mpi:
        if (!dist_) dist_ = make_sparselu_queue(s_.bs);  // collective
        dist_->reset_stats();
        factor_taskq_mpi(s_, work_, *dist_);
        elsewhere_ = dist_->rank() != 0;
        break;
#endif
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        factor_tbb(s_, work_);
        break;
      case impl::omp:
        factor_omp(s_, work_);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    if (elsewhere_) return {true, "on rank 0", ""};
    // A checksum of the factors, for the record.
    double sum = 0;
    for (std::size_t i = 0; i < work_.size(); ++i) sum += work_.data()[i];
    v.result = "blocks=" + std::to_string(s_.blocks) + " sum=" + std::to_string(sum);
    if (!std::isfinite(sum)) {
      v.message = "the factors hold a non-finite value";
      return v;
    }
    if (!compare_reference(v.message)) return v;
    if (!check_backward_error(v.message)) return v;
    v.ok = true;
    return v;
  }

#if LOCUS_BENCH_MPI
  std::string dist_stats_json() override {
    return dist_ ? locus_bench::dist_stats_json(*dist_) : std::string();
  }
#endif

 private:
  static structure make_structure(dim nb, dim bs) {
    structure s;
    s.nb = nb;
    s.bs = bs;
    std::vector<char> p(static_cast<std::size_t>(nb * nb));
    for (dim i = 0; i < nb; ++i) {
      for (dim j = 0; j < nb; ++j) p[static_cast<std::size_t>(i * nb + j)] = !bots_null(i, j);
    }
    // Symbolic factorisation: bmod(ii, kk, jj) fills A_ij in.
    for (dim kk = 0; kk < nb; ++kk) {
      for (dim ii = kk + 1; ii < nb; ++ii) {
        if (!p[static_cast<std::size_t>(ii * nb + kk)]) continue;
        for (dim jj = kk + 1; jj < nb; ++jj) {
          if (p[static_cast<std::size_t>(kk * nb + jj)])
            p[static_cast<std::size_t>(ii * nb + jj)] = 1;
        }
      }
    }
    s.slot.assign(static_cast<std::size_t>(nb * nb), -1);
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i]) s.slot[i] = s.blocks++;
    }
    return s;
  }

  // BOTS genmat on the original structure; fill-in blocks are zero.
  void generate() {
    const dim nb = s_.nb, bs = s_.bs;
    std::int64_t x = 1325;
    for (dim ii = 0; ii < nb; ++ii) {
      for (dim jj = 0; jj < nb; ++jj) {
        if (!s_.present(ii, jj)) continue;
        float* b = orig_.at(ii, jj);
        if (bots_null(ii, jj)) {
          std::fill(b, b + bs * bs, 0.0f);
          continue;
        }
        for (dim e = 0; e < bs * bs; ++e) {
          x = (3125 * x) % 65536;
          b[e] = static_cast<float>((static_cast<double>(x) - 32768.0) / 16384.0);
        }
      }
    }
    // Diagonal dominance: every diagonal entry gains 2 c + 1, c the row's nonzeros.
    for (dim ii = 0; ii < nb; ++ii) {
      dim row_blocks = 0;
      for (dim jj = 0; jj < nb; ++jj) row_blocks += bots_null(ii, jj) ? 0 : 1;
      float* d = orig_.at(ii, ii);
      for (dim i = 0; i < bs; ++i) d[i * bs + i] += static_cast<float>(2 * row_blocks * bs + 1);
    }
  }

  bool compare_reference(std::string& message) const {
    constexpr double eps = 1e-5;
    const float* w = work_.data();
    const float* r = ref_.data();
    for (std::size_t i = 0; i < work_.size(); ++i) {
      const double diff = std::abs(static_cast<double>(w[i]) - r[i]);
      if (diff == 0) continue;
      if (r[i] == 0 || diff / std::abs(static_cast<double>(r[i])) > eps) {
        message = "entry " + std::to_string(i) + " of the block pool is " + std::to_string(w[i]) +
                  ", the serial factorisation has " + std::to_string(r[i]);
        return false;
      }
    }
    return true;
  }

  // L(r, k) and U(k, c) read from the factors; zero outside the structure.
  double lower(dim r, dim k) const {
    if (k > r) return 0;
    if (k == r) return 1;
    const dim bs = s_.bs, bi = r / bs, bk = k / bs;
    if (!s_.present(bi, bk)) return 0;
    return work_.at(bi, bk)[(r % bs) * bs + k % bs];
  }
  double upper(dim k, dim c) const {
    if (k > c) return 0;
    const dim bs = s_.bs, bk = k / bs, bj = c / bs;
    if (!s_.present(bk, bj)) return 0;
    return work_.at(bk, bj)[(k % bs) * bs + c % bs];
  }

  bool check_backward_error(std::string& message) const {
    const dim nb = s_.nb, bs = s_.bs, n = nb * bs;
    const double u = std::ldexp(1.0, -24), nu = static_cast<double>(n) * u;
    const double gamma = 2 * nu / (1 - nu);
    const std::int32_t per_block = std::max<std::int32_t>(1, 16384 / s_.blocks);
    dense::splitmix64 g(0x51a7e5eedull);
    for (dim bi = 0; bi < nb; ++bi) {
      for (dim bj = 0; bj < nb; ++bj) {
        if (!s_.present(bi, bj)) continue;
        for (std::int32_t t = 0; t < per_block; ++t) {
          const dim i = static_cast<dim>(g.below(static_cast<std::uint64_t>(bs)));
          const dim j = static_cast<dim>(g.below(static_cast<std::uint64_t>(bs)));
          const dim r = bi * bs + i, c = bj * bs + j;
          double lu = 0, abs_lu = 0;
          for (dim k = 0; k <= std::min(r, c); ++k) {
            const double p = lower(r, k) * upper(k, c);
            lu += p;
            abs_lu += std::abs(p);
          }
          const double a = orig_.at(bi, bj)[i * bs + j];
          if (std::abs(lu - a) > gamma * abs_lu + 1e-30) {
            message = "(LU)(" + std::to_string(r) + "," + std::to_string(c) +
                      ") = " + std::to_string(lu) + ", A = " + std::to_string(a) +
                      ": beyond the backward error bound " + std::to_string(gamma * abs_lu);
            return false;
          }
        }
      }
    }
    return true;
  }

  structure s_;
  block_matrix orig_, ref_, work_;
  locus::taskq queue_{locus::task_function(fwd_task), locus::task_function(bdiv_task),
                      locus::task_function(bmod_task)};
  bool elsewhere_ = false;  // a taskq-mpi run on a rank other than 0: the factors are there
#if LOCUS_BENCH_MPI
  std::unique_ptr<locus::dist_taskq> dist_;  // collective: made at the first taskq-mpi run
#endif
};

}  // namespace

benchmark make_sparselu_benchmark() {
  benchmark b;
  b.name = "sparselu";
  b.description =
      "BOTS SparseLU: LU without pivoting of nb x nb blocks of bs x bs floats, some null; per "
      "step a task per fwd and bdiv, then a task per bmod. Verified against the serial "
      "factorisation and by sampled entries of L*U against A (backward error bound).";
  b.params = {
      param_spec::integer("nb", "blocks per side", {"25", "50", "256"}, 1, 1000),
      param_spec::integer("bs", "block order (floats per side)", {"32", "64", "32"}, 1, 1024),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.on_request = {impl::taskq, impl::taskq_mpi};
  b.check = [](const param_values& p) {
    const double floats =
        static_cast<double>(p.integer("nb")) * p.integer("nb") * p.integer("bs") * p.integer("bs");
    // Three pools of at most nb^2 blocks: keep them within 12 GiB.
    if (3 * floats * sizeof(float) > 12.0 * (1ull << 30)) {
      throw usage_error(
          "--set sparselu.nb, sparselu.bs: nb^2 bs^2 floats in three copies exceed "
          "12 GiB");
    }
  };
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    return std::make_unique<sparselu_instance>(p.integer("nb"), p.integer("bs"));
  };
  return b;
}

}  // namespace locus_bench
