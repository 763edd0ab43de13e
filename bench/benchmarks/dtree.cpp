// dtree: trains a CART decision tree for binary classification (seed 000, ADWS, Section 2.1 and
// Fig. 1; Section 6.2 "Decision Tree"). Rows have 28 continuous attributes (doubles) and a class
// (0/1), the shape of the HIGGS data set the paper used, which cannot be downloaded here: the
// rows are synthetic (see the generator below). A node:
//   1. for each attribute in turn, COMPUTEBESTSPLIT: a parallel reduction over the node's rows
//      builds a histogram (bin x class counts; `bins` quantile bins per attribute, edges from
//      the training data as LightGBM does), then a scan picks the threshold with the lowest
//      Gini impurity whose sides both hold >= `min_leaf` rows;
//   2. if the best split lowers the impurity, PARTITION: a parallel double-buffered partition
//      (adws::partition_copy; attribute < threshold goes left), then the two subtrees are built
//      in parallel. Otherwise, or at depth `max_depth`, or with fewer than 2 * min_leaf rows, or
//      when the node is pure, it is a leaf predicting its majority class.
// From the paper: the algorithm, 28 attributes, max depth 17, the cutoffs (recursion 64 KB =
// `rcutoff` 282 rows of 232 bytes; loops and partitions 256 KB = `grain` 1129 rows) and the
// training-only timing. The paper trained on 10.5 M rows (2 GB, 4.5 GB working set); large
// here is 4 M rows (three copies of 0.93 GB: the input, which stays intact, and the two
// partition buffers).
//
// Hints: each child gets work_hint = its row count, the group size_hint the bytes of both
// buffers of the node's rows; the histogram loops hint each half with its row count.
//
// Peers (adws_common.hpp): oneTBB and OpenMP run the same recursion, the child builds and the
// histogram and partition loops' halving forked with a tbb::task_group or omp task + taskwait;
// same cutoffs, so they train the same tree.
//
// Locality model (locus-bench --locality): every histogram leaf declares the attribute and label
// of its rows (with the attribute as the iteration, for mapping stability), every partition
// block what it reads and writes (adws::partition_copy).
//
// Generator (std::mt19937_64 seeded with 0x48494747; normals by Box-Muller from 53-bit
// uniforms): attribute j of a row is exp(0.5 z) when j % 4 == 0 (a positive, skewed
// "momentum"), else z (z standard normal). A hidden rule, drawn from the same generator first,
// labels the rows: 8 threshold terms w_t * [x_{a_t} > tau_t] (distinct attributes a_t, w_t
// uniform in +-[0.5, 1.5], tau_t = the attribute's median plus 0.5 z), an oblique term
// 0.5 * (x_p - x_q), and noise 0.5 z; the class is 1 when that score exceeds the median score of
// the training rows (so the classes are balanced). Training rows come first, then `test`
// held-out rows.
//
// Verified: the tree equals the one the serial elision trained in prepare() (a hash of every
// node's attribute, threshold bits, class counts and shape), and its held-out accuracy is above
// both 0.6 and the majority-class baseline + 0.05 (the baseline is about 0.5). The result
// reports both accuracies, the baseline and the tree's size.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <locus/locality.hpp>

#include "benchmarks/adws_common.hpp"
#include "harness/benchmark.hpp"

namespace locus_bench {

namespace {

using namespace adws;

constexpr int n_attr = 28;
constexpr int max_bins = 256;
constexpr std::uint64_t data_seed = 0x4849'4747;
constexpr double min_test_accuracy = 0.6;

struct row {
  std::array<double, n_attr> x;
  std::uint64_t label;
};

// Class counts per bin: [2 * bin + class].
using histogram = std::array<std::uint32_t, 2 * max_bins>;

struct problem {
  std::size_t rows, test;
  int max_depth;
  std::size_t min_leaf;
  int bins;  // a power of two
  std::size_t grain;
  std::size_t rcutoff;
};

// Quantile bin edges: edges[a][k] for k < bins - 1, then +inf, so that the bin of v, the number
// of edges <= v, is found by a fixed binary search.
struct binning {
  int bins = 0;
  std::vector<std::array<double, max_bins>> edges;

