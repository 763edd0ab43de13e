// fft: the discrete Fourier transform X_k = sum_j x_j e^(-2 pi i jk / n) of n = 2^log2n complex
// doubles by the recursive radix-2 decimation-in-time FFT. A transform of length m above the
// cutoff unshuffles its input (even-indexed elements to the first half of a scratch array, odd
// ones to the second: parallel ranges), transforms the two contiguous halves in parallel, and
// combines them with m/2 butterflies X_k, X_(k+m/2) = E_k +- w^k O_k (parallel ranges), ping-
// ponging between the two arrays. Transforms of length <= cutoff run serially (the plain strided
// recursion, on contiguous data of at most cutoff elements), and so do unshuffle and butterfly
// ranges of at most cutoff/2; the serial elision runs the same recursion and ranges in the same
// order. Twiddles w_m^j = e^(-2 pi i j / m), j < m/2, are tabulated for every length m when
// prepared (those of m < n copied from n's, so the results are those of a single table). The input
// is copied to the scratch array before each run (untimed).
//
// Seed 002 (CATS, Table 1: "FFT", a CPU-bound benchmark from the Cilk suite, whose fft.cilk is a
// recursive divide and conquer with parallel unshuffle and twiddle loops); here its radix-2 form.
// locus tasks carry work hints (m log2 m for a transform, the butterfly count for a range) and
// the groups a size hint (the transform's input and output, 2 m complex doubles).
//
// Peers: oneTBB forks the two half transforms with a tbb::task_group and runs unshuffle and
// butterflies as tbb::parallel_for over blocked_range(0, m/2, cutoff/2) with simple_partitioner
// (the same halving); OpenMP forks with omp task + taskwait and runs the ranges as an omp
// taskloop of cutoff/2-element blocks. Same cutoff, no hints.
//
// Parameters: log2n (small 16, medium 23, large 25), cutoff (length at or below which a transform
// is serial, 4096). Input: real and imaginary parts uniform in [-1, 1) (splitmix64, seed 7).
// Verified, with u = 2^-53 and a tolerance of tol = 8 log2(n) u ||x||_2 (the error of a radix-2
// FFT with accurate twiddles is O(log2(n) u) relative in the 2-norm):
//  - sampled bins (k = 0, 1, n/2, n-1 and random ones; 16 bins up to 2^18 points, 8 up to
//    2^22, 6 above) against the direct sum in long double: |X_k - direct| <= tol (the largest
//    error seen is below tol / 8);
//  - the inverse transform, conj(FFT(conj(X))) / n by the serial code, recovers the input:
//    ||x' - x||_2 <= tol.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <locus/task_group.hpp>

#include "benchmarks/dense_common.hpp"
#include "harness/benchmark.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench {

