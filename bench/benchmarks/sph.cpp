// sph: a simplified 3-D dam break by weakly compressible smoothed particle hydrodynamics, the SPH
// benchmark of ADWS (seed 000, Shiina & Taura TPDS 2022, Sec. 6: Becker & Teschner's WCSPH kernel,
// neighbours found through an octree with at most 32 particles per leaf, the force calculation
// parallelised by traversing the octree, each node's particle count as its work hint and a working
// set size hint computed from the particle count, five iterations).
//
// Every step (all timed; ADWS timed only the force calculation, here tree building is parallel
// too): (1) build an octree over the unit cube by recursive stable partition of a particle index
// array into octants (a task per non-empty child), down to `leaf` particles per leaf; (2) reorder
// the particle arrays into tree order; (3) density pass: a parallel traversal of the octree (a task
// per non-empty child, work hint = its particle count, size hint = particles x bytes per particle)
// whose leaves gather the leaves whose cells touch the leaf's bounding box grown by h and sum
// rho_i = sum_j m W(|x_ij|, h) over neighbours within h, then the Tait pressure
// p_i = B ((rho_i / rho0)^7 - 1), negative values clamped to 0; (4) force pass, the same traversal:
// a_i = g - sum_j m (p_i / rho_i^2 + p_j / rho_j^2 + Pi_ij) grad W_ij with Becker & Teschner's
// artificial viscosity Pi_ij = -nu min(v_ij . x_ij, 0) / (|x_ij|^2 + 0.01 h^2),
// nu = 2 alpha h c / (rho_i + rho_j); (5) symplectic Euler, particles leaving the box are put back
// on the wall with their normal velocity reversed and halved. W is the cubic spline with support h.
//
// Peers (par_policy.hpp): octree build and traversals fork a child per non-empty octant with a
// tbb::task_group or omp task + taskwait, and the particle loops are tbb::parallel_for
// (blocked_range, grain 4096, simple_partitioner) or an omp taskloop of 4096-particle blocks.
//
// Set-up: box [0,1] x [0,0.25] x [0,1]; a water column of side x side x 2 side particles on a
// lattice of spacing dx = 0.25 / side in the corner x < 0.25, z < 0.5, each jittered by up to
// 0.05 dx (splitmix64, par_policy.hpp, seeded with `seed`); h = 2 dx, rho0 = 1000, m = rho0 dx^3,
// c = 10 sqrt(2 g 0.5), B = rho0 c^2 / 7, alpha = 0.08, dt = 0.2 h / c, g = 9.81.
//
// Each particle's sums run over the same neighbours in the same order whatever the schedule (the
// tree is a deterministic function of the positions, and the per-leaf kernels are shared, not
// per-policy, code), so every implementation must reproduce the serial reference computed in
// prepare() bit for bit. Also checked: every particle id once (mass conserved), all values finite,
// all particles in the box.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "benchmarks/par_policy.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace {

constexpr double box_x = 1.0, box_y = 0.25, box_z = 1.0;
constexpr double rho0 = 1000.0, gravity = 9.81, alpha = 0.08;
constexpr int max_depth = 20;

struct constants {
  double dx, h, h2, mass, c, b, dt, sigma;
};

constants make_constants(int side) {
  constants k{};
  k.dx = 0.25 / side;
  k.h = 2 * k.dx;
  k.h2 = k.h * k.h;
  k.mass = rho0 * k.dx * k.dx * k.dx;
  k.c = 10 * std::sqrt(2 * gravity * 0.5);
  k.b = rho0 * k.c * k.c / 7;
  k.dt = 0.2 * k.h / k.c;
  k.sigma = 8 / (std::numbers::pi * k.h * k.h * k.h);
  return k;
}

// Structure of arrays; id is the particle's number in the initial lattice.
struct particles {
  std::vector<double> x, y, z, vx, vy, vz, rho, p, ax, ay, az;
  std::vector<std::int32_t> id;
  explicit particles(std::size_t n = 0)
      : x(n), y(n), z(n), vx(n), vy(n), vz(n), rho(n), p(n), ax(n), ay(n), az(n), id(n) {}
  std::size_t size() const { return id.size(); }
};

