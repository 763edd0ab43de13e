// mergesort: a parallel mergesort with a parallel merge, every task group and spawn carrying
// hints. Hints never change the result; schedulers that read them use them to place work:
// adws maps each child to a share of the workers in proportion to its work_hint, ml-adws (and
// ml-ws) also tie a group whose size_hint fits a cache to that cache. ws ignores them.
//
//   LOCUS_SCHED=adws build/release/examples/mergesort [keys]
//
// Verified against std::sort of the same keys.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <locus/locus.hpp>

namespace {

using key = std::uint64_t;
constexpr std::ptrdiff_t serial_sort = 4096;   // below this many keys: std::sort
constexpr std::ptrdiff_t serial_merge = 8192;  // below this many keys: std::merge

// Merges [a, a_end) and [b, b_end) into dst: the longer input is cut at its middle, the shorter
// at the same value, and the two halves are merged in parallel.
void merge(const key* a, const key* a_end, const key* b, const key* b_end, key* dst) {
  if (a_end - a < b_end - b) {
    std::swap(a, b);
    std::swap(a_end, b_end);
  }
  const std::ptrdiff_t n = (a_end - a) + (b_end - b);
  if (n < serial_merge) {
    std::merge(a, a_end, b, b_end, dst);
    return;
  }
  const key* a_mid = a + (a_end - a) / 2;
  const key* b_mid = std::lower_bound(b, b_end, *a_mid);
  key* dst_mid = dst + (a_mid - a) + (b_mid - b);
  // The work of each half is its number of keys; the group's working set is inputs + output.
  const auto left = static_cast<double>(dst_mid - dst);
  locus::task_group tg{locus::work_hint{static_cast<double>(n)},
                       locus::size_hint{2 * static_cast<std::size_t>(n) * sizeof(key)}};
  tg.run([=] { merge(a, a_mid, b, b_mid, dst); }, locus::work_hint{left});
  merge(a_mid, a_end, b_mid, b_end, dst_mid);  // the caller takes the other half itself
  tg.wait();
}

// Sorts the n keys at `in`, leaving the result in `in` (to_tmp false) or in `tmp` (true). The
// halves are sorted into the other array and merged back, so nothing is copied except at leaves.
void sort(key* in, key* tmp, std::ptrdiff_t n, bool to_tmp) {
  if (n < serial_sort) {
    std::sort(in, in + n);
    if (to_tmp) std::copy(in, in + n, tmp);
    return;
  }
  const std::ptrdiff_t h = n / 2;
  {
    locus::task_group tg{locus::work_hint{static_cast<double>(n)},
                         locus::size_hint{2 * static_cast<std::size_t>(n) * sizeof(key)}};
    tg.run([=] { sort(in, tmp, h, !to_tmp); }, locus::work_hint{static_cast<double>(h)});
    sort(in + h, tmp + h, n - h, !to_tmp);
    tg.wait();
  }
  key* src = to_tmp ? in : tmp;  // where the sorted halves are
  merge(src, src + h, src + h, src + n, to_tmp ? tmp : in);
}

}  // namespace

int main(int argc, char** argv) {
  const std::ptrdiff_t n = argc > 1 ? std::atoll(argv[1]) : 1'000'000;
  std::vector<key> keys(static_cast<std::size_t>(n));
  std::mt19937_64 rng{42};
  for (auto& k : keys) k = rng() % 1'000'000;  // duplicates on purpose
  std::vector<key> expected = keys;
  std::sort(expected.begin(), expected.end());

  locus::runtime rt;  // scheduler and workers from LOCUS_SCHED / LOCUS_WORKERS
  std::vector<key> tmp(keys.size());
  rt.exec([&] { sort(keys.data(), tmp.data(), n, false); });

  const bool ok = keys == expected;
  std::printf("mergesort: sorted %td keys under %s on %d workers, %s\n", n, rt.scheduler().c_str(),
              rt.num_workers(), ok ? "ok" : "WRONG");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
