// uts: Unbalanced Tree Search (UTS 2.1; Olivier et al., LCPC 2006). Counts the nodes, leaves
// and depth of an implicitly defined random tree (see uts_tree.hpp) whose shape is unknown until
// it is explored: the classic load-balancing stress for work stealing. Every child but the last
// is a task (a task group per node; the last child is searched by the node itself), and a
// child's SHA-1 is computed in its own task. Named trees verify against their published counts,
// custom trees against the serial search.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <locus/assembly.hpp>
#include <locus/runtime.hpp>
#include <locus/task_group.hpp>
#include <locus/taskq.hpp>

#include "benchmarks/uts_tree.hpp"
#include "harness/benchmark.hpp"
#include "harness/dist_stats.hpp"

#if LOCUS_BENCH_PEERS
#include <oneapi/tbb/task_group.h>
#endif

namespace locus_bench {

namespace {

using uts::counts;
using uts::state;
using uts::tree_params;

// The subtree counts of one node's children: each child writes its own slot, so joining needs no
// atomic read-modify-write (which would cost more than a spawn here).
class child_results {
 public:
  explicit child_results(int k) : k_(k) {
    if (k_ > small) large_.resize(static_cast<std::size_t>(k_));
  }
  counts& operator[](int i) noexcept {
    return k_ > small ? large_[static_cast<std::size_t>(i)] : small_[static_cast<std::size_t>(i)];
  }
  // After the join: the node itself plus its children's subtrees.
  counts node_total() noexcept {
    counts total{1, 0, 0};
    for (int i = 0; i < k_; ++i) total += (*this)[i];
    return total;
  }

