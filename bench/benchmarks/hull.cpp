// hull: 2-D convex hull by quickhull, the PBBS `hull` (quickHullP) that NUMA-WS used (seed 001,
// Deters et al. IISWC 2018: "hull1", random points inside a sphere, and "hull2", points on a
// sphere, 1e8 points, base case 10k).
//
// The leftmost and rightmost points l and r (a parallel reduction) split the points into those
// strictly above l->r and those strictly below; both sides are searched in parallel. A search
// (a, b, S) takes the point p of S farthest from the line a->b (a parallel reduction; ties go to
// the point nearest a along a->b, which is a vertex), filters S into the points strictly left of
// a->p and strictly left of p->b (a parallel two-pass pack: per-block counts, prefix sums,
// scatter), recurses on both in parallel (work hints: the set sizes; size hint: the bytes of the
// points and indices the search touches) and concatenates the two chains around p. Sets of fewer
// than `cutoff` points are searched serially; larger ones are reduced and filtered in blocks of
// `cutoff` points. The serial elision is the same code without the spawns.
//
// Peers (par_policy.hpp): oneTBB forks the two searches with a tbb::task_group, finds the
// extremes and the farthest point with tbb::parallel_deterministic_reduce and packs with
// tbb::parallel_for (blocked_range, simple_partitioner); OpenMP forks with omp task + taskwait,
// reduces with omp tasks in the same halving tree and packs with an omp taskloop. Same cutoff
// and blocks; no place hints.
//
// Places (NUMA-WS ran hull with hints on the top-level calls): with several places the locus
// version's top-level reduction and pack cut the points by place (par_policy's *_by_place), and the
// upper and lower searches are hinted to the places of the halves of the index arrays that hold
// their points; the points and index arrays are bound to the same places.
//
// Points have integer coordinates of magnitude below 2^29, so every orientation test (a 64-bit
// cross product) is exact: the hull is the set of strictly convex vertices, with no rounding
// ambiguity. Inputs (splitmix64, par_policy.hpp, seeded with `seed`): `disk` uniform in the disk
// of radius 2^29 - 1 (rejection sampling; PBBS hull1 in 2-D), `square` uniform in the square,
// `circle` on that circle (angle uniform, coordinates rounded; PBBS hull2 in 2-D, most points near
// the hull, much more work). Verified against Andrew's monotone chain computed in prepare(): the
// same set of vertex coordinates.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/par_policy.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace {

struct point {
  std::int32_t x, y;
  bool operator==(const point&) const = default;
  auto operator<=>(const point&) const = default;
};

constexpr std::int64_t radius = (std::int64_t{1} << 29) - 1;

// (b - a) x (c - a): positive when c is strictly left of a->b. Exact: |coordinates| < 2^29.
std::int64_t cross(point a, point b, point c) {
  return (std::int64_t{b.x} - a.x) * (std::int64_t{c.y} - a.y) -
         (std::int64_t{b.y} - a.y) * (std::int64_t{c.x} - a.x);
}

// Candidate for the farthest point: larger cross first, then smaller projection onto a->b, then
// the smaller index (a total order, so every reduction tree picks the same point).
struct farthest {
  std::int64_t dist = -1;
  std::int64_t proj = 0;
  std::int32_t id = -1;
};

bool better(const farthest& u, const farthest& v) {
  if (u.dist != v.dist) return u.dist > v.dist;
  if (u.proj != v.proj) return u.proj < v.proj;
  return u.id < v.id;
}

farthest pick(const farthest& u, const farthest& v) {
  return better(v, u) ? v : u;
}

farthest candidate(point a, point b, const point* pts, std::int32_t id) {
  const point q = pts[id];
  const std::int64_t proj = (std::int64_t{q.x} - a.x) * (std::int64_t{b.x} - a.x) +
                            (std::int64_t{q.y} - a.y) * (std::int64_t{b.y} - a.y);
  return {cross(a, b, q), proj, id};
}

struct problem {
  const point* pts;
  std::int64_t cutoff;
  int places;  // of the top level's place hints; 1 below it
};

