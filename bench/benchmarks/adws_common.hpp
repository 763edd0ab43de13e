// Shared pieces of the ADWS benchmarks (seed 000: rrm, quicksort, kdtree, dtree).
//
// Every benchmark is written once as a template over a fork-join policy, so that the serial
// elision, locus, oneTBB and OpenMP versions have exactly the same task structure (same cutoffs,
// same grain, same split points):
//
//   P::fork2(hint, left, right)  runs left() and right(), possibly in parallel, and joins.
//                                left is the spawned child, right runs inline.
//   pfor<P>(lo, hi, grain, bytes_per_index, body)        body(lo, hi) on ranges of <= grain
//   preduce<P>(lo, hi, grain, bytes_per_index, id, body, combine)
//   partition_copy<P>(src, dst, n, block, pred)          parallel double-buffered partition
//
// locus gets what ADWS asks of the programmer (seed 000, Fig. 2b): each spawned child a
// locus::work_hint proportional to its work, each task group the total work and a
// locus::size_hint with the bytes its children touch. The other policies ignore the hints.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <locus/hints.hpp>
#include <locus/locality.hpp>
#include <locus/task_group.hpp>

#include "harness/benchmark.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench::adws {

// Hints of one fork: the work of each child (any unit, only ratios matter), the working set of
// the pair in bytes, and whether work hints are given at all (rrm's hints=0 omits them).
struct fork_hint {
  double left = 1.0;
  double right = 1.0;
  std::size_t bytes = 0;
  bool work = true;
};

struct serial_policy {
  template <class L, class R>
  static void fork2(const fork_hint&, L&& left, R&& right) {
    left();
    right();
  }
};

struct locus_policy {
  template <class L, class R>
  static void fork2(const fork_hint& h, L&& left, R&& right) {
    if (h.work) {
      locus::task_group tg{locus::work_hint{h.left + h.right}, locus::size_hint{h.bytes}};
      tg.run([&left] { left(); }, locus::work_hint{h.left});
      right();
      tg.wait();
    } else {
      locus::task_group tg{locus::size_hint{h.bytes}};
      tg.run([&left] { left(); });
      right();
      tg.wait();
    }
  }
};

#if LOCUS_BENCH_PEERS

struct tbb_policy {
  template <class L, class R>
  static void fork2(const fork_hint&, L&& left, R&& right) {
    tbb::task_group tg;
    tg.run([&left] { left(); });
    right();
    tg.wait();
  }
};

struct omp_policy {
  template <class L, class R>
  static void fork2(const fork_hint&, L&& left, R&& right) {
    auto* lp = &left;
#pragma omp task default(none) firstprivate(lp)
    (*lp)();
    right();
#pragma omp taskwait
  }
};

#endif

// Calls f(policy{}) with the policy of `which`.
template <class F>
void dispatch(impl which, F&& f) {
  switch (which) {
    case impl::serial:
      f(serial_policy{});
      break;
    case impl::locus:
      f(locus_policy{});
      break;
#if LOCUS_BENCH_PEERS
    case impl::tbb:
      f(tbb_policy{});
      break;
    case impl::omp:
      f(omp_policy{});
      break;
#endif
    default:
      break;
  }
}