 private:
  static constexpr int small = 16;
  int k_;
  // Left uninitialised: every child writes its own slot before the join reads it, and zeroing
  // 16 slots per node cost the parallel versions about 1% of T3 over the serial search.
  union {
    std::array<counts, small> small_;
  };
  std::vector<counts> large_;
};

// Every parallel version spawns children 0..k-2 and searches the last child itself, the usual
// fork-join shape (and the one Cilk's UTS compiles to once the last spawn is elided).
counts search_locus(const tree_params& t, const state& s, int height) {
  const int k = uts::num_children(t, s, height);
  if (k <= 0) return {1, 1, height};
  child_results r(k);
  locus::task_group tg;
  for (int i = 0; i < k - 1; ++i) {
    tg.run([&t, &s, &r, i, height] { r[i] = search_locus(t, uts::child_state(s, i), height + 1); });
  }
  r[k - 1] = search_locus(t, uts::child_state(s, k - 1), height + 1);
  tg.wait();
  return r.node_total();
}

// Through locus::taskq, as the seed's UTS: every child is a task (32 bytes of input there; here
// the parent's state and the child's index, so that the child's SHA-1 is computed in its own
// task as in the other versions), its output the child's subtree counts.
struct uts_input {
  const tree_params* t;
  state parent;
  int index;
  int height;
};

locus::taskq* uts_queue = nullptr;

counts search_taskq(const tree_params& t, const state& s, int height);

void uts_task(const uts_input& in, counts& out) {
  out = search_taskq(*in.t, uts::child_state(in.parent, in.index), in.height);
}

counts search_taskq(const tree_params& t, const state& s, int height) {
  const int k = uts::num_children(t, s, height);
  if (k <= 0) return {1, 1, height};
  child_results r(k);
  for (int i = 0; i < k; ++i) uts_queue->put(uts_task, uts_input{&t, s, i, height + 1}, r[i]);
  uts_queue->wait();
  return r.node_total();
}

// HotSLAW's own UTS (seed 004, Table 1: 32 bytes of input, no output): a task searches one node,
// puts a task per child and returns without waiting; the counts go to the running worker's
// tally, summed after the top-level wait (across ranks, gathered on rank 0). No task waits for
// another, so with a distributed queue no rank waits on another's work until the end.
struct uts_seed_input {
  state parent;
  int index;  // -1: the node is `parent` itself (the root, put at the top level)
  int height;
};

// One worker's counts (the seed form's and the assemblies'), on a cache line of its own: only that
// worker writes it.
struct alignas(64) uts_tally {
  counts c{0, 0, 0};
};

// Set before every seed-form run, identically on every rank.
const tree_params* uts_seed_tree = nullptr;
std::vector<uts_tally>* uts_seed_tallies = nullptr;  // one per worker of this process

// Counts the node and returns its children's count (0 for a leaf).
int uts_seed_visit(const state& s, int height) {
  const int k = uts::num_children(*uts_seed_tree, s, height);
  (*uts_seed_tallies)[static_cast<std::size_t>(locus::this_worker())].c.count_node(k, height);
  return k;
}

state uts_seed_node(const uts_seed_input& in) {
  return in.index < 0 ? in.parent : uts::child_state(in.parent, in.index);
}

locus::taskq* uts_seed_queue = nullptr;

void uts_seed_task(const uts_seed_input& in) {
  const state s = uts_seed_node(in);
  const int k = uts_seed_visit(s, in.height);
  for (int i = 0; i < k; ++i)
    uts_seed_queue->put(uts_seed_task, uts_seed_input{s, i, in.height + 1});
}

counts sum_tallies(const std::vector<uts_tally>& tallies) {
  counts total{0, 0, 0};
  for (const uts_tally& t : tallies) total += t.c;
  return total;
}

#if LOCUS_BENCH_MPI

// Across the ranks of an MPI job: the input carries no pointer (it would mean nothing on another
// rank); every rank points uts_dist_tree at its own, identical, tree before the run.
const tree_params* uts_dist_tree = nullptr;
locus::dist_taskq* uts_dist_queue = nullptr;

struct uts_mpi_input {
  state parent;
  int index;  // -1: the node is `parent` itself (the root, put at the top level)
  int height;
};

counts search_taskq_mpi(const state& s, int height);

void uts_task_mpi(const uts_mpi_input& in, counts& out) {
  out =
      search_taskq_mpi(in.index < 0 ? in.parent : uts::child_state(in.parent, in.index), in.height);
}

counts search_taskq_mpi(const state& s, int height) {
  const int k = uts::num_children(*uts_dist_tree, s, height);
  if (k <= 0) return {1, 1, height};
  child_results r(k);
  for (int i = 0; i < k; ++i)
    uts_dist_queue->put(uts_task_mpi, uts_mpi_input{s, i, height + 1}, r[i]);
  uts_dist_queue->wait();
  return r.node_total();
}

void uts_seed_task_mpi(const uts_seed_input& in) {
  const state s = uts_seed_node(in);
  const int k = uts_seed_visit(s, in.height);
  for (int i = 0; i < k; ++i)
    uts_dist_queue->put(uts_seed_task_mpi, uts_seed_input{s, i, in.height + 1});
}

#endif

// Through task assemblies, as seed 003's UTS (§5.1, Fig. 3 and 5): the children of a node are
// one assembly of width min(tao_width, k), whose worker `index` searches children index,
// index + width, ... (a table of one step, so each worker enters and leaves as it pleases unless
// tao_entry=sync); a searched child with children of its own makes the next assembly, queued in
// one task group for the whole search. Counts go to per-worker slots, which only that worker's
// members write.
struct tao_search {
  const tree_params& t;
  int width;
  locus::assembly_entry entry;
  std::vector<uts_tally> per_worker;
  locus::task_group all;
};

class uts_children final : public locus::assembly {
 public:
  uts_children(tao_search& s, const state& parent, int k, int height)
      : assembly(std::min(s.width, k), s.entry), s_(s), parent_(parent), k_(k), height_(height) {}

  void execute(int index) override {
    counts& mine = s_.per_worker[static_cast<std::size_t>(locus::this_worker())].c;
    for (int i = index; i < k_; i += width()) {
      const state child = uts::child_state(parent_, i);
      const int k = uts::num_children(s_.t, child, height_ + 1);
      mine.count_node(k, height_ + 1);
      if (k > 0)
        locus::run_assembly(s_.all, std::make_unique<uts_children>(s_, child, k, height_ + 1));
    }
  }

