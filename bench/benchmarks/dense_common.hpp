// Shared pieces of the dense matrix benchmarks (matmul, matmul-z, strassen, strassen-z): an
// aligned buffer, the leaf kernel, the serial cache-oblivious products on row-major and blocked
// Z-Morton storage (the layout of NUMA-WS, seed 001, Fig. 6b, is locus::z_layout), Strassen's
// algorithm on either, the deterministic inputs and the exact verification.
//
// Inputs are float matrices whose entries are integers drawn uniformly from {-1, 0, 1}
// (splitmix64, fixed seeds). Every product and every partial sum of such a product is then an
// integer of magnitude at most n (classical) or below 5 n 2^levels (Strassen, see
// strassen_exact), so as long as that stays within 2^24 float arithmetic is exact in any
// summation order, and the result can be checked exactly: the timing is that of ordinary float
// data (no denormals, no special values), the verification has tolerance zero.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <locus/locality.hpp>
#include <locus/task_group.hpp>
#include <locus/zmatrix.hpp>

#include "benchmarks/placement.hpp"
#include "harness/benchmark.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench::dense {

// An uninitialised array of T aligned to 64 bytes (std::aligned_alloc, released with std::free).
template <class T>
class aligned_buffer {
 public:
  aligned_buffer() = default;
  explicit aligned_buffer(std::size_t count) : size_(count) {
    if (count == 0) return;
    const std::size_t bytes = (count * sizeof(T) + alignment - 1) / alignment * alignment;
    void* p = std::aligned_alloc(alignment, bytes);
    if (p == nullptr) throw std::bad_alloc();
    data_.reset(static_cast<T*>(p));
  }
  T* data() noexcept { return data_.get(); }
  const T* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  void fill(T v) { std::fill(data_.get(), data_.get() + size_, v); }