constexpr std::size_t bytes_per_particle = 11 * sizeof(double) + sizeof(std::int32_t);

struct node {
  double cx, cy, cz, half;          // the cell
  std::int32_t begin = 0, end = 0;  // particles [begin, end) in tree order
  int nchildren = 0;                // non-empty children, in octant order; 0: a leaf
  std::array<std::unique_ptr<node>, 8> child;
};

int octant(const node& nd, double x, double y, double z) {
  return (x >= nd.cx ? 1 : 0) | (y >= nd.cy ? 2 : 0) | (z >= nd.cz ? 4 : 0);
}

// Partitions idx[nd.begin, nd.end) (indices into s) stably by octant and builds the subtree.
template <class P>
void build(node& nd, const particles& s, std::int32_t* idx, std::int32_t* tmp, int leaf,
           int depth) {
  const std::int32_t n = nd.end - nd.begin;
  if (n <= leaf || depth == max_depth) return;
  std::array<std::int32_t, 9> off{};
  for (std::int32_t i = nd.begin; i < nd.end; ++i) {
    const auto k = static_cast<std::size_t>(idx[i]);
    ++off[static_cast<std::size_t>(octant(nd, s.x[k], s.y[k], s.z[k])) + 1];
  }
  for (std::size_t o = 1; o < 9; ++o) off[o] += off[o - 1];
  std::array<std::int32_t, 8> pos{};
  for (std::size_t o = 0; o < 8; ++o) pos[o] = nd.begin + off[o];
  for (std::int32_t i = nd.begin; i < nd.end; ++i) {
    const auto k = static_cast<std::size_t>(idx[i]);
    tmp[pos[static_cast<std::size_t>(octant(nd, s.x[k], s.y[k], s.z[k]))]++] = idx[i];
  }
  std::copy(tmp + nd.begin, tmp + nd.end, idx + nd.begin);
  const double q = nd.half / 2;
  for (std::size_t o = 0; o < 8; ++o) {
    if (off[o + 1] == off[o]) continue;
    auto c = std::make_unique<node>();
    c->cx = nd.cx + ((o & 1) ? q : -q);
    c->cy = nd.cy + ((o & 2) ? q : -q);
    c->cz = nd.cz + ((o & 4) ? q : -q);
    c->half = q;
    c->begin = nd.begin + off[o];
    c->end = nd.begin + off[o + 1];
    nd.child[static_cast<std::size_t>(nd.nchildren++)] = std::move(c);
  }
  P::spawn_each(
      static_cast<std::size_t>(n) * 2 * sizeof(std::int32_t), nd.nchildren,
      [&nd](int i) {
        return static_cast<double>(nd.child[static_cast<std::size_t>(i)]->end -
                                   nd.child[static_cast<std::size_t>(i)]->begin);
      },
      [&](int i) {
        build<P>(*nd.child[static_cast<std::size_t>(i)], s, idx, tmp, leaf, depth + 1);
      });
}

// The leaves whose cells touch the box [lo, hi], in tree order.
void gather_leaves(const node& nd, const std::array<double, 3>& lo, const std::array<double, 3>& hi,
                   std::vector<const node*>& out) {
  if (nd.cx + nd.half < lo[0] || nd.cx - nd.half > hi[0] || nd.cy + nd.half < lo[1] ||
      nd.cy - nd.half > hi[1] || nd.cz + nd.half < lo[2] || nd.cz - nd.half > hi[2]) {
    return;
  }
  if (nd.nchildren == 0) {
    out.push_back(&nd);
    return;
  }
  for (int i = 0; i < nd.nchildren; ++i) {
    gather_leaves(*nd.child[static_cast<std::size_t>(i)], lo, hi, out);
  }
}

