// cg: the NAS Parallel Benchmarks CG kernel (NPB 3.x, cg.c), which NUMA-WS ran as `cg` (seed 001,
// Deters et al. IISWC 2018, "75k x 75": class B). It estimates the smallest eigenvalue of a sparse
// symmetric positive definite matrix by inverse power iteration: `niter` outer iterations, each
// solving A z = x by 25 unpreconditioned conjugate-gradient steps, then zeta = shift + 1 / (x . z)
// and x = z / ||z||.
//
// The matrix is NAS's own: makea / sprnvc / vecset / sparse ported line by line (0-based), with
// NAS's generator randlc (x <- 5^13 x mod 2^46, seed 314159265, one draw before makea), outer
// products of `nonzer`-element random sparse vectors, geometric scaling to condition number 1/rcond
// (rcond = 0.1) and -shift on the diagonal. Class S: na 1400, nonzer 7, niter 15, shift 10; W:
// 7000, 8, 15, 12; A: 14000, 11, 15, 20; B: 75000, 13, 75, 60; C: 150000, 15, 75, 110. Verified as
// NAS verifies: |zeta - zeta_ref| / zeta_ref <= 1e-10 with NAS's reference values
// (S 8.5971775078648, W 10.362595087124, A 17.130235054029, B 22.712745482631, C 28.973605592845).
//
// Parallelism: every vector loop is a parallel_for and every dot product a parallel_reduce over
// rows in ranges of `grain` rows (q = A p is fused with p . q, the z/r update with r . r, as in
// NPB's OpenMP version). The serial elision folds the same ranges in the same reduction tree, so
// all implementations compute bit-identical results. Timed: the `niter` iterations (NAS's timed
// part).
//
// Peers (par_policy.hpp): oneTBB runs the loops as tbb::parallel_for over blocked_range(0, na,
// grain) with simple_partitioner and the reductions as tbb::parallel_deterministic_reduce, whose
// tree is the same halving tree; OpenMP runs the loops as an omp taskloop of `grain`-row blocks
// and the reductions as omp tasks in the halving tree. Both are bit-identical to serial.
//
// Places (NUMA-WS ran cg with hints): with several places every loop and reduction hints the top
// of its halving tree by place (par_policy.hpp's for_range_by_place, reduce_by_place: the same
// tree, so the results stay bit-identical), and the vectors and the matrix rows are bound to the
// places of their rows (placement::halving_parts).
//
// Locality model (locus-bench --locality): every leaf declares the vector rows it reads and
// writes and, in the products with A, the matrix rows (rowstr, colidx, a); the gathered reads of
// p or z at the columns of a row are not declared (one declaration per nonzero would cost more
// than the product, and NAS's random columns send them to every place under any schedule). The
// leaves of q = A p carry their first row as identity; every CG step is an iteration.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <locus/locality.hpp>
#include <locus/runtime.hpp>

#include "benchmarks/par_policy.hpp"
#include "benchmarks/placement.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace {

struct nas_class {
  const char* name;
  int na, nonzer, niter;
  double shift, zeta;
};

constexpr nas_class classes[] = {
    {"S", 1400, 7, 15, 10.0, 8.5971775078648},     {"W", 7000, 8, 15, 12.0, 10.362595087124},
    {"A", 14000, 11, 15, 20.0, 17.130235054029},   {"B", 75000, 13, 75, 60.0, 22.712745482631},
    {"C", 150000, 15, 75, 110.0, 28.973605592845},
};

constexpr double rcond = 0.1;

// NAS randlc: x <- a x mod 2^46, returns x / 2^46. The product is exact modulo 2^64, and 2^46
// divides 2^64, so the low 46 bits of the wrapped product are the NAS state.
class randlc {
 public:
  double next() {
    x_ = (x_ * a_) & ((std::uint64_t{1} << 46) - 1);
    return static_cast<double>(x_) * 0x1p-46;
  }

 private:
  std::uint64_t x_ = 314159265;
  std::uint64_t a_ = 1220703125;
};

// Compressed sparse rows.
struct csr {
  std::vector<int> rowstr, colidx;
  std::vector<double> a;
};