 private:
  static constexpr std::size_t alignment = 64;
  struct free_deleter {
    void operator()(T* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<T[], free_deleter> data_;
  std::size_t size_ = 0;
};

using dim = std::ptrdiff_t;

// Work of an h x h x h product: the unit of the work hints.
inline double cube(dim h) {
  return static_cast<double>(h) * static_cast<double>(h) * static_cast<double>(h);
}

inline bool power_of_two(std::int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

// Rejects an order n or a block order `key` that is not a power of two, or a block above n.
inline void check_orders(const param_values& p, const std::string& bench, const std::string& key) {
  const std::int64_t n = p.integer("n"), block = p.integer(key);
  if (!power_of_two(n)) throw usage_error("--set " + bench + ".n: must be a power of two");
  if (!power_of_two(block)) {
    throw usage_error("--set " + bench + "." + key + ": must be a power of two");
  }
  if (block > n) throw usage_error("--set " + bench + "." + key + ": must be at most n");
}

// The leaf kernel: C += A * B for L x L blocks, row-major with leading dimensions. L must be a
// multiple of 8. Every 4 x 8 tile of C is accumulated in registers over the whole k range: eight
// 4-float vectors (GCC vector extensions, SSE2 without -march flags), each step loading two
// vectors of a row of B and broadcasting one element of A per row of the tile.
typedef float float4 __attribute__((vector_size(16)));

inline float4 load4(const float* p) {
  float4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, float4 v) {
  std::memcpy(p, &v, sizeof v);
}

inline void kernel(dim L, const float* __restrict a, dim lda, const float* __restrict b, dim ldb,
                   float* __restrict c, dim ldc) {
  constexpr int rows = 4, vecs = 2;
  for (dim i0 = 0; i0 < L; i0 += rows) {
    for (dim j0 = 0; j0 < L; j0 += 4 * vecs) {
      float4 acc[rows][vecs];
      for (int r = 0; r < rows; ++r) {
        for (int v = 0; v < vecs; ++v) acc[r][v] = load4(c + (i0 + r) * ldc + j0 + 4 * v);
      }
      for (dim k = 0; k < L; ++k) {
        float4 bk[vecs];
        for (int v = 0; v < vecs; ++v) bk[v] = load4(b + k * ldb + j0 + 4 * v);
        for (int r = 0; r < rows; ++r) {
          const float x = a[(i0 + r) * lda + k];
          const float4 xv = {x, x, x, x};
          for (int v = 0; v < vecs; ++v) acc[r][v] += xv * bk[v];
        }
      }
      for (int r = 0; r < rows; ++r) {
        for (int v = 0; v < vecs; ++v) store4(c + (i0 + r) * ldc + j0 + 4 * v, acc[r][v]);
      }
    }
  }
}

// A square s x s view of a row-major matrix.
struct view {
  float* p;
  dim ld;
  view quad(int qi, int qj, dim half) const { return {p + qi * half * ld + qj * half, ld}; }
};
struct cview {
  const float* p;
  dim ld;
  cview(const float* ptr, dim lead) : p(ptr), ld(lead) {}
  cview(view v) : p(v.p), ld(v.ld) {}  // NOLINT: a view reads as a const view
  cview quad(int qi, int qj, dim half) const { return {p + qi * half * ld + qj * half, ld}; }
};

// Locality model (locus-bench --locality): a leaf product reads s x s blocks of A and B and
// updates one of C, one strided declaration each (a Z block is contiguous: ld = s).
inline void declare_leaf(dim s, const float* a, dim lda, const float* b, dim ldb, float* c,
                         dim ldc) {
  namespace loc = locus::locality;
  const auto row = static_cast<std::size_t>(s) * sizeof(float);
  const auto rows = static_cast<std::size_t>(s);
  constexpr auto f = static_cast<dim>(sizeof(float));
  loc::touch_read_rows(a, row, rows, lda * f);
  loc::touch_read_rows(b, row, rows, ldb * f);
  loc::touch_write_rows(c, row, rows, ldc * f);
}

// Serial cache-oblivious C += A * B on row-major views, down to leaf x leaf kernels. The same
// eight products in the same order as the parallel versions, so the serial elision is exact.
inline void matmul_rowmajor_serial(dim s, cview a, cview b, view c, dim leaf) {
  if (s <= leaf) {
    declare_leaf(s, a.p, a.ld, b.p, b.ld, c.p, c.ld);
    kernel(s, a.p, a.ld, b.p, b.ld, c.p, c.ld);
    return;
  }
  const dim h = s / 2;
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        matmul_rowmajor_serial(h, a.quad(i, k, h), b.quad(k, j, h), c.quad(i, j, h), leaf);
      }
    }
  }
}

// Serial C += A * B on blocked Z matrices of order s with leaf x leaf blocks (locus::z_layout):
// quadrant (i, j) is the contiguous quarter 2 i + j, so the recursion passes plain pointers and
// the kernel runs on whole blocks. Same product order as matmul_rowmajor_serial.
inline void matmul_z_serial(dim s, const float* a, const float* b, float* c, dim leaf) {
  if (s <= leaf) {
    declare_leaf(s, a, s, b, s, c, s);
    kernel(s, a, s, b, s, c, s);
    return;
  }
  const dim h = s / 2, q = h * h;
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        matmul_z_serial(h, a + (2 * i + k) * q, b + (2 * k + j) * q, c + (2 * i + j) * q, leaf);
      }
    }
  }
}

// The two phases of a locus quadrant product of order s (C_ij += A_i0 B_0j for all i, j, then
// C_ij += A_i1 B_1j), each phase's four products children of one task group; product(i, k, j, h)
// computes one of order h = s / 2. With one place, three are spawned and the fourth runs inline;
// with several (the top call of a run), product (i, j) is a queued child hinted to
// placement::place_of_part(2 i + j, 4, places), the place of C's quadrant.
template <class Product>
void quadrant_phases(dim s, int places, const Product& product) {
  const dim h = s / 2;
  const locus::work_hint child{cube(h)};
  const locus::size_hint phase_bytes{static_cast<std::size_t>(2 * s * s) * sizeof(float)};
  for (int k = 0; k < 2; ++k) {
    locus::task_group tg{locus::work_hint{4 * cube(h)}, phase_bytes};
    if (places < 2) {
      tg.run([&product, k, h] { product(0, k, 0, h); }, child);
      tg.run([&product, k, h] { product(0, k, 1, h); }, child);
      tg.run([&product, k, h] { product(1, k, 0, h); }, child);
      product(1, k, 1, h);
    } else {
      placement::each_part_own_last(4, places, [&](int q) {
        tg.run([&product, q, k, h] { product(q / 2, k, q % 2, h); }, child,
               placement::hint_of_part(q, 4, places), locus::parent_first);
      });
    }
    tg.wait();
  }
}