  int bin(int attr, double v) const {
    const double* e = edges[static_cast<std::size_t>(attr)].data();
    int i = 0;
    for (int step = bins / 2; step > 0; step /= 2) i += v >= e[i + step - 1] ? step : 0;
    return i;
  }
};

struct node {
  int attr = -1;  // -1: leaf
  double threshold = 0;
  std::uint64_t count[2] = {0, 0};
  std::unique_ptr<node> left, right;

  int predict_here() const { return count[1] > count[0] ? 1 : 0; }
};

struct split {
  double score = -1;  // sum over both sides of (c0^2 + c1^2) / size; higher is purer
  int attr = -1;
  int bin = 0;  // left: bins < bin
  std::uint64_t left[2] = {0, 0};
};

// A histogram leaf reads one attribute and the label of each of its rows (two strided
// declarations rather than whole rows: a row spans four lines, of which the leaf needs one or
// two). Its identity is the node's range and its start, and the attribute is its iteration, so
// mapping stability is the share of leaves that ran where the same rows' previous attribute did.
inline void declare_histogram_leaf(const row* rows, std::size_t lo, std::size_t hi, std::size_t a,
                                   std::size_t e, int attr) {
  namespace loc = locus::locality;
  loc::leaf(hash_combine(hash_combine(lo, hi), a), static_cast<std::uint64_t>(attr));
  const auto stride = static_cast<std::ptrdiff_t>(sizeof(row));
  loc::touch_read_rows(&rows[a].x[static_cast<std::size_t>(attr)], sizeof(double), e - a, stride);
  loc::touch_read_rows(&rows[a].label, sizeof(std::uint64_t), e - a, stride);
}

struct trainer {
  const problem& p;
  const binning& b;
  const row* input;
  row* buf[2];

  const row* source(int depth) const { return depth == 0 ? input : buf[(depth - 1) % 2]; }
  row* target(int depth) const { return buf[depth % 2]; }

  // COMPUTEBESTSPLIT for one attribute.
  template <class P>
  void best_split(const row* rows, std::size_t lo, std::size_t hi, int attr,
                  const std::uint64_t count[2], split& best) const {
    histogram h{};
    preduce<P>(
        lo, hi, p.grain, sizeof(row), h,
        [&](std::size_t a, std::size_t e, histogram& acc) {
          declare_histogram_leaf(rows, lo, hi, a, e, attr);
          for (std::size_t i = a; i < e; ++i) {
            ++acc[static_cast<std::size_t>(2 * b.bin(attr, rows[i].x[attr]) + rows[i].label)];
          }
        },
        [&](histogram& into, const histogram& from) {
          for (int k = 0; k < 2 * b.bins; ++k) into[k] += from[k];
        });
    const std::uint64_t n = count[0] + count[1];
    std::uint64_t l0 = 0, l1 = 0;
    for (int k = 1; k < b.bins; ++k) {
      l0 += h[static_cast<std::size_t>(2 * k - 2)];
      l1 += h[static_cast<std::size_t>(2 * k - 1)];
      const std::uint64_t nl = l0 + l1, nr = n - nl;
      if (nl < p.min_leaf || nr < p.min_leaf) continue;
      const std::uint64_t r0 = count[0] - l0, r1 = count[1] - l1;
      const double score = static_cast<double>(l0 * l0 + l1 * l1) / static_cast<double>(nl) +
                           static_cast<double>(r0 * r0 + r1 * r1) / static_cast<double>(nr);
      if (score > best.score) best = split{score, attr, k, {l0, l1}};
    }
  }