 private:
  tao_search& s_;
  state parent_;
  int k_, height_;
};

counts search_tao(const tree_params& t, const state& root, int width, bool synchronous) {
  tao_search s{
      t,
      std::min(width, locus::num_workers()),
      synchronous ? locus::assembly_entry::synchronous : locus::assembly_entry::asynchronous,
      std::vector<uts_tally>(static_cast<std::size_t>(locus::num_workers())),
      {}};
  const int k = uts::num_children(t, root, 0);
  if (k <= 0) return {1, 1, 0};
  locus::run_assembly(s.all, std::make_unique<uts_children>(s, root, k, 0));
  s.all.wait();
  counts total{1, 0, 0};
  for (const auto& w : s.per_worker) total += w.c;
  return total;
}

#if LOCUS_BENCH_PEERS

counts search_tbb(const tree_params& t, const state& s, int height) {
  const int k = uts::num_children(t, s, height);
  if (k <= 0) return {1, 1, height};
  child_results r(k);
  tbb::task_group tg;
  for (int i = 0; i < k - 1; ++i) {
    tg.run([&t, &s, &r, i, height] { r[i] = search_tbb(t, uts::child_state(s, i), height + 1); });
  }
  r[k - 1] = search_tbb(t, uts::child_state(s, k - 1), height + 1);
  tg.wait();
  return r.node_total();
}

counts search_omp(const tree_params* t, const state* s, int height) {
  const int k = uts::num_children(*t, *s, height);
  if (k <= 0) return {1, 1, height};
  child_results r(k);
  child_results* rp = &r;
  for (int i = 0; i < k - 1; ++i) {
#pragma omp task default(none) firstprivate(t, s, rp, i, height)
    {
      const state child = uts::child_state(*s, i);
      (*rp)[i] = search_omp(t, &child, height + 1);
    }
  }
  const state last = uts::child_state(*s, k - 1);
  r[k - 1] = search_omp(t, &last, height + 1);
#pragma omp taskwait
  return r.node_total();
}

#endif

class uts_instance final : public instance {
 public:
  uts_instance(tree_params t, counts expected, std::string source, int tao_width,
               bool tao_synchronous, bool taskq_seed_form)
      : tao_width_(tao_width),
        tao_synchronous_(tao_synchronous),
        taskq_seed_form_(taskq_seed_form),
        t_(t),
        root_(uts::root_state(t.root_seed)),
        expected_(expected),
        source_(std::move(source)) {}

  void reset() override {
    result_.reset();
    elsewhere_ = false;
  }

  void run(const run_context& ctx) override {
    switch (ctx.which) {
      case impl::serial:
        result_ = uts::search_serial(t_, root_, 0);
        break;
      case impl::locus:
        result_ = search_locus(t_, root_, 0);
        break;
      case impl::taskq:
        if (taskq_seed_form_) {
          std::vector<uts_tally> tallies(static_cast<std::size_t>(locus::num_workers()));
          uts_seed_tree = &t_;
          uts_seed_tallies = &tallies;
          uts_seed_queue = &seed_queue_;
          seed_queue_.put(uts_seed_task, uts_seed_input{root_, -1, 0});
          seed_queue_.wait();
          result_ = sum_tallies(tallies);
        } else {
          uts_queue = &queue_;
          result_ = search_taskq(t_, root_, 0);
        }
        break;
      case impl::tao:
        result_ = search_tao(t_, root_, tao_width_, tao_synchronous_);
        break;
#if LOCUS_BENCH_MPI
      case impl::taskq_mpi: {
        // A queue per form (collective, made at its first run): a queue with output-less
        // functions has a thief's request wait for the victim's puts to fill its pool.
        auto& dist = taskq_seed_form_ ? dist_seed_ : dist_join_;
        if (!dist) {
          dist = taskq_seed_form_ ? std::make_unique<locus::dist_taskq>(
                                        std::initializer_list<locus::taskq_function>{
                                            locus::task_function(uts_seed_task_mpi)})
                                  : std::make_unique<locus::dist_taskq>(
                                        std::initializer_list<locus::taskq_function>{
                                            locus::task_function(uts_task_mpi)});
        }
        dist_ = dist.get();
        uts_dist_tree = &t_;
        uts_dist_queue = dist_;
        dist_->reset_stats();
        // The root is a task: a wait at the top level is collective, so rank 0 must not search
        // (and wait) there itself.
        counts c{};
        if (taskq_seed_form_) {
          std::vector<uts_tally> tallies(static_cast<std::size_t>(locus::num_workers()));
          uts_seed_tree = &t_;
          uts_seed_tallies = &tallies;
          if (dist_->rank() == 0) dist_->put(uts_seed_task_mpi, uts_seed_input{root_, -1, 0});
          dist_->wait();
          c = sum_tallies(dist_->gather(uts_tally{sum_tallies(tallies)}));
        } else {
          if (dist_->rank() == 0) dist_->put(uts_task_mpi, uts_mpi_input{root_, -1, 0}, c);
          dist_->wait();
        }
        if (dist_->rank() == 0) {
          result_ = c;
        } else {
          elsewhere_ = true;
        }
        break;
      }
#endif
#if LOCUS_BENCH_PEERS
      case impl::tbb:
        result_ = search_tbb(t_, root_, 0);
        break;
      case impl::omp:
        result_ = search_omp(&t_, &root_, 0);
        break;
#endif
      default:
        break;
    }
  }