// Strassen's algorithm on either storage. A storage gives quadrants of a matrix view, wraps a
// contiguous temporary of order h as a view, says how a matrix of order h is swept element-wise
// (rows x cols with stride ld) and runs the classical product below the Strassen cutoff.
struct rowmajor_storage {
  static view quad(view m, int q, dim h) { return m.quad(q / 2, q % 2, h); }
  static cview quad(cview m, int q, dim h) { return m.quad(q / 2, q % 2, h); }
  static view temp(float* p, dim h) { return {p, h}; }
  static dim rows(dim h) { return h; }
  static dim cols(dim h) { return h; }
  static void classical(dim s, cview a, cview b, view c, dim leaf) {
    matmul_rowmajor_serial(s, a, b, c, leaf);
  }
};

// In blocked Z storage (locus::z_layout) a matrix of order h is h^2 contiguous floats, its
// quadrant q the q-th quarter; element-wise it is swept as one row of h^2 (ld = h^2).
struct z_storage {
  static view quad(view m, int q, dim h) { return {m.p + q * h * h, h * h}; }
  static cview quad(cview m, int q, dim h) { return {m.p + q * h * h, h * h}; }
  static view temp(float* p, dim h) { return {p, h * h}; }
  static dim rows(dim) { return 1; }
  static dim cols(dim h) { return h * h; }
  static void classical(dim s, cview a, cview b, view c, dim leaf) {
    matmul_z_serial(s, a.p, b.p, c.p, leaf);
  }
};

// The fork-join of an implementation: children through a locus::task_group, a tbb::task_group
// or omp tasks (children of the calling task, so wait's taskwait joins them), or called in place
// in the same order (the serial elision of the same code). The hints are locus's.
template <impl I>
class fork_join;

template <>
class fork_join<impl::locus> {
 public:
  fork_join(locus::work_hint w, locus::size_hint s) : tg_(w, s) {}
  template <class F>
  void run(F& f, locus::work_hint w) {
    tg_.run(f, w);
  }
  // A hinted top-level child, queued (placement.hpp).
  template <class F>
  void run_at(F f, locus::work_hint w, locus::place where) {
    tg_.run(std::move(f), w, where, locus::parent_first);
  }
  void wait() { tg_.wait(); }

 private:
  locus::task_group tg_;
};

template <>
class fork_join<impl::serial> {
 public:
  fork_join(locus::work_hint, locus::size_hint) {}
  template <class F>
  void run(F& f, locus::work_hint) {
    f();
  }
  void wait() {}
};

#if LOCUS_BENCH_PEERS

template <>
class fork_join<impl::tbb> {
 public:
  fork_join(locus::work_hint, locus::size_hint) {}
  template <class F>
  void run(F& f, locus::work_hint) {
    tg_.run(f);
  }
  void wait() { tg_.wait(); }

 private:
  tbb::task_group tg_;
};

template <>
class fork_join<impl::omp> {
 public:
  fork_join(locus::work_hint, locus::size_hint) {}
  // f is the caller's, alive until wait().
  template <class F>
  void run(F& f, locus::work_hint) {
    F* fp = &f;
#pragma omp task default(none) firstprivate(fp)
    (*fp)();
  }
  void wait() {
#pragma omp taskwait
  }
};

#endif

// The seven products M_i = (A_x + sa A_y)(B_x + sb B_y) of Strassen (1969), quadrants numbered
// 0 = 11, 1 = 12, 2 = 21, 3 = 22; y < 0: the single quadrant x.
struct strassen_operand {
  int x, y;
  float sign;
};
inline constexpr strassen_operand strassen_a[7] = {{0, 3, 1}, {2, 3, 1},  {0, -1, 0}, {3, -1, 0},
                                                   {0, 1, 1}, {2, 0, -1}, {1, 3, -1}};