// sprnvc: nz distinct random positions in [1, n] with random values.
void sprnvc(int n, int nz, int nn1, std::vector<double>& v, std::vector<int>& iv, randlc& rng) {
  int nzv = 0;
  while (nzv < nz) {
    const double vecelt = rng.next();
    const double vecloc = rng.next();
    const int i = static_cast<int>(nn1 * vecloc) + 1;  // icnvrt
    if (i > n) continue;
    bool was_gen = false;
    for (int ii = 0; ii < nzv; ++ii) {
      if (iv[static_cast<std::size_t>(ii)] == i) {
        was_gen = true;
        break;
      }
    }
    if (was_gen) continue;
    v[static_cast<std::size_t>(nzv)] = vecelt;
    iv[static_cast<std::size_t>(nzv)] = i;
    ++nzv;
  }
}

// vecset: sets position i to val, appending it if absent.
void vecset(std::vector<double>& v, std::vector<int>& iv, int& nzv, int i, double val) {
  bool set = false;
  for (int k = 0; k < nzv; ++k) {
    if (iv[static_cast<std::size_t>(k)] == i) {
      v[static_cast<std::size_t>(k)] = val;
      set = true;
    }
  }
  if (!set) {
    v[static_cast<std::size_t>(nzv)] = val;
    iv[static_cast<std::size_t>(nzv)] = i;
    ++nzv;
  }
}

// makea + sparse, as in NPB 3.x cg.c with firstrow = firstcol = 0 and lastrow = lastcol = n - 1.
csr makea(int n, int nonzer, double shift) {
  randlc rng;
  rng.next();  // cg.c: zeta = randlc(&tran, amult) before makea
  const int w = nonzer + 1;
  const auto at = [w](int i, int k) { return static_cast<std::size_t>(i) * w + k; };
  int nn1 = 1;
  do nn1 *= 2;
  while (nn1 < n);

  std::vector<int> arow(static_cast<std::size_t>(n));
  std::vector<int> acol(static_cast<std::size_t>(n) * w);
  std::vector<double> aelt(static_cast<std::size_t>(n) * w);
  std::vector<double> vc(static_cast<std::size_t>(w));
  std::vector<int> ivc(static_cast<std::size_t>(w));
  for (int iouter = 0; iouter < n; ++iouter) {
    int nzv = nonzer;
    sprnvc(n, nzv, nn1, vc, ivc, rng);
    vecset(vc, ivc, nzv, iouter + 1, 0.5);
    arow[static_cast<std::size_t>(iouter)] = nzv;
    for (int ivelt = 0; ivelt < nzv; ++ivelt) {
      acol[at(iouter, ivelt)] = ivc[static_cast<std::size_t>(ivelt)] - 1;
      aelt[at(iouter, ivelt)] = vc[static_cast<std::size_t>(ivelt)];
    }
  }

  // sparse(): count the entries of every row (with duplicates), then sum duplicates.
  const auto u = [](int i) { return static_cast<std::size_t>(i); };
  const int nrows = n;
  csr m;
  std::vector<int>& rowstr = m.rowstr;
  rowstr.assign(u(nrows + 1), 0);
  for (int i = 0; i < n; ++i) {
    for (int nza = 0; nza < arow[u(i)]; ++nza) rowstr[u(acol[at(i, nza)] + 1)] += arow[u(i)];
  }
  for (int j = 1; j < nrows + 1; ++j) rowstr[u(j)] += rowstr[u(j - 1)];
  const std::size_t nz = u(rowstr[u(nrows)]);
  std::vector<double>& a = m.a;
  std::vector<int>& colidx = m.colidx;
  a.assign(nz, 0.0);
  colidx.assign(nz, -1);
  std::vector<int> nzloc(u(nrows), 0);

  double size = 1.0;
  const double ratio = std::pow(rcond, 1.0 / static_cast<double>(n));
  for (int i = 0; i < n; ++i) {
    for (int nza = 0; nza < arow[u(i)]; ++nza) {
      const int j = acol[at(i, nza)];
      const double scale = size * aelt[at(i, nza)];
      for (int nzrow = 0; nzrow < arow[u(i)]; ++nzrow) {
        const int jcol = acol[at(i, nzrow)];
        double va = aelt[at(i, nzrow)] * scale;
        // The identity times rcond bounds the smallest eigenvalue from below by rcond.
        if (jcol == j && j == i) va = va + rcond - shift;
        bool found = false;
        int k = rowstr[u(j)];
        for (; k < rowstr[u(j + 1)]; ++k) {
          if (colidx[u(k)] > jcol) {
            // Insert jcol here, keeping the row sorted.
            for (int kk = rowstr[u(j + 1)] - 2; kk >= k; --kk) {
              if (colidx[u(kk)] > -1) {
                a[u(kk + 1)] = a[u(kk)];
                colidx[u(kk + 1)] = colidx[u(kk)];
              }
            }
            colidx[u(k)] = jcol;
            a[u(k)] = 0.0;
            found = true;
            break;
          } else if (colidx[u(k)] == -1) {
            colidx[u(k)] = jcol;
            found = true;
            break;
          } else if (colidx[u(k)] == jcol) {
            ++nzloc[u(j)];  // a duplicate
            found = true;
            break;
          }
        }
        if (!found) throw std::logic_error("cg: internal error in sparse");
        a[u(k)] += va;
      }
    }
    size *= ratio;
  }

  // Remove the room left by duplicates.
  for (int j = 1; j < nrows; ++j) nzloc[u(j)] += nzloc[u(j - 1)];
  for (int j = 0; j < nrows; ++j) {
    const int j1 = j > 0 ? rowstr[u(j)] - nzloc[u(j - 1)] : 0;
    const int j2 = rowstr[u(j + 1)] - nzloc[u(j)];
    int nza = rowstr[u(j)];
    for (int k = j1; k < j2; ++k) {
      a[u(k)] = a[u(nza)];
      colidx[u(k)] = colidx[u(nza)];
      ++nza;
    }
  }
  for (int j = 1; j < nrows + 1; ++j) rowstr[u(j)] -= nzloc[u(j - 1)];
  a.resize(u(rowstr[u(nrows)]));
  colidx.resize(u(rowstr[u(nrows)]));
  return m;
}

