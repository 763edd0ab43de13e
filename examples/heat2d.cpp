// heat2d: a 2-D heat-diffusion time loop under adws (almost deterministic work stealing, seed
// 000). Each time step is a two-dimensional locus::parallel_for over the grid, which halves it
// recursively (rows, then columns) down to leaf blocks, every part carrying a work hint (its number
// of cells) and a size hint (the bytes of its cells in both grids). adws turns the work hints into
// a plan that gives each leaf block the same worker in every step, so a block's cells stay in that
// worker's caches from one step to the next; the program prints how many blocks kept their
// worker.
//
//   build/release/examples/heat2d [n] [steps]      (LOCUS_WORKERS=4 to choose the workers)
//
// Verified bit for bit against the same time loop run serially.
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include <locus/locus.hpp>

namespace {

constexpr int block = 64;  // leaf blocks of block x block cells are updated serially

struct grid {
  int n;                  // interior cells per side; one ring of fixed boundary cells around
  std::vector<double> v;  // (n + 2) x (n + 2), row-major
  explicit grid(int n_) : n(n_), v(static_cast<std::size_t>(n_ + 2) * (n_ + 2), 0.0) {}
  double& at(int i, int j) { return v[static_cast<std::size_t>(i) * (n + 2) + j]; }
};

// One explicit step on interior rows [r0, r1) and columns [c0, c1) (1-based): the same
// arithmetic in the same order as the serial loop, hence the same bits.
void update(grid& cur, grid& next, int r0, int r1, int c0, int c1) {
  for (int i = r0; i < r1; ++i) {
    for (int j = c0; j < c1; ++j) {
      next.at(i, j) = cur.at(i, j) + 0.2 * (cur.at(i - 1, j) + cur.at(i + 1, j) + cur.at(i, j - 1) +
                                            cur.at(i, j + 1) - 4.0 * cur.at(i, j));
    }
  }
}

// The parallel step over the interior; `owner` records the worker that updated each leaf block.
void step(grid& cur, grid& next, std::vector<int>& owner) {
  const int n = cur.n;
  locus::parallel_for(
      locus::range2d{1, n + 1, 1, n + 1},
      [&](const locus::range2d<int>& b) {
        update(cur, next, b.row_begin, b.row_end, b.col_begin, b.col_end);
        owner[static_cast<std::size_t>((b.row_begin - 1) / block * (n / block) +
                                       (b.col_begin - 1) / block)] = locus::this_worker();
      },
      locus::grain2d{block, block}, locus::item_size{2 * sizeof(double)});
}

grid initial(int n) {
  grid g(n);
  for (int j = 0; j < n + 2; ++j) g.at(0, j) = 100.0;  // a hot top edge
  for (int i = 1; i <= n; ++i) {
    for (int j = 1; j <= n; ++j) g.at(i, j) = (i * 7 + j * 13) % 10;  // some texture inside
  }
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 512;  // a power of two, at least `block`
  const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
  if (n < block || (n & (n - 1)) != 0) {
    std::fprintf(stderr, "heat2d: n must be a power of two >= %d\n", block);
    return EXIT_FAILURE;
  }

  // Serial reference.
  grid ref = initial(n), ref_next = ref;
  for (int s = 0; s < steps; ++s) {
    update(ref, ref_next, 1, n + 1, 1, n + 1);
    std::swap(ref, ref_next);
  }

  locus::runtime rt{locus::options{.sched = "adws"}};
  grid cur = initial(n), next = cur;
  const std::size_t blocks = static_cast<std::size_t>(n / block) * (n / block);
  std::vector<int> owner(blocks, -1), previous(blocks, -1);
  std::size_t kept = 0;  // blocks updated by the same worker as in the step before
  for (int s = 0; s < steps; ++s) {
    // One root per time step: the steps run one after the other from main.
    rt.exec([&] { step(cur, next, owner); });
    std::swap(cur, next);
    if (s > 0) {
      for (std::size_t b = 0; b < blocks; ++b) kept += owner[b] == previous[b] ? 1 : 0;
    }
    previous = owner;
  }

  const bool ok = cur.v == ref.v;  // exact comparison: same operations, same order
  const double same =
      steps > 1 ? 100.0 * static_cast<double>(kept) / (static_cast<double>(blocks) * (steps - 1))
                : 100.0;
  std::printf(
      "heat2d: %dx%d grid, %d steps under %s on %d workers, %.0f%% of blocks kept their "
      "worker between steps, %s\n",
      n, n, steps, rt.scheduler().c_str(), rt.num_workers(), same, ok ? "ok" : "WRONG");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