// body(lo, hi) over [lo, hi), halving ranges longer than grain; each half is hinted with its
// length, each group with the bytes of its range.
template <class P, class Body>
void pfor(std::size_t lo, std::size_t hi, std::size_t grain, std::size_t bytes_per_index,
          const Body& body) {
  if (hi - lo <= grain) {
    if (hi > lo) body(lo, hi);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  P::fork2(
      fork_hint{static_cast<double>(mid - lo), static_cast<double>(hi - mid),
                (hi - lo) * bytes_per_index},
      [&] { pfor<P>(lo, mid, grain, bytes_per_index, body); },
      [&] { pfor<P>(mid, hi, grain, bytes_per_index, body); });
}

// Folds [lo, hi): body(lo, hi, T& acc) adds a range of <= grain into acc, combine(T& into,
// const T& from) merges. Same splitting as pfor.
template <class P, class T, class Body, class Combine>
void preduce(std::size_t lo, std::size_t hi, std::size_t grain, std::size_t bytes_per_index, T& acc,
             const Body& body, const Combine& combine) {
  if (hi - lo <= grain) {
    if (hi > lo) body(lo, hi, acc);
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  T right{};
  P::fork2(
      fork_hint{static_cast<double>(mid - lo), static_cast<double>(hi - mid),
                (hi - lo) * bytes_per_index},
      [&] { preduce<P>(lo, mid, grain, bytes_per_index, acc, body, combine); },
      [&] { preduce<P>(mid, hi, grain, bytes_per_index, right, body, combine); });
  combine(acc, right);
}

// Double-buffered partition (seed 000, Quicksort): copies src[0, n) to dst[0, n) with the
// elements satisfying pred first, both sides in their original relative order, and returns
// how many satisfy pred. The input is cut into blocks of `block` elements; a parallel loop
// counts each block, a serial prefix sum gives each block its output offsets, and a second
// parallel loop scatters. One block (n <= block) is done serially without allocating.
//
// Locality model: each block declares its read for the count, and its read and its two output
// ranges for the scatter (the serial one-block case declares the same three ranges).
template <class P, class T, class Pred>
std::size_t partition_copy(const T* src, T* dst, std::size_t n, std::size_t block,
                           const Pred& pred) {
  namespace loc = locus::locality;
  if (n <= block) {
    loc::touch_read(src, n * sizeof(T));
    std::size_t left = 0;
    for (std::size_t i = 0; i < n; ++i) left += pred(src[i]) ? 1 : 0;
    loc::touch_read(src, n * sizeof(T));
    loc::touch_write(dst, left * sizeof(T));
    loc::touch_write(dst + left, (n - left) * sizeof(T));
    std::size_t l = 0, r = left;
    for (std::size_t i = 0; i < n; ++i) {
      if (pred(src[i])) {
        dst[l++] = src[i];
      } else {
        dst[r++] = src[i];
      }
    }
    return left;
  }
  const std::size_t blocks = (n + block - 1) / block;
  std::vector<std::size_t> offset(blocks + 1);
  pfor<P>(0, blocks, 1, block * sizeof(T), [&](std::size_t b0, std::size_t b1) {
    for (std::size_t b = b0; b < b1; ++b) {
      const std::size_t lo = b * block, hi = std::min(n, lo + block);
      loc::touch_read(src + lo, (hi - lo) * sizeof(T));
      std::size_t c = 0;
      for (std::size_t i = lo; i < hi; ++i) c += pred(src[i]) ? 1 : 0;
      offset[b + 1] = c;
    }
  });
  for (std::size_t b = 0; b < blocks; ++b) offset[b + 1] += offset[b];
  const std::size_t left = offset[blocks];
  pfor<P>(0, blocks, 1, 2 * block * sizeof(T), [&](std::size_t b0, std::size_t b1) {
    for (std::size_t b = b0; b < b1; ++b) {
      const std::size_t lo = b * block, hi = std::min(n, lo + block);
      std::size_t l = offset[b], r = left + (lo - offset[b]);
      const std::size_t nl = offset[b + 1] - offset[b];
      loc::touch_read(src + lo, (hi - lo) * sizeof(T));
      loc::touch_write(dst + l, nl * sizeof(T));
      loc::touch_write(dst + r, (hi - lo - nl) * sizeof(T));
      for (std::size_t i = lo; i < hi; ++i) {
        if (pred(src[i])) {
          dst[l++] = src[i];
        } else {
          dst[r++] = src[i];
        }
      }
    }
  });
  return left;
}

// Median of three values.
inline double median3(double a, double b, double c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

// An order-independent checksum of a multiset of doubles: the wrapping sum and the xor of their
// bit patterns.
struct bit_checksum {
  std::uint64_t sum = 0;
  std::uint64_t xr = 0;

  void add(double v) {
    const auto bits = std::bit_cast<std::uint64_t>(v);
    sum += bits;
    xr ^= bits;
  }
  bool operator==(const bit_checksum&) const = default;
};

// A uniform double in [0, 1) from the top 53 bits of a 64-bit draw.
inline double unit_double(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// The SplitMix64 finaliser (Steele, Lea, Flood 2014): a counter-based generator, so element i
// of an input can be regenerated on its own.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Combines v into the hash h (order-dependent).
inline std::uint64_t hash_combine(std::uint64_t h, std::uint64_t v) {
  return splitmix64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

}  // namespace locus_bench::adws