struct cg_vectors {
  std::vector<double> x, z, p, q, r;
  explicit cg_vectors(std::size_t n) : x(n, 1.0), z(n), p(n), q(n), r(n) {}
};

using pair_sum = std::pair<double, double>;

template <class P>
class solver {
 public:
  solver(const csr& m, cg_vectors& v, std::int64_t grain, int places)
      : places_(places),
        rowstr_(m.rowstr.data()),
        colidx_(m.colidx.data()),
        a_(m.a.data()),
        n_(static_cast<std::int64_t>(v.x.size())),
        g_(grain),
        x_(v.x.data()),
        z_(v.z.data()),
        p_(v.p.data()),
        q_(v.q.data()),
        r_(v.r.data()) {}

  // The timed part of cg.c: niter inverse power iterations; returns zeta.
  double iterate(int niter, double shift) {
    double zeta = 0;
    for (int it = 1; it <= niter; ++it) {
      rnorm_ = conj_grad();
      const pair_sum t = sum(
          pair_sum{0, 0},
          [this](std::int64_t lo, std::int64_t hi) {
            reads(lo, hi, {x_, z_});
          },
          [this](std::int64_t j, pair_sum s) {
            return pair_sum{s.first + x_[j] * z_[j], s.second + z_[j] * z_[j]};
          });
      const double norm = 1.0 / std::sqrt(t.second);
      zeta = shift + 1.0 / t.first;
      P::for_range_by_place(places_, 0, n_, g_, [this, norm](std::int64_t lo, std::int64_t hi) {
        reads(lo, hi, {z_});
        writes(lo, hi, {x_});
        for (std::int64_t j = lo; j < hi; ++j) x_[j] = norm * z_[j];
      });
    }
    return zeta;
  }

  double rnorm() const { return rnorm_; }