// Serial search of a small set: in[0, n) are the points strictly left of a->b; tmp has room for n.
// Returns m with the hull vertices strictly between a and b, in order, in in[0, m).
std::int64_t search_small(const problem& pr, point a, point b, std::int32_t* in, std::int32_t* tmp,
                          std::int64_t n) {
  if (n == 0) return 0;
  farthest best;
  for (std::int64_t i = 0; i < n; ++i) best = pick(best, candidate(a, b, pr.pts, in[i]));
  const point p = pr.pts[best.id];
  std::int64_t n1 = 0, back = n;
  for (std::int64_t i = 0; i < n; ++i) {
    const point q = pr.pts[in[i]];
    if (cross(a, p, q) > 0) {
      tmp[n1++] = in[i];
    } else if (cross(p, b, q) > 0) {
      tmp[--back] = in[i];
    }
  }
  const std::int64_t m1 = search_small(pr, a, p, tmp, in, n1);
  const std::int64_t m2 = search_small(pr, p, b, tmp + back, in + back, n - back);
  std::copy(tmp, tmp + m1, in);
  in[m1] = best.id;
  std::copy(tmp + back, tmp + back + m2, in + m1 + 1);
  return m1 + 1 + m2;
}

// Parallel two-pass pack of [0, n) into out: first the elements with side(i) == 1, then those with
// side(i) == 2, each in input order. Returns the two counts. Blocks of pr.cutoff elements, cut by
// place (par_policy's for_range_by_place) when pr.places > 1.
template <class P, class Side, class Value>
std::pair<std::int64_t, std::int64_t> pack2(const problem& pr, std::int64_t n, const Side& side,
                                            const Value& value, std::int32_t* out) {
  const std::int64_t g = pr.cutoff;
  const std::int64_t blocks = (n + g - 1) / g;
  std::vector<std::pair<std::int64_t, std::int64_t>> offs(static_cast<std::size_t>(blocks));
  P::for_range_by_place(pr.places, 0, blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    const Side side_of = side;  // a local copy: stores elsewhere cannot change what it reads
    for (std::int64_t blk = b0; blk < b1; ++blk) {
      std::int64_t c1 = 0, c2 = 0;
      for (std::int64_t i = blk * g, e = std::min(n, i + g); i < e; ++i) {
        const int s = side_of(i);
        c1 += s == 1;
        c2 += s == 2;
      }
      offs[static_cast<std::size_t>(blk)] = {c1, c2};
    }
  });
  std::int64_t n1 = 0, n2 = 0;
  for (auto& [c1, c2] : offs) {
    const std::int64_t o1 = n1, o2 = n2;
    n1 += c1;
    n2 += c2;
    c1 = o1;
    c2 = o2;
  }
  P::for_range_by_place(pr.places, 0, blocks, 1, [&](std::int64_t b0, std::int64_t b1) {
    const Side side_of = side;  // local copies: the stores to out cannot change what they read
    const Value value_of = value;
    for (std::int64_t blk = b0; blk < b1; ++blk) {
      auto [o1, o2] = offs[static_cast<std::size_t>(blk)];
      o2 += n1;
      for (std::int64_t i = blk * g, e = std::min(n, i + g); i < e; ++i) {
        const int s = side_of(i);
        if (s == 1) out[o1++] = value_of(i);
        if (s == 2) out[o2++] = value_of(i);
      }
    }
  });
  return {n1, n2};
}

template <class P>
std::int64_t search(const problem& pr, point a, point b, std::int32_t* in, std::int32_t* tmp,
                    std::int64_t n) {
  if (n < pr.cutoff) return search_small(pr, a, b, in, tmp, n);
  const farthest best = P::reduce(
      0, n, pr.cutoff, farthest{},
      [a, b, pts = pr.pts, in](std::int64_t lo, std::int64_t hi, const farthest& init) {
        farthest f = init;
        for (std::int64_t i = lo; i < hi; ++i) f = pick(f, candidate(a, b, pts, in[i]));
        return f;
      },
      pick);
  const point p = pr.pts[best.id];
  const auto [n1, n2] = pack2<P>(
      pr, n,
      [a, b, p, pts = pr.pts, in](std::int64_t i) {
        const point q = pts[in[i]];
        return cross(a, p, q) > 0 ? 1 : cross(p, b, q) > 0 ? 2 : 0;
      },
      [in](std::int64_t i) { return in[i]; }, tmp);
  std::int64_t m1 = 0, m2 = 0;
  const std::size_t bytes =
      static_cast<std::size_t>(n) * (2 * sizeof(std::int32_t) + sizeof(point));
  P::invoke(bytes,
            par::child(static_cast<double>(n1), [&] { m1 = search<P>(pr, a, p, tmp, in, n1); }),
            par::child(static_cast<double>(n2),
                       [&] { m2 = search<P>(pr, p, b, tmp + n1, in + n1, n2); }));
  std::copy(tmp, tmp + m1, in);
  in[m1] = best.id;
  std::copy(tmp + n1, tmp + n1 + m2, in + m1 + 1);
  return m1 + 1 + m2;
}