std::vector<const node*> neighbour_leaves(const node& root, const node& leaf, const particles& s,
                                          double h) {
  std::array<double, 3> lo{std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::max()};
  std::array<double, 3> hi{-lo[0], -lo[1], -lo[2]};
  for (auto i = static_cast<std::size_t>(leaf.begin); i < static_cast<std::size_t>(leaf.end); ++i) {
    lo = {std::min(lo[0], s.x[i]), std::min(lo[1], s.y[i]), std::min(lo[2], s.z[i])};
    hi = {std::max(hi[0], s.x[i]), std::max(hi[1], s.y[i]), std::max(hi[2], s.z[i])};
  }
  for (int d = 0; d < 3; ++d) {
    lo[static_cast<std::size_t>(d)] -= h;
    hi[static_cast<std::size_t>(d)] += h;
  }
  std::vector<const node*> out;
  out.reserve(64);
  gather_leaves(root, lo, hi, out);
  return out;
}

double kernel(double r, const constants& k) {
  const double q = r / k.h;
  if (q <= 0.5) return k.sigma * (6 * q * q * q - 6 * q * q + 1);
  const double t = 1 - q;
  return k.sigma * 2 * t * t * t;
}

// dW/dr divided by r (so that grad W = this * x_ij); r > 0.
double kernel_grad_over_r(double r, const constants& k) {
  const double q = r / k.h;
  const double d =
      q <= 0.5 ? k.sigma / k.h * (18 * q * q - 12 * q) : -6 * k.sigma / k.h * (1 - q) * (1 - q);
  return d / r;
}

// The per-leaf kernels: plain functions, the same code for every implementation.
void density_leaf(const node& root, const node& leaf, particles& s, const constants& k) {
  const std::vector<const node*> near = neighbour_leaves(root, leaf, s, k.h);
  for (auto i = static_cast<std::size_t>(leaf.begin); i < static_cast<std::size_t>(leaf.end); ++i) {
    double rho = 0;
    for (const node* nb : near) {
      for (auto j = static_cast<std::size_t>(nb->begin); j < static_cast<std::size_t>(nb->end);
           ++j) {
        const double dx = s.x[i] - s.x[j], dy = s.y[i] - s.y[j], dz = s.z[i] - s.z[j];
        const double r2 = dx * dx + dy * dy + dz * dz;
        if (r2 < k.h2) rho += k.mass * kernel(std::sqrt(r2), k);
      }
    }
    const double t = rho / rho0, t2 = t * t, t4 = t2 * t2;
    s.rho[i] = rho;
    s.p[i] = std::max(0.0, k.b * (t4 * t2 * t - 1));
  }
}

void force_leaf(const node& root, const node& leaf, particles& s, const constants& k) {
  const std::vector<const node*> near = neighbour_leaves(root, leaf, s, k.h);
  for (auto i = static_cast<std::size_t>(leaf.begin); i < static_cast<std::size_t>(leaf.end); ++i) {
    const double pi_term = s.p[i] / (s.rho[i] * s.rho[i]);
    double ax = 0, ay = 0, az = 0;
    for (const node* nb : near) {
      for (auto j = static_cast<std::size_t>(nb->begin); j < static_cast<std::size_t>(nb->end);
           ++j) {
        const double dx = s.x[i] - s.x[j], dy = s.y[i] - s.y[j], dz = s.z[i] - s.z[j];
        const double r2 = dx * dx + dy * dy + dz * dz;
        if (r2 >= k.h2 || r2 == 0) continue;
        const double vdotx =
            (s.vx[i] - s.vx[j]) * dx + (s.vy[i] - s.vy[j]) * dy + (s.vz[i] - s.vz[j]) * dz;
        double visc = 0;
        if (vdotx < 0) {
          const double nu = 2 * alpha * k.h * k.c / (s.rho[i] + s.rho[j]);
          visc = -nu * vdotx / (r2 + 0.01 * k.h2);
        }
        const double coef = -k.mass * (pi_term + s.p[j] / (s.rho[j] * s.rho[j]) + visc) *
                            kernel_grad_over_r(std::sqrt(r2), k);
        ax += coef * dx;
        ay += coef * dy;
        az += coef * dz;
      }
    }
    s.ax[i] = ax;
    s.ay[i] = ay;
    s.az[i] = az - gravity;
  }
}

