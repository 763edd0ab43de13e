#include "benchmarks/uts_tree.hpp"

#include <algorithm>
#include <cmath>

#include "benchmarks/sha1.hpp"

namespace locus_bench::uts {

namespace {

constexpr int max_num_children = 100;  // UTS's MAXNUMCHILDREN

constexpr std::string_view published =
    "published: UTS 2.1 sample_trees.sh (tree size, depth and leaves)";
constexpr std::string_view computed =
    "not published: a small tree of locus-bench, counts computed by its serial search, which "
    "reproduces every published tree exactly";

tree_params geometric(geo_shape shape, int d, double b0, int r) {
  tree_params t;
  t.type = tree_type::geometric;
  t.shape = shape;
  t.gen_mx = d;
  t.b0 = b0;
  t.root_seed = r;
  return t;
}

tree_params binomial(double b0, double q, int m, int r) {
  tree_params t;
  t.type = tree_type::binomial;
  t.b0 = b0;
  t.q = q;
  t.m = m;
  t.root_seed = r;
  return t;
}

tree_params hybrid(geo_shape shape, int d, double b0, int r, double q, int m) {
  tree_params t = geometric(shape, d, b0, r);
  t.type = tree_type::hybrid;
  t.q = q;
  t.m = m;
  return t;
}

// Interprets a 31-bit random int as a probability in [0, 1).
double to_probability(int n) noexcept {
  return n < 0 ? 0.0 : static_cast<double>(n) / 2147483648.0;
}

int num_children_binomial(const tree_params& t, const state& s) noexcept {
  return to_probability(random_int(s)) < t.q ? t.m : 0;
}

int num_children_geometric(const tree_params& t, const state& s, int depth) noexcept {
  // The expressions follow UTS's uts_numChildren_geo operation for operation, so that the
  // floating-point results, and hence the trees, are bit-identical.
  double b_i = t.b0;
  if (depth > 0) {
    switch (t.shape) {
      case geo_shape::expdec:
        b_i = t.b0 * std::pow(static_cast<double>(depth),
                              -std::log(t.b0) / std::log(static_cast<double>(t.gen_mx)));
        break;
      case geo_shape::cyclic:
        if (depth > 5 * t.gen_mx) {
          b_i = 0.0;
          break;
        }
        b_i = std::pow(t.b0, std::sin(2.0 * 3.141592653589793 * static_cast<double>(depth) /
                                      static_cast<double>(t.gen_mx)));
        break;
      case geo_shape::fixed:
        b_i = depth < t.gen_mx ? t.b0 : 0;
        break;
      case geo_shape::linear:
        b_i = t.b0 * (1.0 - static_cast<double>(depth) / static_cast<double>(t.gen_mx));
        break;
    }
  }
  const double p = 1.0 / (1.0 + b_i);
  const double u = to_probability(random_int(s));
  const double n = std::floor(std::log(1 - u) / std::log(1 - p));
  // UTS converts with (int), which is undefined for NaN (b_i < 0 past a linear tree's depth)
  // and out-of-range values; there those nodes have no children, and anything over the cap is
  // capped anyway.
  if (!(n > 0)) return 0;
  return n >= max_num_children ? max_num_children + 1 : static_cast<int>(n);
}

}  // namespace

std::string to_string(const counts& c) {
  return "nodes=" + std::to_string(c.nodes) + " leaves=" + std::to_string(c.leaves) +
         " depth=" + std::to_string(c.depth);
}

const std::vector<named_tree>& named_trees() {
  using enum geo_shape;
  static const std::vector<named_tree> trees{
      // T1 cut at depth 8 (same seed, so the same top 8 levels).
      {"S1", geometric(fixed, 8, 4, 19), {257042, 205878, 8}, computed},
      // A subtree of T3: same seed, lower q, so exactly T3's nodes whose ancestors all drew
      // u < 0.123.
      {"S3", binomial(2000, 0.123, 8, 42), {247729, 217012, 261}, computed},
      // sample_trees.sh: T1="-t 1 -a 3 -d 10 -b 4 -r 19"
      {"T1", geometric(fixed, 10, 4, 19), {4130071, 3305118, 10}, published},
      // T2="-t 1 -a 2 -d 16 -b 6 -r 502"
      {"T2", geometric(cyclic, 16, 6, 502), {4117769, 2342762, 81}, published},
      // T3="-t 0 -b 2000 -q 0.124875 -m 8 -r 42"
      {"T3", binomial(2000, 0.124875, 8, 42), {4112897, 3599034, 1572}, published},
      // T4="-t 2 -a 0 -d 16 -b 6 -r 1 -q 0.234375 -m 4 -r 1"
      {"T4", hybrid(linear, 16, 6, 1, 0.234375, 4), {4132453, 3108986, 134}, published},
      // T5="-t 1 -a 0 -d 20 -b 4 -r 34"
      {"T5", geometric(linear, 20, 4, 34), {4147582, 2181318, 20}, published},
      // T1L="-t 1 -a 3 -d 13 -b 4 -r 29"
      {"T1L", geometric(fixed, 13, 4, 29), {102181082, 81746377, 13}, published},
      // T2L="-t 1 -a 2 -d 23 -b 7 -r 220"
      {"T2L", geometric(cyclic, 23, 7, 220), {96793510, 53791152, 67}, published},
      // T3L="-t 0 -b 2000 -q 0.200014 -m 5 -r 7"
      {"T3L", binomial(2000, 0.200014, 5, 7), {111345631, 89076904, 17844}, published},
      // T1XL="-t 1 -a 3 -d 15 -b 4 -r 29"
      {"T1XL", geometric(fixed, 15, 4, 29), {1635119272, 1308100063, 15}, published},
  };
  return trees;
}

const named_tree* find_tree(std::string_view name) noexcept {
  for (const auto& t : named_trees()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

state root_state(int seed) noexcept {
  std::array<std::uint8_t, 20> init{};
  init[16] = static_cast<std::uint8_t>(seed >> 24);
  init[17] = static_cast<std::uint8_t>(seed >> 16);
  init[18] = static_cast<std::uint8_t>(seed >> 8);
  init[19] = static_cast<std::uint8_t>(seed);
  return sha1::hash(init);
}

state child_state(const state& parent, int i) noexcept {
  std::array<std::uint8_t, 24> msg;
  std::copy(parent.begin(), parent.end(), msg.begin());
  msg[20] = static_cast<std::uint8_t>(i >> 24);
  msg[21] = static_cast<std::uint8_t>(i >> 16);
  msg[22] = static_cast<std::uint8_t>(i >> 8);
  msg[23] = static_cast<std::uint8_t>(i);
  return sha1::hash(msg);
}

int random_int(const state& s) noexcept {
  const std::uint32_t b = (std::uint32_t{s[16]} << 24) | (std::uint32_t{s[17]} << 16) |
                          (std::uint32_t{s[18]} << 8) | std::uint32_t{s[19]};
  return static_cast<int>(b & 0x7fffffffu);
}

int num_children(const tree_params& t, const state& s, int height) noexcept {
  int n = 0;
  switch (t.type) {
    case tree_type::binomial:
      n = height == 0 ? static_cast<int>(std::floor(t.b0)) : num_children_binomial(t, s);
      break;
    case tree_type::geometric:
      n = num_children_geometric(t, s, height);
      break;
    case tree_type::hybrid:
      n = height < t.shift_depth * t.gen_mx ? num_children_geometric(t, s, height)
                                            : num_children_binomial(t, s);
      break;
  }
  if (height == 0 && t.type == tree_type::binomial) {
    return std::min(n, static_cast<int>(std::ceil(t.b0)));
  }
  return std::min(n, max_num_children);
}

counts search_serial(const tree_params& t, const state& s, int height) {
  const int k = num_children(t, s, height);
  if (k <= 0) return {1, 1, height};
  counts c{1, 0, height};
  for (int i = 0; i < k; ++i) {
    c += search_serial(t, child_state(s, i), height + 1);
  }
  return c;
}

counts search_serial(const tree_params& t) {
  return search_serial(t, root_state(t.root_seed), 0);
}

}  // namespace locus_bench::uts