// The whole hull, clockwise from the leftmost point: indices into pts.
template <class P>
std::vector<std::int32_t> quickhull(const std::vector<point>& pts, std::int64_t cutoff, int places,
                                    std::vector<std::int32_t>& in, std::vector<std::int32_t>& tmp) {
  const problem top{pts.data(), cutoff, places};
  const problem pr{pts.data(), cutoff, 1};
  const auto n = static_cast<std::int64_t>(pts.size());
  using ends = std::pair<std::int32_t, std::int32_t>;  // leftmost, rightmost
  const auto extreme = [&](const ends& u, const ends& v) {
    return ends{pts[static_cast<std::size_t>(v.first)] < pts[static_cast<std::size_t>(u.first)]
                    ? v.first
                    : u.first,
                pts[static_cast<std::size_t>(u.second)] < pts[static_cast<std::size_t>(v.second)]
                    ? v.second
                    : u.second};
  };
  const ends lr = P::reduce_by_place(
      places, 0, n, cutoff, ends{0, 0},
      [&](std::int64_t lo, std::int64_t hi, const ends& init) {
        ends e = init;
        for (std::int64_t i = lo; i < hi; ++i) {
          const auto id = static_cast<std::int32_t>(i);
          e = extreme(e, {id, id});
        }
        return e;
      },
      extreme);
  const point l = pts[static_cast<std::size_t>(lr.first)];
  const point r = pts[static_cast<std::size_t>(lr.second)];
  if (l == r) return {lr.first};
  const auto [nu, nl] = pack2<P>(
      top, n,
      [l, r, pts = pr.pts](std::int64_t i) {
        const point q = pts[i];
        return cross(l, r, q) > 0 ? 1 : cross(r, l, q) > 0 ? 2 : 0;
      },
      [](std::int64_t i) { return static_cast<std::int32_t>(i); }, in.data());
  std::int64_t mu = 0, ml = 0;
  std::int32_t* const I = in.data();
  std::int32_t* const T = tmp.data();
  const std::size_t bytes = pts.size() * (2 * sizeof(std::int32_t) + sizeof(point));
  P::invoke_by_place(
      places, bytes,
      par::child(static_cast<double>(nu), [&] { mu = search<P>(pr, l, r, I, T, nu); }),
      par::child(static_cast<double>(nl), [&] { ml = search<P>(pr, r, l, I + nu, T + nu, nl); }));
  // The upper chain runs from l to r, the lower one from r to l: clockwise l, upper, r, lower.
  std::vector<std::int32_t> hull;
  hull.reserve(static_cast<std::size_t>(mu + ml + 2));
  hull.push_back(lr.first);
  hull.insert(hull.end(), I, I + mu);
  hull.push_back(lr.second);
  hull.insert(hull.end(), I + nu, I + nu + ml);
  return hull;
}

// Andrew's monotone chain: the strictly convex hull vertices, sorted by (x, y).
std::vector<point> monotone_chain(std::vector<point> p) {
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  if (p.size() < 3) return p;
  std::vector<point> h(2 * p.size());
  std::size_t k = 0;
  for (const point& q : p) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], q) <= 0) --k;
    h[k++] = q;
  }
  for (std::size_t i = p.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && cross(h[k - 2], h[k - 1], p[i]) <= 0) --k;
    h[k++] = p[i];
  }
  h.resize(k - 1);
  std::sort(h.begin(), h.end());
  return h;
}