// Symplectic Euler for particles [lo, hi), then the walls.
void integrate(particles& s, const constants& k, std::size_t lo, std::size_t hi) {
  const auto wall = [](double& x, double& v, double top) {
    if (x < 0) {
      x = 0;
      v = -0.5 * v;
    } else if (x > top) {
      x = top;
      v = -0.5 * v;
    }
  };
  for (std::size_t i = lo; i < hi; ++i) {
    s.vx[i] += k.dt * s.ax[i];
    s.vy[i] += k.dt * s.ay[i];
    s.vz[i] += k.dt * s.az[i];
    s.x[i] += k.dt * s.vx[i];
    s.y[i] += k.dt * s.vy[i];
    s.z[i] += k.dt * s.vz[i];
    wall(s.x[i], s.vx[i], box_x);
    wall(s.y[i], s.vy[i], box_y);
    wall(s.z[i], s.vz[i], box_z);
  }
}

// Visits every leaf of the subtree, a task per non-empty child with the ADWS hints.
template <class P, class Leaf>
void traverse(const node& nd, const Leaf& leaf_fn) {
  if (nd.nchildren == 0) {
    leaf_fn(nd);
    return;
  }
  const auto count = [&nd](int i) {
    const node& c = *nd.child[static_cast<std::size_t>(i)];
    return static_cast<double>(c.end - c.begin);
  };
  P::spawn_each(static_cast<std::size_t>(nd.end - nd.begin) * bytes_per_particle, nd.nchildren,
                count,
                [&](int i) { traverse<P>(*nd.child[static_cast<std::size_t>(i)], leaf_fn); });
}

struct simulation {
  constants k;
  int leaf;
  particles cur, next;
  std::vector<std::int32_t> idx, tmp;

  template <class P>
  void step() {
    const auto n = static_cast<std::int32_t>(cur.size());
    constexpr std::int64_t grain = 4096;
    P::for_range(0, n, grain, [&](std::int64_t lo, std::int64_t hi) {
      for (std::int64_t i = lo; i < hi; ++i)
        idx[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
    });
    node root;
    root.cx = root.cy = root.cz = root.half = 0.5;
    root.begin = 0;
    root.end = n;
    build<P>(root, cur, idx.data(), tmp.data(), leaf, 0);
    P::for_range(0, n, grain, [&](std::int64_t lo, std::int64_t hi) {
      for (auto i = static_cast<std::size_t>(lo); i < static_cast<std::size_t>(hi); ++i) {
        const auto j = static_cast<std::size_t>(idx[i]);
        next.x[i] = cur.x[j];
        next.y[i] = cur.y[j];
        next.z[i] = cur.z[j];
        next.vx[i] = cur.vx[j];
        next.vy[i] = cur.vy[j];
        next.vz[i] = cur.vz[j];
        next.id[i] = cur.id[j];
      }
    });
    std::swap(cur, next);
    traverse<P>(root, [&](const node& l) { density_leaf(root, l, cur, k); });
    traverse<P>(root, [&](const node& l) { force_leaf(root, l, cur, k); });
    P::for_range(0, n, grain, [&](std::int64_t lo, std::int64_t hi) {
      integrate(cur, k, static_cast<std::size_t>(lo), static_cast<std::size_t>(hi));
    });
  }

  template <class P>
  void run(int steps) {
    for (int s = 0; s < steps; ++s) step<P>();
  }
};

particles initial_state(int side, const constants& k, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(2) * side * side * side;
  particles s(n);
  par::splitmix64 rng(seed);
  std::size_t i = 0;
  for (int a = 0; a < 2 * side; ++a) {
    for (int b = 0; b < side; ++b) {
      for (int c = 0; c < side; ++c, ++i) {
        s.x[i] = (c + 0.5) * k.dx + 0.05 * k.dx * (2 * rng.uniform() - 1);
        s.y[i] = (b + 0.5) * k.dx + 0.05 * k.dx * (2 * rng.uniform() - 1);
        s.z[i] = (a + 0.5) * k.dx + 0.05 * k.dx * (2 * rng.uniform() - 1);
        s.id[i] = static_cast<std::int32_t>(i);
      }
    }
  }
  return s;
}

// The final state in id order: x, y, z, vx, vy, vz, rho per particle.
std::vector<double> by_id(const particles& s) {
  std::vector<double> out(s.size() * 7);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto at = static_cast<std::size_t>(s.id[i]) * 7;
    out[at + 0] = s.x[i];
    out[at + 1] = s.y[i];
    out[at + 2] = s.z[i];
    out[at + 3] = s.vx[i];
    out[at + 4] = s.vy[i];
    out[at + 5] = s.vz[i];
    out[at + 6] = s.rho[i];
  }
  return out;
}