 private:
  // Folds f(j, acc) over all rows with the policy's reduction (same tree for every policy);
  // declare(lo, hi) tells the locality model what a leaf touches.
  template <class T, class D, class F>
  T sum(T identity, const D& declare, const F& f) const {
    return P::reduce_by_place(
        places_, 0, n_, g_, identity,
        [&declare, &f](std::int64_t lo, std::int64_t hi, const T& init) {
          declare(lo, hi);
          T acc = init;
          for (std::int64_t j = lo; j < hi; ++j) acc = f(j, acc);
          return acc;
        },
        [](T u, T v) { return add(u, v); });
  }
  static double add(double u, double v) { return u + v; }
  static pair_sum add(pair_sum u, pair_sum v) { return {u.first + v.first, u.second + v.second}; }

  double row_times(std::int64_t j, const double* v) const {
    double s = 0.0;
    for (int k = rowstr_[j]; k < rowstr_[j + 1]; ++k) s += a_[k] * v[colidx_[k]];
    return s;
  }

  // Locality declarations: rows [lo, hi) of vectors, and of the matrix.
  static void reads(std::int64_t lo, std::int64_t hi, std::initializer_list<const double*> vs) {
    for (const double* v : vs) {
      locus::locality::touch_read(v + lo, static_cast<std::size_t>(hi - lo) * sizeof(double));
    }
  }
  static void writes(std::int64_t lo, std::int64_t hi, std::initializer_list<double*> vs) {
    for (double* v : vs) {
      locus::locality::touch_write(v + lo, static_cast<std::size_t>(hi - lo) * sizeof(double));
    }
  }
  void matrix_rows(std::int64_t lo, std::int64_t hi) const {
    namespace loc = locus::locality;
    const auto nz = static_cast<std::size_t>(rowstr_[hi] - rowstr_[lo]);
    loc::touch_read(rowstr_ + lo, static_cast<std::size_t>(hi - lo + 1) * sizeof(int));
    loc::touch_read(colidx_ + rowstr_[lo], nz * sizeof(int));
    loc::touch_read(a_ + rowstr_[lo], nz * sizeof(double));
  }

  double conj_grad() {
    double rho = sum(
        0.0,
        [this](std::int64_t lo, std::int64_t hi) {
          reads(lo, hi, {x_});
          writes(lo, hi, {q_, z_, r_, p_});
        },
        [this](std::int64_t j, double s) {
          q_[j] = 0.0;
          z_[j] = 0.0;
          r_[j] = x_[j];
          p_[j] = r_[j];
          return s + r_[j] * r_[j];
        });
    for (int cgit = 1; cgit <= 25; ++cgit) {
      const double d = sum(
          0.0,
          [this](std::int64_t lo, std::int64_t hi) {
            locus::locality::leaf(static_cast<std::uint64_t>(lo));
            matrix_rows(lo, hi);
            reads(lo, hi, {p_});
            writes(lo, hi, {q_});
          },
          [this](std::int64_t j, double s) {
            q_[j] = row_times(j, p_);
            return s + p_[j] * q_[j];
          });
      const double alpha = rho / d;
      const double rho0 = rho;
      rho = sum(
          0.0,
          [this](std::int64_t lo, std::int64_t hi) {
            reads(lo, hi, {z_, p_, r_, q_});
            writes(lo, hi, {z_, r_});
          },
          [this, alpha](std::int64_t j, double s) {
            z_[j] = z_[j] + alpha * p_[j];
            r_[j] = r_[j] - alpha * q_[j];
            return s + r_[j] * r_[j];
          });
      const double beta = rho / rho0;
      P::for_range_by_place(places_, 0, n_, g_, [this, beta](std::int64_t lo, std::int64_t hi) {
        reads(lo, hi, {r_, p_});
        writes(lo, hi, {p_});
        for (std::int64_t j = lo; j < hi; ++j) p_[j] = r_[j] + beta * p_[j];
      });
      locus::next_iteration();
    }
    // ||x - A z||
    const double s = sum(
        0.0,
        [this](std::int64_t lo, std::int64_t hi) {
          matrix_rows(lo, hi);
          reads(lo, hi, {x_});
          writes(lo, hi, {r_});
        },
        [this](std::int64_t j, double acc) {
          r_[j] = row_times(j, z_);
          const double d = x_[j] - r_[j];
          return acc + d * d;
        });
    return std::sqrt(s);
  }