std::vector<point> generate(std::int64_t n, const std::string& dist, std::uint64_t seed) {
  par::splitmix64 rng(seed);
  const auto coord = [&] {
    return static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(2 * radius + 1)) -
           radius;
  };
  std::vector<point> pts(static_cast<std::size_t>(n));
  for (point& p : pts) {
    std::int64_t x = 0, y = 0;
    if (dist == "circle") {
      const double t = 2 * std::numbers::pi * rng.uniform();
      x = std::llround(static_cast<double>(radius) * std::cos(t));
      y = std::llround(static_cast<double>(radius) * std::sin(t));
    } else {
      do {
        x = coord();
        y = coord();
      } while (dist == "disk" && x * x + y * y > radius * radius);
    }
    p = {static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)};
  }
  return pts;
}

class hull_instance final : public instance {
 public:
  hull_instance(std::vector<point> pts, std::int64_t cutoff)
      : pts_(std::move(pts)),
        cutoff_(cutoff),
        expected_(monotone_chain(pts_)),
        in_(pts_.size()),
        tmp_(pts_.size()) {}

  void reset() override { hull_.clear(); }

  // The points by the places of the top level's blocks; the packed index arrays in halves, the
  // upper side's search running on the first half's place and the lower side's on the second's.
  void place(data_placement& where) override {
    const int places = where.num_places();
    if (places < 2) return;
    const auto n = static_cast<std::int64_t>(pts_.size());
    std::vector<std::int64_t> bounds =
        placement::halving_parts(0, (n + cutoff_ - 1) / cutoff_, 1, places);
    for (std::int64_t& b : bounds) b = std::min(n, b * cutoff_);
    placement::bind_bounds(where, pts_.data(), bounds);
    placement::bind_parts(where, in_.data(), in_.size(), 2);
    placement::bind_parts(where, tmp_.data(), tmp_.size(), 2);
  }

  void run(const run_context& ctx) override {
    switch (ctx.which) {
      case impl::serial:
        hull_ = quickhull<par::serial>(pts_, cutoff_, 1, in_, tmp_);
        break;
      case impl::locus:
        hull_ = quickhull<par::locus_tasks>(pts_, cutoff_, ctx.places, in_, tmp_);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        hull_ = quickhull<par::tbb_tasks>(pts_, cutoff_, 1, in_, tmp_);
        break;
      case impl::omp:
        hull_ = quickhull<par::omp_tasks>(pts_, cutoff_, 1, in_, tmp_);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    std::vector<point> got;
    got.reserve(hull_.size());
    for (const std::int32_t id : hull_) got.push_back(pts_[static_cast<std::size_t>(id)]);
    std::sort(got.begin(), got.end());
    v.result = "vertices=" + std::to_string(got.size());
    v.ok = got == expected_;
    if (!v.ok) {
      v.message = "the monotone chain finds " + std::to_string(expected_.size()) +
                  " vertices; the vertex sets differ";
    }
    return v;
  }

 private:
  std::vector<point> pts_;
  std::int64_t cutoff_;
  std::vector<point> expected_;
  std::vector<std::int32_t> in_, tmp_;
  std::vector<std::int32_t> hull_;
};

}  // namespace

benchmark make_hull_benchmark() {
  benchmark b;
  b.name = "hull";
  b.description =
      "PBBS quickhull (NUMA-WS hull1/hull2) of random integer 2-D points: parallel recursion on "
      "both sides, parallel farthest-point reduction and pack. Verified against a serial "
      "monotone-chain hull (same vertex set).";
  b.params = {
      param_spec::integer("n", "points (NUMA-WS used 1e8)", {"200000", "10000000", "100000000"}, 1,
                          std::numeric_limits<std::int32_t>::max()),
      param_spec::choice("dist",
                         "disk: uniform in a disk (hull1); square: uniform in a square; circle: on "
                         "a circle, rounded to the integer grid (hull2)",
                         {"disk", "disk", "disk"}, {"disk", "square", "circle"}),
      param_spec::integer("cutoff",
                          "sets of fewer points are searched serially; larger sets are reduced "
                          "and packed in parallel in blocks of this many points (PBBS 10k)",
                          {"10000", "10000", "10000"}, 2, std::numeric_limits<std::int32_t>::max()),
      param_spec::integer("seed", "splitmix64 seed of the points", {"1", "1", "1"}, 0, 2147483647),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    return std::make_unique<hull_instance>(
        generate(p.integer("n"), p.text("dist"), static_cast<std::uint64_t>(p.integer("seed"))),
        p.integer("cutoff"));
  };
  return b;
}

}  // namespace locus_bench