class sph_instance final : public instance {
 public:
  sph_instance(int side, int steps, int leaf, std::uint64_t seed)
      : steps_(steps), initial_(initial_state(side, make_constants(side), seed)) {
    sim_.k = make_constants(side);
    sim_.leaf = leaf;
    reset();
    sim_.run<par::serial>(steps_);
    expected_ = by_id(sim_.cur);
  }

  void reset() override {
    const std::size_t n = initial_.size();
    sim_.cur = initial_;
    sim_.next = particles(n);
    sim_.idx.assign(n, 0);
    sim_.tmp.assign(n, 0);
  }

  void run(const run_context& ctx) override {
    switch (ctx.which) {
      case impl::serial:
        sim_.run<par::serial>(steps_);
        break;
      case impl::locus:
        sim_.run<par::locus_tasks>(steps_);
        break;
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        sim_.run<par::tbb_tasks>(steps_);
        break;
      case impl::omp:
        sim_.run<par::omp_tasks>(steps_);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    const particles& s = sim_.cur;
    const std::size_t n = s.size();
    std::vector<char> seen(n, 0);
    double rho_sum = 0, ke = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto id = static_cast<std::size_t>(s.id[i]);
      if (id >= n || seen[id]) {
        v.message = "particle ids are not a permutation: mass not conserved";
        return v;
      }
      seen[id] = 1;
      const double vals[] = {s.x[i], s.y[i], s.z[i], s.vx[i], s.vy[i], s.vz[i], s.rho[i]};
      for (const double x : vals) {
        if (!std::isfinite(x)) {
          v.message = "particle " + std::to_string(id) + " has a non-finite value";
          return v;
        }
      }
      if (s.x[i] < 0 || s.x[i] > box_x || s.y[i] < 0 || s.y[i] > box_y || s.z[i] < 0 ||
          s.z[i] > box_z) {
        v.message = "particle " + std::to_string(id) + " left the box";
        return v;
      }
      rho_sum += s.rho[i];
      ke += s.vx[i] * s.vx[i] + s.vy[i] * s.vy[i] + s.vz[i] * s.vz[i];
    }
    v.result = "particles=" + std::to_string(n) +
               " mean_rho=" + std::to_string(rho_sum / static_cast<double>(n)) +
               " mean_v2=" + std::to_string(ke / static_cast<double>(n));
    const std::vector<double> got = by_id(s);
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != expected_[i]) {
        v.message = "particle " + std::to_string(i / 7) + " differs from the serial reference";
        return v;
      }
    }
    v.ok = true;
    return v;
  }

 private:
  int steps_;
  particles initial_;
  simulation sim_;
  std::vector<double> expected_;
};

}  // namespace

benchmark make_sph_benchmark() {
  benchmark b;
  b.name = "sph";
  b.description =
      "ADWS SPH: weakly compressible SPH dam break (Becker & Teschner), octree neighbour search, "
      "density and force passes as parallel octree traversals with work and size hints. Verified "
      "bit for bit against a serial run, plus mass, finiteness and box checks.";
  b.params = {
      param_spec::integer("side", "the water column is side x side x 2 side particles",
                          {"12", "32", "100"}, 2, 160),
      param_spec::integer("steps", "time steps (ADWS: 5)", {"5", "5", "5"}, 1, 10000),
      param_spec::integer("leaf", "at most this many particles per octree leaf (ADWS: 32)",
                          {"32", "32", "32"}, 1, 1 << 20),
      param_spec::integer("seed", "splitmix64 seed of the lattice jitter", {"1", "1", "1"}, 0,
                          2147483647),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    return std::make_unique<sph_instance>(
        static_cast<int>(p.integer("side")), static_cast<int>(p.integer("steps")),
        static_cast<int>(p.integer("leaf")), static_cast<std::uint64_t>(p.integer("seed")));
  };
  return b;
}

}  // namespace locus_bench
