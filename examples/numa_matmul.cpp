// numa_matmul: a matrix product C = A * B under numa-ws (NUMA-WS, seed 001), with each place's
// rows of A and C allocated on that place and the work on those rows hinted to it
// (locus::place). numa-ws biases steals towards near places and pushes hinted work to its place,
// so rows tend to be computed where their memory is; the program prints where they ran (under
// ws, which ignores the hints, a band's row blocks land on either place alike).
//
//   build/release/examples/numa_matmul [topology] [n]
//
// The topology is an hwloc synthetic description; the default, "pack:2 core:2 pu:1", is two
// places of two workers each, so that placement shows on any machine. On a synthetic topology
// memory binding is recorded (for locus's locality model), not done; pass "machine" to run on
// this machine's own topology, where the memory is really bound to its NUMA nodes.
// Verified bit for bit against the same product computed serially.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <locus/locus.hpp>

namespace {

using on_place = locus::place_allocator<double>;
using placed_vector = std::vector<double, on_place>;

// The rows [lo, hi) of A and C that live at one place.
struct part {
  int lo, hi;
  placed_vector a, c;
};

// C's row i (c_row) += A's row i (a_row) times B: the same loop for the serial reference.
void row_product(const double* a_row, const double* b, double* c_row, int n) {
  for (int k = 0; k < n; ++k) {
    const double a = a_row[k];
    for (int j = 0; j < n; ++j) c_row[j] += a * b[static_cast<std::size_t>(k) * n + j];
  }
}

const char* binding_name(locus::memory_binding m) {
  switch (m) {
    case locus::memory_binding::os:
      return "bound by the OS";
    case locus::memory_binding::modeled:
      return "binding recorded, synthetic topology";
    case locus::memory_binding::unavailable:
      return "binding refused by the OS";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string topo_arg = argc > 1 ? argv[1] : "pack:2 core:2 pu:1";
  const int n = argc > 2 ? std::atoi(argv[2]) : 512;
  std::optional<std::string> topology;  // unset: this machine (or LOCUS_TOPOLOGY)
  if (topo_arg != "machine") topology = topo_arg;
  locus::runtime rt{locus::options{.sched = "numa-ws", .topology = topology}};
  const int places = rt.num_places();
  const auto sz = static_cast<std::size_t>(n);

  // A's and C's rows cut in one band per place, each band allocated at its place; B is read by
  // every place, so its pages are spread over all of them.
  const auto a_value = [](int i, int k) { return static_cast<double>((i * 3 + k) % 7 - 3); };
  std::vector<part> parts;
  for (int p = 0; p < places; ++p) {
    const int lo = n * p / places, hi = n * (p + 1) / places;
    const auto rows = static_cast<std::size_t>(hi - lo);
    part& pt = parts.emplace_back(
        part{lo, hi, placed_vector(rows * sz, 0.0, on_place{rt, locus::place{p}}),
             placed_vector(rows * sz, 0.0, on_place{rt, locus::place{p}})});
    for (int i = lo; i < hi; ++i) {
      for (int k = 0; k < n; ++k) pt.a[static_cast<std::size_t>(i - lo) * sz + k] = a_value(i, k);
    }
  }
  placed_vector b(sz * sz, 0.0, on_place::interleaved(rt));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 5) - 2;

  // One task per place, hinted there; its parallel_for's tasks inherit the hint. Each leaf counts
  // whether it still carries its band's place (this_task_place) and whether it ran at that place
  // (current_place: the place of the worker running it).
  struct tally {
    std::atomic<int> leaves{0}, at_home{0}, hint_lost{0};
  };
  std::vector<tally> tallies(static_cast<std::size_t>(places));
  rt.exec([&] {
    locus::task_group tg;
    for (int p = 0; p < places; ++p) {
      part& pt = parts[static_cast<std::size_t>(p)];
      tally& t = tallies[static_cast<std::size_t>(p)];
      const auto band = [&, p](int lo, int hi) {
        for (int i = lo; i < hi; ++i) {
          const std::size_t r = static_cast<std::size_t>(i - pt.lo) * sz;
          row_product(&pt.a[r], b.data(), &pt.c[r], n);
        }
        ++t.leaves;
        if (locus::this_task_place() != p) ++t.hint_lost;
        if (locus::current_place() == p) ++t.at_home;
      };
      tg.run([&pt, band] { locus::parallel_for(pt.lo, pt.hi, band, locus::grain{8}); },
             locus::place{p}, locus::parent_first);
    }
    tg.wait();
  });

  // Serial reference, in plain row-major arrays.
  bool ok = true;
  std::vector<double> a_ref(sz * sz), c_ref(sz * sz, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < n; ++k) a_ref[static_cast<std::size_t>(i) * sz + k] = a_value(i, k);
  }
  for (int i = 0; i < n; ++i) row_product(&a_ref[i * sz], b.data(), &c_ref[i * sz], n);
  for (const part& pt : parts) {
    for (std::size_t x = 0; x < pt.c.size(); ++x) ok = ok && pt.c[x] == c_ref[pt.lo * sz + x];
  }

  std::printf("numa-matmul: %d places, %d workers, memory %s, %llu frames pushed to their place\n",
              places, rt.num_workers(), binding_name(locus::memory_binding_support(rt)),
              static_cast<unsigned long long>(rt.stats().total().pushes));
  for (int p = 0; p < places; ++p) {
    const auto q = static_cast<std::size_t>(p);
    std::printf("  place %d: rows %d-%d, %d of %d row blocks ran at place %d\n", p, parts[q].lo,
                parts[q].hi - 1, tallies[q].at_home.load(), tallies[q].leaves.load(), p);
    ok = ok && tallies[q].hint_lost == 0;  // every leaf carries its band's place hint
  }
  std::printf("numa-matmul: %dx%d product under %s, %s\n", n, n, rt.scheduler().c_str(),
              ok ? "ok" : "WRONG");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