inline constexpr strassen_operand strassen_b[7] = {{0, 3, 1},  {0, -1, 0}, {1, 3, -1}, {2, 0, -1},
                                                   {3, -1, 0}, {0, 1, 1},  {2, 3, 1}};
// C_q += sum of sign * M_i: C11 = M1 + M4 - M5 + M7, C12 = M3 + M5, C21 = M2 + M4,
// C22 = M1 - M2 + M3 + M6 (terms beyond `count` unused).
struct strassen_sum {
  int count;
  int m[4];
  float sign[4];
};
inline constexpr strassen_sum strassen_c[4] = {{4, {0, 3, 4, 6}, {1, 1, -1, 1}},
                                               {2, {2, 4, 0, 0}, {1, 1, 0, 0}},
                                               {2, {1, 3, 0, 0}, {1, 1, 0, 0}},
                                               {4, {0, 1, 2, 5}, {1, -1, 1, 1}}};

// The quadrant of C whose place product i runs at: one that product updates, two products a
// quadrant but one, chosen so that C12 and C21 read only products of their own place.
inline constexpr int strassen_home[7] = {0, 2, 1, 2, 1, 3, 0};

// d = x + sign * y, element-wise over a rows x cols sweep.
inline void strassen_add(dim rows, dim cols, view d, cview x, cview y, float sign) {
  namespace loc = locus::locality;
  const auto row = static_cast<std::size_t>(cols) * sizeof(float);
  constexpr auto f = static_cast<dim>(sizeof(float));
  loc::touch_read_rows(x.p, row, static_cast<std::size_t>(rows), x.ld * f);
  loc::touch_read_rows(y.p, row, static_cast<std::size_t>(rows), y.ld * f);
  loc::touch_write_rows(d.p, row, static_cast<std::size_t>(rows), d.ld * f);
  for (dim r = 0; r < rows; ++r) {
    float* __restrict dr = d.p + r * d.ld;
    const float* __restrict xr = x.p + r * x.ld;
    const float* __restrict yr = y.p + r * y.ld;
    for (dim j = 0; j < cols; ++j) dr[j] = xr[j] + sign * yr[j];
  }
}

// c += sum of the `t.count` signed products (contiguous temporaries with stride m_ld).
inline void strassen_accumulate(dim rows, dim cols, view c, const float* m, dim m_size, dim m_ld,
                                const strassen_sum& t) {
  namespace loc = locus::locality;
  const auto row = static_cast<std::size_t>(cols) * sizeof(float);
  constexpr auto f = static_cast<dim>(sizeof(float));
  for (int k = 0; k < t.count; ++k) {
    loc::touch_read_rows(m + t.m[k] * m_size, row, static_cast<std::size_t>(rows), m_ld * f);
  }
  loc::touch_write_rows(c.p, row, static_cast<std::size_t>(rows), c.ld * f);
  const float* m0 = m + t.m[0] * m_size;
  const float* m1 = m + t.m[1] * m_size;
  for (dim r = 0; r < rows; ++r) {
    float* __restrict cr = c.p + r * c.ld;
    const float* __restrict r0 = m0 + r * m_ld;
    const float* __restrict r1 = m1 + r * m_ld;
    if (t.count == 2) {
      const float s0 = t.sign[0], s1 = t.sign[1];
      for (dim j = 0; j < cols; ++j) cr[j] += s0 * r0[j] + s1 * r1[j];
    } else {
      const float* __restrict r2 = m + t.m[2] * m_size + r * m_ld;
      const float* __restrict r3 = m + t.m[3] * m_size + r * m_ld;
      const float s0 = t.sign[0], s1 = t.sign[1], s2 = t.sign[2], s3 = t.sign[3];
      for (dim j = 0; j < cols; ++j) cr[j] += (s0 * r0[j] + s1 * r1[j]) + (s2 * r2[j] + s3 * r3[j]);
    }
  }
}