  verdict verify() const override {
    verdict v;
    if (elsewhere_) return {true, "on rank 0", ""};
    if (!result_) {
      v.message = "no result";
      return v;
    }
    v.result = uts::to_string(*result_);
    v.ok = *result_ == expected_;
    if (!v.ok) v.message = "expected " + uts::to_string(expected_) + " (" + source_ + ")";
    return v;
  }

#if LOCUS_BENCH_MPI
  std::string dist_stats_json() override {
    return dist_ != nullptr ? locus_bench::dist_stats_json(*dist_) : std::string();
  }
#endif

 private:
  int tao_width_;
  bool tao_synchronous_;
  bool taskq_seed_form_;
  tree_params t_;
  state root_;
  counts expected_;
  std::string source_;
  std::optional<counts> result_;
  bool elsewhere_ = false;  // a taskq-mpi run on a rank other than 0: the result is there
  locus::taskq queue_{locus::task_function(uts_task)};
  locus::taskq seed_queue_{locus::task_function(uts_seed_task)};
#if LOCUS_BENCH_MPI
  std::unique_ptr<locus::dist_taskq> dist_join_, dist_seed_;  // collective: made at first use
  locus::dist_taskq* dist_ = nullptr;                         // the last run's
#endif
};

const char* const custom_keys[] = {"type", "b0", "d", "shape", "q", "m", "r", "f"};

std::string type_name(uts::tree_type t) {
  switch (t) {
    case uts::tree_type::binomial:
      return "bin";
    case uts::tree_type::geometric:
      return "geo";
    case uts::tree_type::hybrid:
      return "hybrid";
  }
  return "?";
}

std::string shape_name(uts::geo_shape s) {
  switch (s) {
    case uts::geo_shape::linear:
      return "linear";
    case uts::geo_shape::expdec:
      return "expdec";
    case uts::geo_shape::cyclic:
      return "cyclic";
    case uts::geo_shape::fixed:
      return "fixed";
  }
  return "?";
}

// The shortest text that reads back as v.
std::string number_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Drops the keys that do not apply to a tree of t's type.
void drop_unused(param_values& p, const tree_params& t) {
  if (t.type == uts::tree_type::binomial) {
    p.erase("shape");
    p.erase("d");
  }
  if (t.type == uts::tree_type::geometric) {
    p.erase("q");
    p.erase("m");
  }
  if (t.type != uts::tree_type::hybrid) p.erase("f");
}

// Records a named tree's UTS parameters in params, so that the output says what ran.
void record_tree(param_values& p, const tree_params& t) {
  using k = param_spec::kind;
  p.set("type", type_name(t.type), k::choice);
  p.set("b0", number_text(t.b0), k::real);
  p.set("shape", shape_name(t.shape), k::choice);
  p.set("d", std::to_string(t.gen_mx), k::integer);
  p.set("q", number_text(t.q), k::real);
  p.set("m", std::to_string(t.m), k::integer);
  p.set("f", number_text(t.shift_depth), k::real);
  p.set("r", std::to_string(t.root_seed), k::integer);
  drop_unused(p, t);
}

void check_uts(const param_values& p) {
  const std::string tree = p.text("tree");
  if (tree != "custom") {
    for (const char* key : custom_keys) {
      if (p.user_set(key)) {
        throw usage_error(std::string("--set uts.") + key +
                          ": applies only to tree=custom (tree=" + tree + " fixes its parameters)");
      }
    }
    if (uts::find_tree(tree) == nullptr) {
      throw usage_error("--set uts.tree: unknown tree '" + tree + "'");
    }
    return;
  }
  const double qm = p.real("q") * static_cast<double>(p.integer("m"));
  if (p.text("type") != "geo" && qm >= 1.0) {
    throw usage_error("--set uts.q, uts.m: q * m = " + number_text(qm) +
                      " must be below 1: the expected size of a binomial subtree, 1 / (1 - q m), "
                      "is infinite otherwise");
  }
}

std::unique_ptr<instance> prepare_uts(param_values& p) {
  check_uts(p);
  const int tao_width = static_cast<int>(p.integer("tao_width"));
  const bool tao_synchronous = p.text("tao_entry") == "sync";
  const bool taskq_seed_form = p.text("taskq_form") == "seed";
  const std::string tree = p.text("tree");
  if (tree != "custom") {
    const uts::named_tree* named = uts::find_tree(tree);
    record_tree(p, named->params);
    return std::make_unique<uts_instance>(named->params, named->expected,
                                          std::string(named->source), tao_width, tao_synchronous,
                                          taskq_seed_form);
  }

  tree_params t;
  const std::string type = p.text("type");
  t.type = type == "bin"   ? uts::tree_type::binomial
           : type == "geo" ? uts::tree_type::geometric
                           : uts::tree_type::hybrid;
  const std::string shape = p.text("shape");
  t.shape = shape == "linear"   ? uts::geo_shape::linear
            : shape == "expdec" ? uts::geo_shape::expdec
            : shape == "cyclic" ? uts::geo_shape::cyclic
                                : uts::geo_shape::fixed;
  t.b0 = p.real("b0");
  t.gen_mx = static_cast<int>(p.integer("d"));
  t.q = p.real("q");
  t.m = static_cast<int>(p.integer("m"));
  t.root_seed = static_cast<int>(p.integer("r"));
  t.shift_depth = p.real("f");
  drop_unused(p, t);
  // The serial search is the reference for a tree nobody published.
  const counts reference = uts::search_serial(t);
  return std::make_unique<uts_instance>(t, reference,
                                        "custom tree: reference from the serial search", tao_width,
                                        tao_synchronous, taskq_seed_form);
}

}  // namespace

benchmark make_uts_benchmark() {
  std::vector<std::string> trees;
  for (const auto& t : uts::named_trees()) trees.emplace_back(t.name);
  trees.emplace_back("custom");
  const std::string custom = " (tree=custom only; UTS default)";

  benchmark b;
  b.name = "uts";
  b.description =
      "Unbalanced Tree Search 2.1 with the SHA-1 splittable RNG: count a random tree's nodes, "
      "a task per child. Named trees verify against published counts (T1..T5, T1L, T2L, T3L, "
      "T1XL from UTS's sample_trees.sh; S1 and S3 are small trees of this harness), custom ones "
      "against the serial search.";
  b.params = {
      param_spec::choice("tree",
                         "T1 4.1M nodes (geometric, fixed), T2 (geometric, cyclic), T3 4.1M "
                         "(binomial, depth 1572), T4 (hybrid), T5 (geometric, linear), T1L 102M, "
                         "T2L 97M, T3L 111M (depth 17844), T1XL 1.6G; S1 257K (T1 cut at depth "
                         "8), S3 248K (a subtree of T3); custom: the keys below",
                         {"S1", "T1", "T1L"}, trees),
      param_spec::choice("type", "tree type: bin, geo or hybrid (-t)" + custom,
                         {"geo", "geo", "geo"}, {"bin", "geo", "hybrid"}),
      param_spec::real("b0", "root branching factor (-b)" + custom, {"4", "4", "4"}, 0, 1e6),
      param_spec::integer("d", "geometric depth parameter gen_mx (-d)" + custom, {"6", "6", "6"}, 1,
                          1000000),
      param_spec::choice("shape", "geometric shape function (-a)" + custom,
                         {"linear", "linear", "linear"}, {"linear", "expdec", "cyclic", "fixed"}),
      param_spec::real("q", "binomial probability of a non-leaf (-q)" + custom,
                       {"0.234375", "0.234375", "0.234375"}, 0, 1),
      param_spec::integer("m", "binomial children of a non-leaf (-m)" + custom, {"4", "4", "4"}, 0,
                          100000),
      param_spec::integer("r", "root seed (-r)" + custom, {"0", "0", "0"}, 0, 2147483647),
      param_spec::real("f", "hybrid: geometric above depth f*d, binomial below (-f)" + custom,
                       {"0.5", "0.5", "0.5"}, 0, 1),
  };
  b.impls = {impl::serial, impl::locus, impl::tbb, impl::omp};
  b.params.push_back(param_spec::integer(
      "tao_width",
      "tao only: workers per assembly of a node's children (seed 003 Fig. 6; at most the "
      "runtime's)",
      {"2", "2", "2"}, 1, 1024));
  b.params.push_back(param_spec::choice(
      "tao_entry",
      "tao only: async (workers enter an assembly as they reach it) or sync (all together)",
      {"async", "async", "async"}, {"async", "sync"}));
  b.params.push_back(param_spec::choice(
      "taskq_form",
      "taskq and taskq-mpi only: seed (HotSLAW's UTS, seed 004 Table 1: a task puts its "
      "children and does not wait, counts kept per worker) or join (a task waits for its "
      "children and returns its subtree's counts as its output)",
      {"seed", "seed", "seed"}, {"seed", "join"}));
  b.on_request = {impl::taskq, impl::taskq_mpi, impl::tao};
  b.check = check_uts;
  b.prepare = prepare_uts;
  return b;
}

}  // namespace locus_bench