  template <class P>
  std::unique_ptr<node> build(std::size_t lo, std::size_t hi, int depth,
                              const std::uint64_t count[2]) const {
    auto n = std::make_unique<node>();
    n->count[0] = count[0];
    n->count[1] = count[1];
    const std::size_t m = hi - lo;
    if (depth >= p.max_depth || m < 2 * p.min_leaf || count[0] == 0 || count[1] == 0) return n;
    const row* src = source(depth);
    split best;
    for (int a = 0; a < n_attr; ++a) best_split<P>(src, lo, hi, a, count, best);
    const double parent =
        static_cast<double>(count[0] * count[0] + count[1] * count[1]) / static_cast<double>(m);
    if (best.attr < 0 || !(best.score > parent * (1 + 1e-12))) return n;

    n->attr = best.attr;
    n->threshold = b.edges[static_cast<std::size_t>(best.attr)][best.bin - 1];
    const int attr = n->attr;
    const double t = n->threshold;
    row* dst = target(depth);
    const std::size_t left = partition_copy<P>(src + lo, dst + lo, m, p.grain,
                                               [=](const row& r) { return r.x[attr] < t; });
    const std::size_t mid = lo + left;
    const std::uint64_t lc[2] = {best.left[0], best.left[1]};
    const std::uint64_t rc[2] = {count[0] - best.left[0], count[1] - best.left[1]};
    if (m <= p.rcutoff) {
      n->left = build<serial_policy>(lo, mid, depth + 1, lc);
      n->right = build<serial_policy>(mid, hi, depth + 1, rc);
    } else {
      P::fork2(
          fork_hint{static_cast<double>(left), static_cast<double>(hi - mid), 2 * m * sizeof(row)},
          [&] { n->left = build<P>(lo, mid, depth + 1, lc); },
          [&] { n->right = build<P>(mid, hi, depth + 1, rc); });
    }
    return n;
  }
};

// The structure hash: preorder, every node's attribute, threshold bits and class counts.
std::uint64_t tree_hash(const node& n, std::uint64_t h) {
  h = hash_combine(h, static_cast<std::uint64_t>(n.attr + 1));
  h = hash_combine(h, std::bit_cast<std::uint64_t>(n.threshold));
  h = hash_combine(h, n.count[0]);
  h = hash_combine(h, n.count[1]);
  if (n.left) h = tree_hash(*n.left, h);
  if (n.right) h = tree_hash(*n.right, h);
  return h;
}

void tree_size(const node& n, int depth, std::size_t& nodes, std::size_t& leaves, int& max_d) {
  ++nodes;
  max_d = std::max(max_d, depth);
  if (!n.left || !n.right) {
    ++leaves;
    return;
  }
  tree_size(*n.left, depth + 1, nodes, leaves, max_d);
  tree_size(*n.right, depth + 1, nodes, leaves, max_d);
}

int predict(const node& root, const row& r) {
  const node* n = &root;
  while (n->left && n->right) n = r.x[n->attr] < n->threshold ? n->left.get() : n->right.get();
  return n->predict_here();
}

double accuracy(const node& root, const std::vector<row>& rows, std::size_t lo, std::size_t hi) {
  std::size_t right = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    right += static_cast<std::uint64_t>(predict(root, rows[i])) == rows[i].label ? 1 : 0;
  }
  return hi > lo ? static_cast<double>(right) / static_cast<double>(hi - lo) : 0.0;
}

// The synthetic HIGGS-shaped data set (see the file comment).
class generator {
 public:
  generator() : rng_(data_seed) {
    std::vector<int> attrs(n_attr);
    for (int j = 0; j < n_attr; ++j) attrs[static_cast<std::size_t>(j)] = j;
    for (int j = n_attr - 1; j > 0; --j) {  // Fisher-Yates with the generator's draws
      const auto k = static_cast<int>(rng_() % static_cast<std::uint64_t>(j + 1));
      std::swap(attrs[static_cast<std::size_t>(j)], attrs[static_cast<std::size_t>(k)]);
    }
    for (int t = 0; t < terms; ++t) {
      term& tm = terms_[static_cast<std::size_t>(t)];
      tm.attr = attrs[static_cast<std::size_t>(t)];
      const double magnitude = 0.5 + unit();
      tm.weight = rng_() % 2 == 0 ? magnitude : -magnitude;
      const double median = tm.attr % 4 == 0 ? 1.0 : 0.0;  // exp(0.5 z) has median 1
      tm.tau = median + 0.5 * normal();
    }
    oblique_p_ = attrs[terms];
    oblique_q_ = attrs[terms + 1];
  }