// C += A * B by Strassen's algorithm down to order `cutoff`, then the classical product with
// leaf x leaf kernels. The seven products run in parallel (fork_join<I>: the same children for
// every implementation), each forming its operand sums in its own temporaries and writing its
// own M_i; then the four quadrants of C accumulate their products in parallel. Work hints: a
// product h^3 each (they are equal), a quadrant update h^2; size hints: the call's inputs,
// output and products, (3 s^2 + 7 h^2) floats.
//
// Places (the top call of a run with several): the update of quadrant q is a queued child hinted
// to placement::place_of_part(q, 4, places), where the instances bind C's quadrant q, and product
// i one hinted to the place of strassen_home[i], a quadrant it updates, where its temporaries are
// then written first and its M_i is read by that update (seed 001 gave strassen no hints; these
// are the top-level calls that have a place).
template <class L, impl I>
void strassen(dim s, cview a, cview b, view c, dim cutoff, dim leaf, int places = 1) {
  if (s <= cutoff) {
    L::classical(s, a, b, c, leaf);
    return;
  }
  const dim h = s / 2, q = h * h;
  const std::size_t bytes = static_cast<std::size_t>(3 * s * s + 7 * q) * sizeof(float);
  // Place hints are locus's: the other fork_joins have no run_at, hence the if constexpr below.
  const bool placed = I == impl::locus && places > 1;
  aligned_buffer<float> m(static_cast<std::size_t>(7 * q));
  {
    fork_join<I> fj(locus::work_hint{7 * cube(h)}, locus::size_hint{bytes});
    auto product = [&, h, q](int i) {
      aligned_buffer<float> sa, sb;
      const strassen_operand& oa = strassen_a[i];
      const strassen_operand& ob = strassen_b[i];
      cview x = L::quad(a, oa.x, h), y = L::quad(b, ob.x, h);
      if (oa.y >= 0) {
        sa = aligned_buffer<float>(static_cast<std::size_t>(q));
        strassen_add(L::rows(h), L::cols(h), L::temp(sa.data(), h), x, L::quad(a, oa.y, h),
                     oa.sign);
        x = L::temp(sa.data(), h);
      }
      if (ob.y >= 0) {
        sb = aligned_buffer<float>(static_cast<std::size_t>(q));
        strassen_add(L::rows(h), L::cols(h), L::temp(sb.data(), h), y, L::quad(b, ob.y, h),
                     ob.sign);
        y = L::temp(sb.data(), h);
      }
      float* mi = m.data() + i * q;
      locus::locality::touch_write(mi, static_cast<std::size_t>(q) * sizeof(float));
      std::fill(mi, mi + q, 0.0f);
      strassen<L, I>(h, x, y, L::temp(mi, h), cutoff, leaf);
    };
    const locus::work_hint w{cube(h)};
    if (placed) {
      if constexpr (I == impl::locus) {
        const auto home = [places](int i) {
          return placement::place_of_part(strassen_home[i], 4, places);
        };
        placement::each_part_own_last(7, home, [&](int i) {
          fj.run_at([&product, i] { product(i); }, w, locus::place{home(i)});
        });
      }
    } else {
      auto p0 = [&] { product(0); };
      auto p1 = [&] { product(1); };
      auto p2 = [&] { product(2); };
      auto p3 = [&] { product(3); };
      auto p4 = [&] { product(4); };
      auto p5 = [&] { product(5); };
      fj.run(p0, w);
      fj.run(p1, w);
      fj.run(p2, w);
      fj.run(p3, w);
      fj.run(p4, w);
      fj.run(p5, w);
      product(6);
    }
    fj.wait();
  }
  {
    fork_join<I> fj(locus::work_hint{4 * static_cast<double>(q)}, locus::size_hint{bytes});
    const dim m_ld = L::temp(m.data(), h).ld;
    auto update = [&, h, q, m_ld](int k) {
      strassen_accumulate(L::rows(h), L::cols(h), L::quad(c, k, h), m.data(), q, m_ld,
                          strassen_c[k]);
    };
    const locus::work_hint w{static_cast<double>(q)};
    if (placed) {
      if constexpr (I == impl::locus) {
        placement::each_part_own_last(4, places, [&](int k) {
          fj.run_at([&update, k] { update(k); }, w, placement::hint_of_part(k, 4, places));
        });
      }
    } else {
      auto u0 = [&] { update(0); };
      auto u1 = [&] { update(1); };
      auto u2 = [&] { update(2); };
      fj.run(u0, w);
      fj.run(u1, w);
      fj.run(u2, w);
      update(3);
    }
    fj.wait();
  }
}