  int places_;
  const int* rowstr_;
  const int* colidx_;
  const double* a_;
  std::int64_t n_, g_;
  double *x_, *z_, *p_, *q_, *r_;
  double rnorm_ = 0;
};

class cg_instance final : public instance {
 public:
  cg_instance(const nas_class& c, std::int64_t grain)
      : c_(c),
        grain_(grain),
        m_(makea(c.na, c.nonzer, c.shift)),
        v_(static_cast<std::size_t>(c.na)) {}

  void reset() override {
    v_ = cg_vectors(static_cast<std::size_t>(c_.na));
    zeta_ = 0;
  }

  void place(data_placement& where) override {
    if (where.num_places() < 2) return;
    const auto bounds = placement::halving_parts(0, c_.na, grain_, where.num_places());
    for (std::vector<double>* v : {&v_.x, &v_.z, &v_.p, &v_.q, &v_.r}) {
      placement::bind_bounds(where, v->data(), bounds);
    }
    std::vector<std::int64_t> nonzeros(bounds.size());
    for (std::size_t k = 0; k < bounds.size(); ++k) {
      nonzeros[k] = m_.rowstr[static_cast<std::size_t>(bounds[k])];
    }
    placement::bind_bounds(where, m_.rowstr.data(), bounds);
    placement::bind_bounds(where, m_.colidx.data(), nonzeros);
    placement::bind_bounds(where, m_.a.data(), nonzeros);
  }

  void run(const run_context& ctx) override {
    switch (ctx.which) {
      case impl::serial:
        solve<par::serial>(1);
        break;
      case impl::locus:
        solve<par::locus_tasks>(ctx.places);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        solve<par::tbb_tasks>(1);
        break;
      case impl::omp:
        solve<par::omp_tasks>(1);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    char buf[96];
    std::snprintf(buf, sizeof buf, "zeta=%.13e rnorm=%.6e", zeta_, rnorm_);
    v.result = buf;
    const double err = std::fabs(zeta_ - c_.zeta) / c_.zeta;
    v.ok = err <= 1e-10;
    if (!v.ok) {
      std::snprintf(buf, sizeof buf, "NAS class %s: zeta %.13e, relative error %.3e > 1e-10",
                    c_.name, c_.zeta, err);
      v.message = buf;
    }
    return v;
  }

 private:
  template <class P>
  void solve(int places) {
    solver<P> s(m_, v_, grain_, places);
    zeta_ = s.iterate(c_.niter, c_.shift);
    rnorm_ = s.rnorm();
  }

  nas_class c_;
  std::int64_t grain_;
  csr m_;
  cg_vectors v_;
  double zeta_ = 0, rnorm_ = 0;
};

}  // namespace

benchmark make_cg_benchmark() {
  std::vector<std::string> names;
  for (const nas_class& c : classes) names.emplace_back(c.name);
  benchmark b;
  b.name = "cg";
  b.description =
      "NAS CG (NPB 3.x; NUMA-WS cg): inverse power iteration with 25 conjugate-gradient steps per "
      "iteration on NAS's makea matrix; parallel_for / parallel_reduce over rows. Verified "
      "against NAS's zeta (relative error <= 1e-10).";
  b.params = {
      param_spec::choice("class",
                         "NAS class: S (na 1400), W (7000), A (14000), B (75000, niter 75; "
                         "NUMA-WS), C (150000, niter 75)",
                         {"S", "W", "A"}, names),
      param_spec::integer("grain", "rows per leaf of every parallel loop and reduction",
                          {"256", "256", "256"}, 1, std::numeric_limits<std::int32_t>::max()),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    const std::string name = p.text("class");
    for (const nas_class& c : classes) {
      if (name == c.name) return std::make_unique<cg_instance>(c, p.integer("grain"));
    }
    throw usage_error("--set cg.class: unknown class '" + name + "'");
  };
  return b;
}

}  // namespace locus_bench