  // Draws the attributes of r and returns its hidden score.
  double fill(row& r) {
    for (int j = 0; j < n_attr; ++j) {
      const double z = normal();
      r.x[static_cast<std::size_t>(j)] = j % 4 == 0 ? std::exp(0.5 * z) : z;
    }
    double score = 0;
    for (const term& tm : terms_) {
      if (r.x[static_cast<std::size_t>(tm.attr)] > tm.tau) score += tm.weight;
    }
    score += 0.5 * (r.x[static_cast<std::size_t>(oblique_p_)] -
                    r.x[static_cast<std::size_t>(oblique_q_)]);
    score += 0.5 * normal();
    return score;
  }

 private:
  static constexpr int terms = 8;
  struct term {
    int attr = 0;
    double weight = 0, tau = 0;
  };

  double unit() { return unit_double(rng_()); }
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - unit();  // (0, 1]
    const double u2 = unit();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2 * std::numbers::pi * u2);
    has_spare_ = true;
    return r * std::cos(2 * std::numbers::pi * u2);
  }

  std::mt19937_64 rng_;
  std::array<term, terms> terms_{};
  int oblique_p_ = 0, oblique_q_ = 0;
  double spare_ = 0;
  bool has_spare_ = false;
};

// Quantile edges of each attribute over (up to 200000 evenly spaced) training rows.
binning make_binning(const std::vector<row>& data, std::size_t rows, int bins) {
  binning b;
  b.bins = bins;
  b.edges.resize(n_attr);
  const std::size_t step = std::max<std::size_t>(1, rows / 200000);
  std::vector<double> sample;
  for (int a = 0; a < n_attr; ++a) {
    sample.clear();
    for (std::size_t i = 0; i < rows; i += step) sample.push_back(data[i].x[a]);
    std::sort(sample.begin(), sample.end());
    auto& e = b.edges[static_cast<std::size_t>(a)];
    e.fill(std::numeric_limits<double>::infinity());
    for (int k = 0; k + 1 < bins; ++k) {
      e[static_cast<std::size_t>(k)] = sample[(static_cast<std::size_t>(k) + 1) * sample.size() /
                                              static_cast<std::size_t>(bins)];
    }
  }
  return b;
}

class dtree_instance final : public instance {
 public:
  explicit dtree_instance(const problem& p) : p_(p), data_(p.rows + p.test) {
    generator g;
    std::vector<double> score(data_.size());
    for (std::size_t i = 0; i < data_.size(); ++i) score[i] = g.fill(data_[i]);
    std::vector<double> train_scores(score.begin(),
                                     score.begin() + static_cast<std::ptrdiff_t>(p_.rows));
    auto median = train_scores.begin() + static_cast<std::ptrdiff_t>(p_.rows / 2);
    std::nth_element(train_scores.begin(), median, train_scores.end());
    for (std::size_t i = 0; i < data_.size(); ++i) data_[i].label = score[i] > *median ? 1 : 0;
    std::size_t test_ones = 0;
    for (std::size_t i = p_.rows; i < data_.size(); ++i) test_ones += data_[i].label;
    baseline_ = static_cast<double>(std::max(test_ones, p_.test - test_ones)) /
                static_cast<double>(p_.test);
    bins_ = make_binning(data_, p_.rows, p_.bins);
    for (std::size_t i = 0; i < p_.rows; ++i) ++root_count_[data_[i].label];
    buf_[0].resize(p_.rows);
    buf_[1].resize(p_.rows);
    const auto reference = train<serial_policy>();
    expected_hash_ = tree_hash(*reference, 0);
  }

  void reset() override { root_.reset(); }

  void run(const run_context& ctx) override {
    dispatch(ctx.which, [&]<class P>(P) { root_ = train<P>(); });
  }