// Inputs in {-1, 0, 1} keep Strassen exact while every intermediate stays below 2^24: with
// L = log2(n / cutoff) Strassen levels, operands at level l are bounded by 2^l, the products
// M_i of level l + 1 by n 2^(l+1), and a quadrant update by n 2^l + 4 n 2^(l+1) < 5 n 2^L.
inline bool strassen_exact(dim n, dim cutoff) {
  double bound = 5.0 * static_cast<double>(n);
  for (dim s = n; s > cutoff; s /= 2) bound *= 2;
  return bound <= 16777216.0;
}

// Checks n, leaf and cutoff of strassen and strassen-z: powers of two, leaf <= cutoff <= n, and
// an exact result for the ternary inputs (strassen_exact).
inline void check_strassen_orders(const param_values& p, const std::string& bench) {
  check_orders(p, bench, "leaf");
  const std::int64_t n = p.integer("n"), cutoff = p.integer("cutoff"), leaf = p.integer("leaf");
  if (!power_of_two(cutoff) || cutoff < leaf || cutoff > n) {
    throw usage_error("--set " + bench + ".cutoff: must be a power of two in [leaf, n]");
  }
  if (!strassen_exact(n, cutoff)) {
    throw usage_error("--set " + bench + ".cutoff: too small for n = " + std::to_string(n) +
                      ": 5 n 2^(log2(n / cutoff)) must stay within 2^24 for an exact result");
  }
}

// splitmix64: the generator of every input here (Steele, Lea, Flood 2014).
class splitmix64 {
 public:
  explicit splitmix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) (bound well below 2^32: the bias of the modulo is below 2^-32).
  std::uint64_t below(std::uint64_t bound) { return next() % bound; }

 private:
  std::uint64_t s_;
};

// An n x n input with entries in {-1, 0, 1}, kept as bytes for the exact verification.
inline std::vector<std::int8_t> random_ternary(dim n, std::uint64_t seed) {
  std::vector<std::int8_t> m(static_cast<std::size_t>(n * n));
  splitmix64 g(seed);
  for (auto& x : m) x = static_cast<std::int8_t>(static_cast<int>(g.below(3)) - 1);
  return m;
}

// Writes the n x n row-major byte matrix src into the row-major dst with leading dimension ld.
inline void store(const std::vector<std::int8_t>& src, dim n, float* dst, dim ld) {
  for (dim i = 0; i < n; ++i) {
    for (dim j = 0; j < n; ++j) {
      dst[i * ld + j] = static_cast<float>(src[static_cast<std::size_t>(i * n + j)]);
    }
  }
}

// The same into blocked Z storage (staged row-major, then locus::to_z).
inline void store(const std::vector<std::int8_t>& src, const locus::z_layout& layout, float* dst) {
  const auto n = static_cast<dim>(layout.order());
  aligned_buffer<float> staged(layout.size());
  store(src, n, staged.data(), n);
  locus::to_z(layout, staged.data(), layout.order(), dst);
}

// The exact check of C = A * B for the ternary inputs, C row-major with leading dimension ld:
//  1. every entry of C is an integer (of magnitude at most n);
//  2. Freivalds' check with two random integer vectors x in [-2^20, 2^20]: C x = A (B x) exactly
//     in 64-bit integers; a wrong C passes with probability below 2^-40;
//  3. one random entry of every leaf block against its dot product, to name a wrong block;
// and returns the sum of all entries of C, which must equal (1^T A)(B 1).
struct check_result {
  bool ok = false;
  std::string result;
  std::string message;
};