namespace {

using dense::dim;

struct cplx {
  double re, im;
};

inline cplx operator+(cplx a, cplx b) {
  return {a.re + b.re, a.im + b.im};
}
inline cplx operator-(cplx a, cplx b) {
  return {a.re - b.re, a.im - b.im};
}
inline cplx operator*(cplx a, cplx b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// The twiddles of every length m = 2, 4, ..., n, w_m^k for k < m/2, one table after another (that
// of length m at m/2 - 1, the full length's last), so that a transform reads its length's table
// contiguously. Read from the full length's table at stride n/m instead, a leaf transform below a
// large n touches a cache line and a page per twiddle.
struct plan {
  const cplx* tw;
  dim cutoff;
};

const cplx* twiddles(const cplx* tables, dim m) {
  return tables + (m / 2 - 1);
}

// Butterflies k in [lo, hi) of a length-2h transform whose halves are in src[0, h), src[h, 2h),
// into dst (dst may be src).
void butterflies(const cplx* src, cplx* dst, dim h, dim lo, dim hi, const cplx* tw) {
  for (dim k = lo; k < hi; ++k) {
    const cplx t = tw[k] * src[h + k];
    const cplx e = src[k];
    dst[k] = e + t;
    dst[h + k] = e - t;
  }
}

// Serial transform of length m from in[0], in[stride], ... into out[0, m).
void fft_serial(const cplx* in, dim stride, cplx* out, dim m, const cplx* tables) {
  if (m == 1) {
    out[0] = in[0];
    return;
  }
  if (m == 2) {
    out[0] = in[0] + in[stride];
    out[1] = in[0] - in[stride];
    return;
  }
  const dim h = m / 2;
  fft_serial(in, 2 * stride, out, h, tables);
  fft_serial(in + stride, 2 * stride, out + h, h, tables);
  butterflies(out, out, h, 0, h, twiddles(tables, m));
}

// body(lo, hi) on the halves of [lo, hi) down to ranges of at most `grain`: children of a
// locus::task_group (hinted with their item counts and bytes) or called in order (serial). The
// peers cut the ranges their own way: tbb::parallel_for over blocked_range(lo, hi, grain) with
// simple_partitioner halves them alike, and an omp taskloop runs a task per block of `grain`
// (the same leaves when grain is a power of two, as with the default cutoff: the lengths are).
template <impl I, class Body>
void for_ranges(dim lo, dim hi, dim grain, std::size_t item_bytes, const Body& body) {
  if constexpr (I == impl::serial || I == impl::locus) {
    if (hi - lo <= grain) {
      body(lo, hi);
      return;
    }
    const dim mid = lo + (hi - lo) / 2;
    if constexpr (I == impl::locus) {
      locus::task_group tg{locus::work_hint{static_cast<double>(hi - lo)},
                           locus::size_hint{static_cast<std::size_t>(hi - lo) * item_bytes}};
      tg.run([&] { for_ranges<I>(lo, mid, grain, item_bytes, body); },
             locus::work_hint{static_cast<double>(mid - lo)});
      for_ranges<I>(mid, hi, grain, item_bytes, body);
      tg.wait();
    } else {
      for_ranges<I>(lo, mid, grain, item_bytes, body);
      for_ranges<I>(mid, hi, grain, item_bytes, body);
    }
#if LOCUS_BENCH_PEERS
  } else if constexpr (I == impl::tbb) {
    tbb::parallel_for(
        tbb::blocked_range<dim>(lo, hi, static_cast<std::size_t>(grain)),
        [&body](const tbb::blocked_range<dim>& r) { body(r.begin(), r.end()); },
        tbb::simple_partitioner{});
  } else {
    static_assert(I == impl::omp);
    const dim blocks = (hi - lo + grain - 1) / grain;
    const Body* bp = &body;
#pragma omp taskloop grainsize(1) default(none) firstprivate(bp, lo, hi, grain, blocks)
    for (dim b = 0; b < blocks; ++b) (*bp)(lo + b * grain, std::min(hi, lo + (b + 1) * grain));
#endif
  }
}

// A number for messages: 3 significant digits.
std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

double work_of(dim m) {
  return static_cast<double>(m) * std::log2(static_cast<double>(m));
}

// Transform of length m of src[0, m) into dst[0, m); src is used as scratch. Above the cutoff:
// unshuffle src into dst (even-indexed elements to the first half, odd ones to the second), the
// two half-length transforms from dst back into src, and the butterflies from src into dst.
template <impl I>
void fft_par(cplx* src, cplx* dst, dim m, const plan& p) {
  if (m <= p.cutoff) {
    fft_serial(src, 1, dst, m, p.tw);
    return;
  }
  const dim h = m / 2, grain = std::max<dim>(1, p.cutoff / 2);
  for_ranges<I>(0, h, grain, 4 * sizeof(cplx), [src, dst, h](dim lo, dim hi) {
    for (dim k = lo; k < hi; ++k) {
      dst[k] = src[2 * k];
      dst[h + k] = src[2 * k + 1];
    }
  });
  if constexpr (I == impl::locus) {
    locus::task_group tg{locus::work_hint{work_of(m)},
                         locus::size_hint{static_cast<std::size_t>(2 * m) * sizeof(cplx)}};
    tg.run([=, &p] { fft_par<I>(dst, src, h, p); }, locus::work_hint{work_of(h)});
    fft_par<I>(dst + h, src + h, h, p);
    tg.wait();
#if LOCUS_BENCH_PEERS
  } else if constexpr (I == impl::tbb) {
    tbb::task_group tg;
    tg.run([=, &p] { fft_par<I>(dst, src, h, p); });
    fft_par<I>(dst + h, src + h, h, p);
    tg.wait();
  } else if constexpr (I == impl::omp) {
    const plan* pp = &p;
#pragma omp task default(none) firstprivate(dst, src, h, pp)
    fft_par<I>(dst, src, h, *pp);
    fft_par<I>(dst + h, src + h, h, p);
#pragma omp taskwait
#endif
  } else {
    fft_par<I>(dst, src, h, p);
    fft_par<I>(dst + h, src + h, h, p);
  }
  const cplx* tw = twiddles(p.tw, m);
  for_ranges<I>(0, h, grain, 5 * sizeof(cplx),
                [src, dst, h, tw](dim lo, dim hi) { butterflies(src, dst, h, lo, hi, tw); });
}

class fft_instance final : public instance {
 public:
  fft_instance(int log2n, dim cutoff)
      : log2n_(log2n),
        n_(dim{1} << log2n),
        cutoff_(cutoff),
        in_(static_cast<std::size_t>(n_)),
        work_(static_cast<std::size_t>(n_)),
        out_(static_cast<std::size_t>(n_)),
        tw_(static_cast<std::size_t>(std::max<dim>(1, n_ - 1))),
        scratch_{std::vector<cplx>(static_cast<std::size_t>(n_)),
                 std::vector<cplx>(static_cast<std::size_t>(n_))} {
    dense::splitmix64 g(7);
    const double scale = std::ldexp(1.0, -52);  // 53 random bits -> [0, 2)
    for (auto& x : in_) {
      x.re = static_cast<double>(g.next() >> 11) * scale - 1.0;
      x.im = static_cast<double>(g.next() >> 11) * scale - 1.0;
    }
    const double pi = std::acos(-1.0);
    cplx* full = tw_.data() + (n_ / 2 - 1);
    for (dim j = 0; j < n_ / 2; ++j) {
      const double angle = -2.0 * pi * static_cast<double>(j) / static_cast<double>(n_);
      full[j] = {std::cos(angle), std::sin(angle)};
    }
    for (dim m = 2; m < n_; m *= 2) {
      cplx* t = tw_.data() + (m / 2 - 1);
      for (dim k = 0; k < m / 2; ++k) t[k] = full[k * (n_ / m)];
    }
    double norm2 = 0;
    for (const auto& x : in_) norm2 += x.re * x.re + x.im * x.im;
    tol_ = 8.0 * std::max(1, log2n_) * std::ldexp(1.0, -53) * std::sqrt(norm2);
  }

  // A run consumes its copy of the input and overwrites the output; NaN makes a run that writes
  // nothing fail.
  void reset() override {
    std::copy(in_.begin(), in_.end(), work_.begin());
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::fill(out_.begin(), out_.end(), cplx{nan, nan});
  }

  void run(const run_context& ctx) override {
    const plan p{tw_.data(), cutoff_};
    switch (ctx.which) {
      case impl::serial:
        fft_par<impl::serial>(work_.data(), out_.data(), n_, p);
        break;
      case impl::locus:
        fft_par<impl::locus>(work_.data(), out_.data(), n_, p);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        fft_par<impl::tbb>(work_.data(), out_.data(), n_, p);
        break;
      case impl::omp:
        fft_par<impl::omp>(work_.data(), out_.data(), n_, p);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    double sum_re = 0, sum_im = 0;
    for (const auto& x : out_) {
      sum_re += x.re;
      sum_im += x.im;
    }
    v.result = "X0=" + std::to_string(out_[0].re) + "," + std::to_string(out_[0].im) +
               " sum=" + std::to_string(sum_re) + "," + std::to_string(sum_im);
    if (!check_bins(v.message) || !check_inverse(v.message)) return v;
    v.ok = true;
    return v;
  }

 private:
  // w^e for any e (n >= 2), from the full length's table: w^(e + n/2) = -w^e.
  cplx power(std::uint64_t e) const {
    const cplx* full = twiddles(tw_.data(), n_);
    const auto half = static_cast<std::uint64_t>(n_ / 2);
    e %= static_cast<std::uint64_t>(n_);
    if (e < half) return full[e];
    const cplx w = full[e - half];
    return {-w.re, -w.im};
  }

  bool check_bins(std::string& message) const {
    if (n_ == 1) {
      const bool ok = out_[0].re == in_[0].re && out_[0].im == in_[0].im;
      if (!ok) message = "a transform of length 1 is the identity";
      return ok;
    }
    std::vector<std::uint64_t> bins{0, 1, static_cast<std::uint64_t>(n_ / 2),
                                    static_cast<std::uint64_t>(n_ - 1)};
    dense::splitmix64 g(11);
    const std::size_t count = log2n_ > 22 ? 6 : log2n_ > 18 ? 8 : 16;
    while (bins.size() < count) bins.push_back(g.below(static_cast<std::uint64_t>(n_)));
    for (const auto k : bins) {
      long double re = 0, im = 0;
      for (dim j = 0; j < n_; ++j) {
        const cplx w = power(static_cast<std::uint64_t>(j) * k);
        const cplx x = in_[static_cast<std::size_t>(j)];
        re += static_cast<long double>(x.re) * w.re - static_cast<long double>(x.im) * w.im;
        im += static_cast<long double>(x.re) * w.im + static_cast<long double>(x.im) * w.re;
      }
      const cplx got = out_[k];
      const double err =
          std::hypot(got.re - static_cast<double>(re), got.im - static_cast<double>(im));
      if (!(err <= tol_)) {
        message = "bin " + std::to_string(k) + " = (" + std::to_string(got.re) + ", " +
                  std::to_string(got.im) + "), the direct sum is (" +
                  std::to_string(static_cast<double>(re)) + ", " +
                  std::to_string(static_cast<double>(im)) + "): error " + sci(err) + " > " +
                  sci(tol_);
        return false;
      }
    }
    return true;
  }

  bool check_inverse(std::string& message) const {
    std::vector<cplx>& conj_out = scratch_[0];
    std::vector<cplx>& back = scratch_[1];
    for (std::size_t i = 0; i < out_.size(); ++i) conj_out[i] = {out_[i].re, -out_[i].im};
    fft_par<impl::serial>(conj_out.data(), back.data(), n_, plan{tw_.data(), cutoff_});
    const double inv_n = 1.0 / static_cast<double>(n_);
    double err2 = 0;
    for (std::size_t i = 0; i < back.size(); ++i) {
      const double dre = back[i].re * inv_n - in_[i].re;
      const double dimag = -back[i].im * inv_n - in_[i].im;
      err2 += dre * dre + dimag * dimag;
    }
    const double err = std::sqrt(err2);
    if (!(err <= tol_)) {
      message =
          "the inverse transform misses the input by " + sci(err) + " (2-norm) > " + sci(tol_);
      return false;
    }
    return true;
  }

  int log2n_;
  dim n_, cutoff_;
  std::vector<cplx> in_, work_, out_, tw_;
  mutable std::vector<cplx> scratch_[2];  // the inverse transform's input and output
  double tol_ = 0;
};

}  // namespace

benchmark make_fft_benchmark() {
  benchmark b;
  b.name = "fft";
  b.description =
      "recursive radix-2 complex FFT of 2^log2n doubles: even and odd halves in parallel, "
      "butterflies in parallel ranges, serial below the cutoff. Verified against direct sums on "
      "sampled bins and by the inverse transform.";
  b.params = {
      param_spec::integer("log2n", "transform length 2^log2n", {"16", "23", "25"}, 0, 27),
      param_spec::integer("cutoff",
                          "length at or below which a transform runs serially; butterfly ranges "
                          "of at most cutoff/2 run serially",
                          {"4096", "4096", "4096"}, 2, 1 << 27),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    return std::make_unique<fft_instance>(static_cast<int>(p.integer("log2n")),
                                          p.integer("cutoff"));
  };
  return b;
}

}  // namespace locus_bench