  verdict verify() const override {
    verdict v;
    if (!root_) {
      v.message = "no tree";
      return v;
    }
    std::size_t nodes = 0, leaves = 0;
    int depth = 0;
    tree_size(*root_, 0, nodes, leaves, depth);
    const double train_acc = accuracy(*root_, data_, 0, p_.rows);
    const double test_acc = accuracy(*root_, data_, p_.rows, data_.size());
    const std::uint64_t h = tree_hash(*root_, 0);
    const double required = std::max(min_test_accuracy, baseline_ + 0.05);
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "train_acc=%.4f test_acc=%.4f baseline=%.4f nodes=%zu leaves=%zu depth=%d",
                  train_acc, test_acc, baseline_, nodes, leaves, depth);
    v.result = buf;
    if (h != expected_hash_) {
      v.message = "the tree differs from the serial reference tree (structure hash)";
    } else if (!(test_acc > required)) {
      std::snprintf(buf, sizeof buf, "held-out accuracy %.4f is not above %.4f", test_acc,
                    required);
      v.message = buf;
    } else {
      v.ok = true;
    }
    return v;
  }

 private:
  template <class P>
  std::unique_ptr<node> train() {
    const trainer t{p_, bins_, data_.data(), {buf_[0].data(), buf_[1].data()}};
    return t.build<P>(0, p_.rows, 0, root_count_);
  }

  problem p_;
  std::vector<row> data_;  // training rows, then test rows; never modified
  std::array<std::vector<row>, 2> buf_;
  binning bins_;
  std::uint64_t root_count_[2] = {0, 0};
  std::uint64_t expected_hash_ = 0;
  double baseline_ = 0;  // held-out accuracy of always predicting the majority class
  std::unique_ptr<node> root_;
};

void check_dtree(const param_values& p) {
  const std::int64_t bins = p.integer("bins");
  if ((bins & (bins - 1)) != 0) {
    throw usage_error("--set dtree.bins: must be a power of two in [2, 256], not " +
                      std::to_string(bins));
  }
}

}  // namespace

benchmark make_dtree_benchmark() {
  benchmark b;
  b.name = "dtree";
  b.description =
      "train a CART decision tree (ADWS paper, Fig. 1) on synthetic HIGGS-shaped rows: histogram "
      "best splits by parallel reductions, parallel double-buffered partitions. Verified equal "
      "to the serial tree, held-out accuracy > 0.6.";
  b.params = {
      param_spec::integer("rows", "training rows (28 doubles + class, 232 bytes each)",
                          {"20000", "200000", "4000000"}, 2, std::int64_t{1} << 28),
      param_spec::integer("test", "held-out rows for the accuracy check",
                          {"5000", "50000", "500000"}, 1, std::int64_t{1} << 28),
      param_spec::integer("max_depth", "nodes at this depth (root 0) are leaves",
                          {"10", "17", "17"}, 0, 64),
      param_spec::integer("min_leaf", "a split leaves at least this many rows on each side",
                          {"20", "20", "20"}, 1, std::int64_t{1} << 28),
      param_spec::integer("bins", "histogram bins per attribute (a power of two)",
                          {"64", "64", "64"}, 2, max_bins),
      param_spec::integer("grain",
                          "histogram loops and partitions run serially on at most this many "
                          "rows (1129 = 256 KB)",
                          {"1129", "1129", "1129"}, 1, std::int64_t{1} << 28),
      param_spec::integer("rcutoff",
                          "nodes with at most this many rows build their subtree serially "
                          "(282 = 64 KB)",
                          {"282", "282", "282"}, 1, std::int64_t{1} << 28),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.check = check_dtree;
  b.prepare = [](param_values& p) -> std::unique_ptr<instance> {
    check_dtree(p);
    problem pr{};
    pr.rows = static_cast<std::size_t>(p.integer("rows"));
    pr.test = static_cast<std::size_t>(p.integer("test"));
    pr.max_depth = static_cast<int>(p.integer("max_depth"));
    pr.min_leaf = static_cast<std::size_t>(p.integer("min_leaf"));
    pr.bins = static_cast<int>(p.integer("bins"));
    pr.grain = static_cast<std::size_t>(p.integer("grain"));
    pr.rcutoff = static_cast<std::size_t>(p.integer("rcutoff"));
    return std::make_unique<dtree_instance>(pr);
  };
  return b;
}

}  // namespace locus_bench