inline check_result check_product(const std::vector<std::int8_t>& a,
                                  const std::vector<std::int8_t>& b, dim n, const float* c, dim ld,
                                  dim leaf) {
  check_result out;
  const auto un = static_cast<std::size_t>(n);
  // Load C as integers, row-major.
  std::vector<std::int32_t> ci(un * un);
  bool integral = true;
  for (dim i = 0; i < n; ++i) {
    for (dim j = 0; j < n; ++j) {
      const float v = c[i * ld + j];
      const bool exact_int = std::abs(v) <= static_cast<float>(n) && v == std::nearbyint(v);
      if (!exact_int) integral = false;
      ci[static_cast<std::size_t>(i * n + j)] =
          exact_int ? static_cast<std::int32_t>(v) : INT32_MIN;
    }
  }
  if (!integral) {
    out.result = "not integral";
    out.message = "C has an entry that is not an integer in [-n, n]";
    return out;
  }
  std::int64_t sum = 0;
  for (const auto v : ci) sum += v;
  out.result = "sum=" + std::to_string(sum);
  // The expected sum: (column sums of A) . (row sums of B).
  std::vector<std::int64_t> acol(un, 0), brow(un, 0);
  for (std::size_t i = 0; i < un; ++i) {
    for (std::size_t j = 0; j < un; ++j) {
      acol[j] += a[i * un + j];
      brow[i] += b[i * un + j];
    }
  }
  std::int64_t expected_sum = 0;
  for (std::size_t k = 0; k < un; ++k) expected_sum += acol[k] * brow[k];
  if (sum != expected_sum) {
    out.message =
        "sum of C is " + std::to_string(sum) + ", (1'A)(B1) = " + std::to_string(expected_sum);
    return out;
  }
  splitmix64 g(0x5eed0f00dull + static_cast<std::uint64_t>(n));
  std::vector<std::int64_t> x(un), bx(un), abx(un), cx(un);
  for (int round = 0; round < 2; ++round) {
    for (auto& v : x) v = static_cast<std::int64_t>(g.below((1u << 21) + 1)) - (1 << 20);
    for (std::size_t i = 0; i < un; ++i) {
      std::int64_t s1 = 0, s2 = 0;
      for (std::size_t j = 0; j < un; ++j) {
        s1 += b[i * un + j] * x[j];
        s2 += static_cast<std::int64_t>(ci[i * un + j]) * x[j];
      }
      bx[i] = s1;
      cx[i] = s2;
    }
    for (std::size_t i = 0; i < un; ++i) {
      std::int64_t s = 0;
      for (std::size_t j = 0; j < un; ++j) s += a[i * un + j] * bx[j];
      abx[i] = s;
    }
    for (std::size_t i = 0; i < un; ++i) {
      if (cx[i] != abx[i]) {
        out.message = "Freivalds' check fails in row " + std::to_string(i) +
                      ": (Cx)_i = " + std::to_string(cx[i]) +
                      ", (A(Bx))_i = " + std::to_string(abx[i]);
        return out;
      }
    }
  }
  const dim nb = n / leaf;
  for (dim bi = 0; bi < nb; ++bi) {
    for (dim bj = 0; bj < nb; ++bj) {
      const auto i =
          static_cast<std::size_t>(bi * leaf) + g.below(static_cast<std::uint64_t>(leaf));
      const auto j =
          static_cast<std::size_t>(bj * leaf) + g.below(static_cast<std::uint64_t>(leaf));
      std::int64_t dot = 0;
      for (std::size_t k = 0; k < un; ++k) dot += a[i * un + k] * b[k * un + j];
      if (dot != ci[i * un + j]) {
        out.message = "C(" + std::to_string(i) + "," + std::to_string(j) +
                      ") = " + std::to_string(ci[i * un + j]) + ", expected " + std::to_string(dot);
        return out;
      }
    }
  }
  out.ok = true;
  return out;
}

// The same check for C in blocked Z storage (read back through locus::from_z), sampling one
// entry per Z block.
inline check_result check_product(const std::vector<std::int8_t>& a,
                                  const std::vector<std::int8_t>& b, const locus::z_layout& layout,
                                  const float* c) {
  const auto n = static_cast<dim>(layout.order());
  aligned_buffer<float> staged(layout.size());
  locus::from_z(layout, c, staged.data(), layout.order());
  return check_product(a, b, n, staged.data(), n, static_cast<dim>(layout.block_order()));
}

}  // namespace locus_bench::dense
