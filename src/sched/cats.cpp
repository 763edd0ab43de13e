// cats: Cache Aware Task-Stealing (seed 002: Chen, Guo, Huang, ICS 2012; §3, Fig. 3-6, Eq. 1).
// The first iteration of the program (the first root, or the code up to the first
// locus::next_iteration) runs as random work stealing with parent-first spawns while every task's
// footprint is profiled (cats_profile.hpp); its SOIDs split the task tree at the shared cache of a
// package. From the next iteration on:
// - tasks above the cut (inter) and the leaf inter-socket tasks that root the subtrees below it
//   are spawned parent-first into their package's inter-socket pool, and only the package's head
//   core (its first worker) takes them, stealing from other packages' pools when its own is empty
//   (§3.3);
// - a leaf inter-socket task's subtree is spawned child-first and stolen only inside the package
//   (its descendants need no hooks at all), and a package runs one such subtree at a time;
// - a free worker steals from its package's workers; only a head looks at the pools (§3.3).
// Where the program gives no footprint (no PMU, no size_hint, nothing declared to the locality
// model), or the profile finds it CPU-bound (§3.5), cats runs as ws and its statistics say why.
//
// Choices where the paper leaves details open, or this machine forces one:
// - The profile takes, in order, misses (a test's injected ones, else the private L2 misses each
//   worker counts for its own thread with perf_event_open, the paper's PMC), the size hints of
//   the groups a task creates, or the bytes it declares to the locality model
//   (LOCUS_CATS_SOURCE); this machine has no PMU and uses the hints. CPU-bound detection (CMPI,
//   §3.5) counts instructions in the misses' PMU group, misses normalised by one level's
//   penalty (only private L2 misses are counted); most tasks below LOCUS_CATS_CMPI make the
//   program CPU-bound. Without instruction counts the profile's bytes per nanosecond of task
//   time stand in (LOCUS_CATS_BOUND).
// - A task whose id the profile does not know, spawned above the cut, is taken for a
//   leaf inter-socket task: its subtree runs in one package, and the program stays correct
//   whatever shape its later iterations take. A root in which most such tasks had unknown ids
//   makes the next root a profiled one again (so does runtime::relearn, for another program).
// - A leaf inter-socket task goes to the pool of the package that ran the subtree of its id in
//   the previous iteration (the first time, the package of its place hint if it has one, else
//   the package with the fewest subtrees queued or running; the paper pushes every one to its
//   spawner's package), so that a package finds the
//   data of its subtree in its cache again: otherwise which package steals which subtree changes
//   from one iteration to the next, and an iterative program's halves trade caches. Another head
//   steals it only while that package runs another subtree (the paper's heads steal any
//   inter-socket task): on an idle package the head, woken by the push, takes it within a wake-up.
// - A task of the inter-socket tier goes on where it began after each join (a head core): a
//   waiter resumed by its last child elsewhere, or a join completed by a thief, moves back.
//   Inter-socket code then runs on head cores only, and a time loop stays where it is.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.hpp"
#include "prof/locality_hooks.hpp"
#include "prof/perf_event.hpp"
#include "prof/pmu_events.hpp"
#include "sched/cats_audit.hpp"
#include "sched/cats_profile.hpp"
#include "sched/context.hpp"
#include "sched/policy.hpp"
#include "sched/spin_lock.hpp"
#include "topology/topology.hpp"

namespace locus::detail {
namespace {

// The runtime checked the variable when it started; here it decides whether the profile's
// verdict is printed with the configuration.
bool prints_config() {
  const char* v = config::env_value("LOCUS_PRINT_CONFIG");
  return v != nullptr && config::parse_bool("LOCUS_PRINT_CONFIG", v);
}

using cats::profile;
using cats::profile_node;
using cats::source;
using cats::tier;

std::atomic<cats_observer> observer{nullptr};
std::atomic<cats_miss_source> miss_source{nullptr};
std::atomic<cats_instruction_source> instruction_source{nullptr};
std::atomic<const prof::event_spec*> pmu_event{nullptr};

void tell(cats_event::what kind, int worker, int package, std::uint64_t path, tier t) {
  if (cats_observer o = observer.load(std::memory_order_relaxed)) {
    o({kind, worker, package, path, t});
  }
}

// The per-task state (policy_slot). `id` is §3.2.2's identifier: the i-th child of a task with
// id S has id S.i (hashed), i counting every child the task spawned, in every group, since it
// began or since the iteration it drives last ended (locus::next_iteration). The core's spawn
// path counts children per task group, so that a task's nested groups (a recursion that runs
// its last part inline, as split_rows does) give their first children the same path.
struct task_state {
  profile_node* node;  // profiling: where the task's bytes go (its own node or an ancestor's)
  std::uint64_t id;
  std::int32_t package;   // a leaf inter-socket task: the package whose subtree slot it holds
  std::int32_t home;      // a task of the inter-socket tier: the worker it began on
  std::uint32_t spawned;  // children given an id so far
  tier t;
  bool own_node;  // `node` is the task's own
};
constexpr std::uint64_t root_id = root_path;
inline std::uint64_t child_id(task_state& parent) noexcept {
  return parent.id * 0x9E3779B97F4A7C15ULL + ++parent.spawned;
}
task_state& state_of(task_frame& f) noexcept {
  return f.slot.as<task_state>();
}

enum class mode : int { fresh, profiling, scheduled, as_ws };

// A package: its workers [first, last) (first is the head core), its shared cache, its pools.
struct alignas(64) package_state {
  int first = 0, last = 0;
  std::uint64_t cache_bytes = 0;
  spin_lock lock;
  std::deque<work_item*> inter, leaves;  // newest at the back
  std::atomic<int> inter_count{0}, leaf_count{0};
  std::atomic<int> subtrees{0};  // leaf inter-socket tasks running here (at most one)
  std::atomic<std::uint64_t> subtrees_run{0};
};

struct alignas(64) worker_state {
  std::uint64_t last_bytes = 0, last_ns = 0;
  bool metering = false;
  std::atomic<std::uint64_t> work_ns{0};
  // This worker's PMU counter of private last-level misses, opened on its own thread the first
  // time it measures.
  bool pmu_tried = false;
  prof::event_fd pmu;
  prof::event_fd pmu_instructions;  // in the misses' group, where the PMU counts them
  prof::group_sample sample;
  std::uint64_t last_count = 0;
  std::uint64_t instructions = 0, segment_instructions = 0;  // now, and at the segment's start
};

// What the profiled iteration measures per task: nothing (sizes from hints only), misses a test
// injects, PMU misses, or the bytes tasks declare.
enum class meter_kind : int { none, injected, pmu, declared };

constexpr std::size_t default_profile_tasks = std::size_t{1} << 18;
// Below this many bytes per nanosecond of task time the profiled iteration counts as CPU-bound
// where no instructions are counted. Heat, SOR and GE touch 5-20 here; FFT about 1; mandelbrot,
// nqueens, knapsack nothing.
constexpr double default_cpu_bound_bytes_per_ns = 2.0;
// A task with fewer private-cache misses per instruction is CPU-bound (§3.5; the paper gives no
// value): a stencil streaming doubles misses about once per 40-80 instructions, a search or a
// fractal about once per 100,000.
constexpr double default_cpu_bound_cmpi = 0.002;

class cats_policy final : public policy_base<cats_policy> {
 public:
  cats_policy() = default;
  cats_policy(const cats_policy&) = delete;
  cats_policy& operator=(const cats_policy&) = delete;
  // A runtime that ends in its profiled iteration stops metering.
  ~cats_policy() override {
    if (meter_.exchange(meter_kind::none, std::memory_order_relaxed) == meter_kind::declared) {
      prof::declared_bytes_meter(false);
    }
  }

  void attach(const topo::topology& topology, int workers) override {
    if (const char* v = config::env_value("LOCUS_CATS_SOURCE")) {
      source_choice_ =
          config::parse_choice("LOCUS_CATS_SOURCE", v, {"auto", "misses", "hints", "declared"});
    }
    if (const char* v = config::env_value("LOCUS_CATS_BOUND")) {
      bound_choice_ = config::parse_choice("LOCUS_CATS_BOUND", v, {"auto", "memory", "cpu"});
    }
    std::optional<std::uint64_t> cache;
    if (const char* v = config::env_value("LOCUS_CATS_CACHE")) {
      cache = config::parse_bytes_in("LOCUS_CATS_CACHE", v, 1, std::size_t{1} << 40);
    }
    if (const char* v = config::env_value("LOCUS_CATS_CMPI")) {
      cmpi_threshold_ = config::parse_positive_real("LOCUS_CATS_CMPI", v);
    }
    if (const char* v = config::env_value("LOCUS_CATS_PROFILE_TASKS")) {
      profile_tasks_ =
          static_cast<std::size_t>(config::parse_int_in("LOCUS_CATS_PROFILE_TASKS", v, 1, 1 << 26));
    }
    build_packages(topology, workers, cache);
    package_of_place_.assign(static_cast<std::size_t>(topology.num_numa()), 0);
    for (int w = workers - 1; w >= 0; --w) {
      package_of_place_[static_cast<std::size_t>(topology.numa_of(w))] = package_of(w);
    }
    workers_ = std::vector<worker_state>(static_cast<std::size_t>(workers));
  }

  std::vector<policy_setting> settings() const override {
    std::string caches;
    for (const auto& p : packages_) {
      caches += (caches.empty() ? "" : ",") + std::to_string(p->cache_bytes);
    }
    return {{"LOCUS_CATS_SOURCE", source_choice_},
            {"LOCUS_CATS_BOUND", bound_choice_},
            {"LOCUS_CATS_CMPI", std::to_string(cmpi_threshold_)},
            {"LOCUS_CATS_CACHE",
             caches + " bytes per package (" + std::to_string(packages_.size()) + " packages)"},
            {"LOCUS_CATS_PROFILE_TASKS", std::to_string(profile_tasks_)}};
  }

  std::vector<policy_figure> figures() const override {
    const std::lock_guard hold(report_lock_);
    std::uint64_t subtrees = 0;
    for (const auto& p : packages_) subtrees += p->subtrees_run.load(std::memory_order_relaxed);
    const mode m = mode_.load(std::memory_order_acquire);
    return {
        {"scheduled", m == mode::scheduled ? 1.0 : 0.0},
        {"as_ws", m == mode::as_ws ? 1.0 : 0.0},
        {"source", static_cast<double>(report_.used)},
        {"cpu_bound", report_.cpu_bound ? 1.0 : 0.0},
        {"cmpi", report_.vote.cmpi()},
        {"cmpi_tasks", static_cast<double>(report_.vote.tasks)},
        {"cpu_bound_tasks", static_cast<double>(report_.vote.cpu_bound)},
        {"profiled_tasks", static_cast<double>(report_.counts.nodes)},
        {"profile_ms", static_cast<double>(report_.profile_ns) / 1e6},
        {"bytes_per_ns", report_.bytes_per_ns},
        {"root_bytes", static_cast<double>(report_.root_bytes)},
        {"cache_bytes", static_cast<double>(packages_.front()->cache_bytes)},
        {"inter_tasks", static_cast<double>(report_.counts.inter)},
        {"leaf_inter_tasks", static_cast<double>(report_.counts.leaves)},
        {"subtrees_run", static_cast<double>(subtrees)},
        {"unknown_tasks", static_cast<double>(unknown_.load(std::memory_order_relaxed))},
        {"profiles", static_cast<double>(profiles_.load(std::memory_order_relaxed))},
        {"pmu_workers", static_cast<double>(report_.pmu_workers)},
    };
  }

  // The root starts on a head core.
  std::optional<int> root_worker() const noexcept override { return 0; }
  // The profile is of one program: its iterations are one root after another.
  bool concurrent_roots() const noexcept override { return false; }

  void task_begin(context& ctx) override {
    task_frame& f = ctx.current();
    task_state& t = state_of(f);
    if (f.path() == root_path && t.id == 0) begin_root(ctx, f);
    switch (mode_.load(std::memory_order_acquire)) {
      case mode::profiling:
        close_segment(ctx, t);
        return;
      case mode::scheduled:
        if (t.t == tier::inter || t.t == tier::leaf) {
          t.home = ctx.self();
          tell(cats_event::what::task_begin, ctx.self(), package_of(ctx.self()), f.path(), t.t);
        }
        if (t.t == tier::leaf) begin_subtree(ctx, f);
        return;
      default:
        return;
    }
  }

  void task_end(context& ctx) override {
    task_frame& f = ctx.current();
    task_state& t = state_of(f);
    if (t.t == tier::leaf && t.package >= 0) end_subtree(ctx, f);
    if (f.path() == root_path && t.id == root_id) end_root();
    if (mode_.load(std::memory_order_acquire) != mode::profiling || t.node == nullptr) return;
    close_segment(ctx, t);
    if (cats_miss_source m = miss_source_used_) {
      t.node->own.fetch_add(m(f.path()) * cats_line_bytes, std::memory_order_relaxed);
    }
    if (cats_instruction_source i = instruction_source_used_) {
      t.node->instructions.fetch_add(i(f.path()), std::memory_order_relaxed);
    }
    if (t.own_node) profile::end(*t.node);
    if (t.node->parent == nullptr && t.own_node) finish_profiling(ctx);
  }

  // Another program from the next root on: it is profiled again.
  void relearn() override {
    if (mode_.load(std::memory_order_acquire) != mode::profiling) {
      mode_.store(mode::fresh, std::memory_order_release);
    }
  }

  void iteration_end(context& ctx) override {
    task_frame& f = ctx.current();
    // The next iteration's children get the ids of this one's.
    state_of(f).spawned = 0;
    if (mode_.load(std::memory_order_acquire) != mode::profiling) return;
    close_segment(ctx, state_of(f));
    finish_profiling(ctx);
    // The task driving the loop goes on in the scheduled iterations with its learned tier.
    if (mode_.load(std::memory_order_relaxed) == mode::scheduled) {
      task_state& t = state_of(f);
      t.node = nullptr;
      t.own_node = false;
      t.t = known_tier(t.id);
      if (t.t == tier::unknown) t.t = tier::leaf;
      t.home = package(package_of(ctx.self())).first;
      if (t.t == tier::leaf) begin_subtree(ctx, f);
    } else {
      f.children_unhooked = true;
    }
  }

  spawn_decision on_spawn(context& ctx, spawn_request& spawn) override {
    task_frame& parent = ctx.current();
    task_state& p = state_of(parent);
    task_state& c = state_of(spawn.child);
    switch (mode_.load(std::memory_order_acquire)) {
      case mode::profiling: {
        close_segment(ctx, p);
        if (p.own_node && p.node->hint == 0 && spawn.group.size_bytes != 0) {
          p.node->hint = spawn.group.size_bytes;
        }
        const std::uint64_t id = child_id(p);
        profile_node* mine = p.node != nullptr ? profile_->add(ctx.self(), id, p.node) : nullptr;
        c = {mine != nullptr ? mine : p.node, id, -1, -1, 0, tier::unknown, mine != nullptr};
        // §3.4: parent-first while profiling.
        return spawn_decision::parent_first;
      }
      case mode::scheduled: {
        if (p.t == tier::leaf) {
          // The subtree below a leaf inter-socket task: child-first, stolen inside the package,
          // with no hooks from its children down.
          c = {nullptr, 0, -1, -1, 0, tier::intra, false};
          spawn.child.children_unhooked = true;
          return spawn.queued ? spawn_decision::parent_first : spawn_decision::child_first;
        }
        const std::uint64_t id = child_id(p);
        c = {nullptr, id, -1, -1, 0, known_tier(id), false};
        if (c.t != tier::inter) c.t = tier::leaf;
        return spawn_decision::route;
      }
      default:
        return spawn.queued ? spawn_decision::parent_first : spawn_decision::child_first;
    }
  }

  // The creator's own work before its wait is its own, not that of the child its wait may run.
  void group_wait(context& ctx, group_state& /*group*/) override {
    if (mode_.load(std::memory_order_acquire) == mode::profiling) {
      close_segment(ctx, state_of(ctx.current()));
    }
  }

  // A task of the inter-socket tier goes on where it began (a head core) after each of its
  // joins, as code that spawns work step after step (a time loop) would on one core: a thief
  // that completed the join would otherwise take the loop, and its data, to another worker, and
  // a spawner whose order of spawns depends on where it runs would change its children's ids.
  std::optional<int> group_end(context& ctx, group_state& /*group*/) override {
    const int target = home_of(state_of(ctx.current()), ctx.self());
    if (target >= 0 && mode_.load(std::memory_order_relaxed) == mode::scheduled) return target;
    return std::nullopt;
  }

  bool route(context& ctx, work_item& item) override {
    if (mode_.load(std::memory_order_acquire) != mode::scheduled) return false;
    const int self = ctx.self();
    package_state& home = package(package_of(self));
    if (item.kind == item_kind::task) {
      task_frame& f = context::record_of(item);
      const bool leaf = state_of(f).t == tier::leaf;
      package_state& to =
          leaf ? package(package_for_subtree(state_of(f).id, f.place(), package_of(self))) : home;
      {
        const std::lock_guard hold(to.lock);
        (leaf ? to.leaves : to.inter).push_back(&item);
        (leaf ? to.leaf_count : to.inter_count).fetch_add(1, std::memory_order_seq_cst);
      }
      ctx.posted(to.first);
      for (const auto& p : packages_) {
        if (p->first != to.first) ctx.wake(p->first);
      }
      return true;
    }
    if (item.kind != item_kind::resume) return false;
    // A waiter whose last child ended elsewhere, or a task its group_end moves.
    const int target = home_of(state_of(context::record_of(item)), self);
    if (target < 0) return false;
    ctx.deliver(target, &item, lane::first);
    return true;
  }

  bool has_work(const context& ctx) const noexcept override {
    if (mode_.load(std::memory_order_acquire) != mode::scheduled) return false;
    const int me = package_of(ctx.self());
    const package_state& mine = package(me);
    if (ctx.self() != mine.first) return false;
    const bool may_take_leaf = mine.subtrees.load(std::memory_order_seq_cst) == 0;
    for (const auto& p : packages_) {
      if (p->inter_count.load(std::memory_order_seq_cst) > 0) return true;
      const bool leaf_here =
          may_take_leaf && (p.get() == &mine || p->subtrees.load(std::memory_order_seq_cst) != 0);
      if (leaf_here && p->leaf_count.load(std::memory_order_seq_cst) > 0) return true;
    }
    return false;
  }

  work_item* find_work(context& ctx) override {
    const mode m = mode_.load(std::memory_order_acquire);
    // Profiling: time spent looking for work belongs to no task.
    if (m == mode::profiling) start_segment(ctx);
    work_item* item = m == mode::scheduled ? find_bi_tier(ctx) : steal_anywhere(ctx);
    if (item != nullptr && m == mode::profiling) start_segment(ctx);
    return item;
  }

 private:
  struct report {
    source used = source::none;
    bool cpu_bound = false;
    cats::partition_counts counts;
    std::uint64_t profile_ns = 0;
    double bytes_per_ns = 0;
    std::uint64_t root_bytes = 0;
    int pmu_workers = 0;
    cats::cmpi_vote vote;
  };

  void build_packages(const topo::topology& t, int workers, std::optional<std::uint64_t> cache) {
    packages_.clear();
    std::vector<std::pair<int, int>> spans;
    for (const topo::node& n : t.nodes()) {
      if (n.kind != topo::node_kind::package) continue;
      const int first = std::max(0, n.first_leaf), last = std::min(workers, n.last_leaf);
      if (first < last) spans.emplace_back(first, last);
    }
    if (spans.empty()) spans.emplace_back(0, workers);
    std::sort(spans.begin(), spans.end());
    package_of_.assign(static_cast<std::size_t>(workers), 0);
    for (const auto& [first, last] : spans) {
      auto p = std::make_unique<package_state>();
      p->first = first;
      p->last = last;
      // The package's shared cache: the largest one over all of its workers.
      for (const topo::node& n : t.nodes()) {
        if (n.kind == topo::node_kind::cache && n.first_leaf <= first &&
            std::min(workers, n.last_leaf) >= last && (last - first > 1 || workers == 1)) {
          p->cache_bytes = std::max<std::uint64_t>(p->cache_bytes, n.cache_bytes);
        }
      }
      if (cache) p->cache_bytes = *cache;
      for (int w = first; w < last; ++w) {
        package_of_[static_cast<std::size_t>(w)] = static_cast<int>(packages_.size());
      }
      packages_.push_back(std::move(p));
    }
  }

  int package_of(int worker) const noexcept {
    return package_of_[static_cast<std::size_t>(worker)];
  }
  package_state& package(int i) const noexcept { return *packages_[static_cast<std::size_t>(i)]; }
  worker_state& here(const context& ctx) noexcept {
    return workers_[static_cast<std::size_t>(ctx.self())];
  }

  // Where a task of the inter-socket tier resumes if it is not there (-1: here).
  static int home_of(const task_state& t, int self) noexcept {
    const bool upper = t.t == tier::inter || t.t == tier::leaf;
    return upper && t.home >= 0 && t.home != self ? t.home : -1;
  }

  // The package that last ran the subtree of `id`; the first time, the package of its place
  // hint (locus::place), else the one with the fewest subtrees queued or running, `spawner`'s on
  // a tie.
  int package_for_subtree(std::uint64_t id, int place, int spawner) {
    {
      const std::lock_guard hold(placement_lock_);
      const auto it = last_package_.find(id);
      if (it != last_package_.end()) return it->second;
    }
    if (place >= 0 && static_cast<std::size_t>(place) < package_of_place_.size()) {
      return package_of_place_[static_cast<std::size_t>(place)];
    }
    const int n = static_cast<int>(packages_.size());
    int best = spawner, least = INT_MAX;
    for (int i = 0; i < n; ++i) {
      const int k = (spawner + i) % n;
      const package_state& p = package(k);
      const int load =
          p.leaf_count.load(std::memory_order_relaxed) + p.subtrees.load(std::memory_order_relaxed);
      if (load < least) {
        best = k;
        least = load;
      }
    }
    return best;
  }

  tier known_tier(std::uint64_t id) noexcept {
    const tier t = profile_->tier_of(id);
    looked_up_.fetch_add(1, std::memory_order_relaxed);
    if (t == tier::unknown) {
      unknown_.fetch_add(1, std::memory_order_relaxed);
      unknown_in_root_.fetch_add(1, std::memory_order_relaxed);
    }
    return t;
  }

  // A root ends after the profiled one: if most tasks it spawned above the cut had ids the
  // profile does not know, the program has changed its shape (or is another program), and the
  // next root is profiled again.
  void end_root() noexcept {
    if (mode_.load(std::memory_order_acquire) != mode::scheduled) return;
    const std::uint64_t looked = looked_up_.load(std::memory_order_relaxed);
    if (2 * unknown_in_root_.load(std::memory_order_relaxed) > looked) {
      mode_.store(mode::fresh, std::memory_order_release);
    }
  }

  // ---- the profiling iteration

  void begin_root(context& ctx, task_frame& f) {
    task_state& t = state_of(f);
    t.id = root_id;
    t.spawned = 0;
    t.package = -1;
    t.home = -1;
    mode m = mode_.load(std::memory_order_acquire);
    looked_up_.store(0, std::memory_order_relaxed);
    unknown_in_root_.store(0, std::memory_order_relaxed);
    if (m == mode::fresh) {
      profiles_.fetch_add(1, std::memory_order_relaxed);
      // No task of an earlier profile runs between roots.
      profile_ = std::make_unique<profile>(static_cast<int>(workers_.size()), profile_tasks_);
      miss_source_used_ = miss_source.load(std::memory_order_relaxed);
      instruction_source_used_ = instruction_source.load(std::memory_order_relaxed);
      start_meter(ctx);
      profile_began_ns_ = ctx.now_ns();
      for (auto& w : workers_) w.work_ns.store(0, std::memory_order_relaxed);
      mode_.store(mode::profiling, std::memory_order_release);
      t.node = profile_->add(ctx.self(), t.id, nullptr);
      t.own_node = t.node != nullptr;
      start_segment(ctx);
      return;
    }
    if (m == mode::scheduled) {
      t.t = known_tier(t.id);
      if (t.t == tier::unknown) t.t = tier::leaf;
      return;
    }
    if (m == mode::as_ws) f.children_unhooked = true;  // ws: no hooks below the root
  }

  // Misses from the PMU where this worker can count them (the first try opens its counter),
  // else the bytes tasks declare; a test's injected misses are added at each task's end.
  void start_meter(context& ctx) {
    meter_kind kind = meter_kind::declared;
    if (miss_source_used_ != nullptr) {
      kind = meter_kind::injected;
    } else if (source_choice_ == "auto" || source_choice_ == "misses") {
      pmu_events_.clear();
      instruction_events_.clear();
      for (const auto& r : prof::default_counters(prof::this_cpu())) {
        if (r.name == "l2_misses") pmu_events_ = r.candidates;
        if (r.name == "instructions") instruction_events_ = r.candidates;
      }
      if (const prof::event_spec* e = pmu_event.load(std::memory_order_relaxed)) {
        pmu_events_.assign(1, *e);
      }
      worker_state& w = here(ctx);
      w.pmu_tried = false;
      if (open_pmu(w)) kind = meter_kind::pmu;
    }
    if (kind == meter_kind::declared) prof::declared_bytes_meter(true);
    meter_.store(kind, std::memory_order_relaxed);
    pmu_workers_.store(kind == meter_kind::pmu ? 1 : 0, std::memory_order_relaxed);
  }

  bool open_pmu(worker_state& w) noexcept {
    w.pmu_tried = true;
    if (w.pmu.valid()) return true;
    for (const prof::event_spec& spec : pmu_events_) {
      const int fd = prof::open_for_this_thread(spec, -1);
      if (fd < 0) continue;
      prof::event_fd counter(fd);
      prof::event_fd instructions;
      for (const prof::event_spec& i : instruction_events_) {
        instructions = prof::event_fd(prof::open_for_this_thread(i, fd));
        if (instructions.valid()) break;
      }
      if (!prof::group_reset(fd) || !prof::group_enable(fd)) continue;
      w.pmu = std::move(counter);
      w.pmu_instructions = std::move(instructions);
      return true;
    }
    return false;
  }

  std::uint64_t meter(worker_state& w) noexcept {
    switch (meter_.load(std::memory_order_relaxed)) {
      case meter_kind::declared:
        return prof::declared_bytes_here();
      case meter_kind::pmu:
        if (!w.pmu_tried && open_pmu(w)) pmu_workers_.fetch_add(1, std::memory_order_relaxed);
        if (w.pmu.valid() && prof::read_group(w.pmu.get(), w.sample) && !w.sample.values.empty()) {
          w.last_count = w.sample.values.front().second;
          if (w.sample.values.size() > 1) w.instructions = w.sample.values[1].second;
        }
        return w.last_count * cats_line_bytes;
      default:
        return 0;
    }
  }

  void start_segment(context& ctx) noexcept {
    worker_state& w = here(ctx);
    w.last_bytes = meter(w);
    w.segment_instructions = w.instructions;
    w.last_ns = ctx.now_ns();
    w.metering = true;
  }

  // The bytes and time since this worker's last hook belong to the task that reaches this one.
  void close_segment(context& ctx, task_state& t) noexcept {
    worker_state& w = here(ctx);
    const std::uint64_t bytes = meter(w), now = ctx.now_ns();
    if (w.metering) {
      w.work_ns.fetch_add(now - w.last_ns, std::memory_order_relaxed);
      if (t.node != nullptr && bytes > w.last_bytes) {
        t.node->own.fetch_add(bytes - w.last_bytes, std::memory_order_relaxed);
      }
      if (t.node != nullptr && w.instructions > w.segment_instructions) {
        t.node->instructions.fetch_add(w.instructions - w.segment_instructions,
                                       std::memory_order_relaxed);
      }
    }
    w.segment_instructions = w.instructions;
    w.last_bytes = bytes;
    w.last_ns = now;
    w.metering = true;
  }

  source choose_source(meter_kind kind) const {
    const bool injected = kind == meter_kind::injected || kind == meter_kind::pmu;
    const bool measured = profile_->any_measured();
    const bool hinted = profile_->any_hint();
    if (source_choice_ == "misses") return injected && measured ? source::misses : source::none;
    if (source_choice_ == "hints") return hinted ? source::hints : source::none;
    if (source_choice_ == "declared") {
      return !injected && measured ? source::declared : source::none;
    }
    if (injected && measured) return source::misses;
    if (hinted) return source::hints;
    if (!injected && measured) return source::declared;
    return source::none;
  }

  void finish_profiling(context& ctx) {
    const meter_kind kind = meter_.exchange(meter_kind::none, std::memory_order_relaxed);
    if (kind == meter_kind::declared) prof::declared_bytes_meter(false);
    report r;
    r.profile_ns = ctx.now_ns() - profile_began_ns_;
    r.used = choose_source(kind);
    r.pmu_workers = kind == meter_kind::pmu ? pmu_workers_.load(std::memory_order_relaxed) : 0;
    std::uint64_t work = 0;
    for (const auto& w : workers_) work += w.work_ns.load(std::memory_order_relaxed);
    r.root_bytes = r.used != source::none ? profile_->root_size(r.used) : 0;
    r.bytes_per_ns = work != 0 ? static_cast<double>(r.root_bytes) / static_cast<double>(work) : 0;
    // §3.5 where instructions were counted with the misses: most tasks below the threshold of
    // misses per instruction; else the bytes per nanosecond stand in.
    if (r.used == source::misses) r.vote = profile_->vote_cmpi(cmpi_threshold_, cats_line_bytes);
    const bool looks_cpu_bound = r.vote.tasks != 0
                                     ? 2 * r.vote.cpu_bound > r.vote.tasks
                                     : r.bytes_per_ns < default_cpu_bound_bytes_per_ns;
    r.cpu_bound = r.used != source::none &&
                  (bound_choice_ == "cpu" || (bound_choice_ == "auto" && looks_cpu_bound));
    const std::uint64_t cache = packages_.front()->cache_bytes;
    mode next = mode::as_ws;
    const char* why = nullptr;
    if (r.used == source::none) {
      why = "no footprint: no PMU misses, no size_hint, nothing declared to the locality model";
    } else if (cache == 0) {
      why = "the topology names no cache shared by a package's workers";
    } else if (r.cpu_bound) {
      why = "the first iteration is CPU-bound";
    } else {
      r.counts = profile_->partition(r.used, cache);
      next = mode::scheduled;
    }
    {
      const std::lock_guard hold(report_lock_);
      report_ = r;
    }
    if (why != nullptr && prints_config()) {
      std::fprintf(stderr, "locus: cats runs as ws: %s\n", why);
    }
    mode_.store(next, std::memory_order_release);
  }

  // ---- after profiling

  void begin_subtree(context& ctx, task_frame& f) {
    task_state& t = state_of(f);
    t.package = package_of(ctx.self());
    package_state& p = package(t.package);
    p.subtrees.fetch_add(1, std::memory_order_seq_cst);
    p.subtrees_run.fetch_add(1, std::memory_order_relaxed);
    {
      const std::lock_guard hold(placement_lock_);
      last_package_[t.id] = t.package;
    }
    tell(cats_event::what::subtree_begin, ctx.self(), t.package, f.path(), tier::leaf);
    for (int w = p.first; w < p.last; ++w) {
      if (w != ctx.self()) ctx.wake(w);
    }
  }

  void end_subtree(context& ctx, task_frame& f) {
    task_state& t = state_of(f);
    package_state& p = package(t.package);
    tell(cats_event::what::subtree_end, ctx.self(), t.package, f.path(), tier::leaf);
    p.subtrees.fetch_sub(1, std::memory_order_seq_cst);
    ctx.wake(p.first);
    t.package = -1;
  }

  // Random stealing while profiling (and as ws). A search that began before the profiled root
  // ended can go on into the first scheduled one (a worker the OS deschedules mid-search) and
  // take an item of a subtree there, which only the victim's package may run: it goes back.
  work_item* steal_anywhere(context& ctx) {
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      if (mode_.load(std::memory_order_acquire) == mode::scheduled) return nullptr;
      tell(cats_event::what::search, ctx.self(), 0, 0, tier::unknown);
      const int victim = ctx.random_victim();
      if (victim < 0) return nullptr;
      const steal_result r = ctx.steal(victim);
      if (!r) continue;
      // The item was queued after its spawner saw the schedule begin, so this load sees it too.
      if (mode_.load(std::memory_order_acquire) == mode::scheduled &&
          package_of(victim) != package_of(ctx.self())) {
        ctx.deliver(victim, r.item, lane::first);
        return nullptr;
      }
      return r.item;
    }
    return nullptr;
  }

  work_item* find_bi_tier(context& ctx) {
    const int self = ctx.self();
    const int mine = package_of(self);
    package_state& home = package(mine);
    const int mates = home.last - home.first - 1;
    for (int attempt = 0; attempt < mates; ++attempt) {
      int victim = home.first + ctx.random_below(mates);
      if (victim >= self) ++victim;
      if (const steal_result r = ctx.steal(victim)) return r.item;
    }
    if (self != home.first) return nullptr;
    const bool may_take_leaf = home.subtrees.load(std::memory_order_seq_cst) == 0;
    if (work_item* item = take(home, may_take_leaf, true)) return item;
    const int n = static_cast<int>(packages_.size());
    const int start = n > 1 ? ctx.random_below(n) : 0;
    for (int i = 0; i < n; ++i) {
      const int k = (start + i) % n;
      if (k == mine) continue;
      package_state& other = package(k);
      // A subtree waits for its own package's head unless that package is busy with another.
      const bool leaf_here = may_take_leaf && other.subtrees.load(std::memory_order_seq_cst) != 0;
      if (other.inter_count.load(std::memory_order_relaxed) == 0 &&
          (!leaf_here || other.leaf_count.load(std::memory_order_relaxed) == 0)) {
        continue;
      }
      const steal_result r =
          ctx.steal_with(other.first, [&] { return take(other, leaf_here, false); });
      if (r) return r.item;
    }
    return nullptr;
  }

  // From a package's pools: tasks above the cut first, then a leaf inter-socket task if this
  // package may start a subtree; the newest for the package's own head, the oldest for a thief.
  static work_item* take(package_state& p, bool may_take_leaf, bool own) {
    if (p.inter_count.load(std::memory_order_seq_cst) == 0 &&
        (!may_take_leaf || p.leaf_count.load(std::memory_order_seq_cst) == 0)) {
      return nullptr;
    }
    const std::lock_guard hold(p.lock);
    auto pop = [own](std::deque<work_item*>& q, std::atomic<int>& count) -> work_item* {
      if (q.empty()) return nullptr;
      work_item* item = own ? q.back() : q.front();
      if (own) {
        q.pop_back();
      } else {
        q.pop_front();
      }
      count.fetch_sub(1, std::memory_order_seq_cst);
      return item;
    };
    if (work_item* item = pop(p.inter, p.inter_count)) return item;
    if (may_take_leaf) return pop(p.leaves, p.leaf_count);
    return nullptr;
  }

  std::string source_choice_ = "auto";
  std::string bound_choice_ = "auto";
  std::size_t profile_tasks_ = default_profile_tasks;
  std::vector<std::unique_ptr<package_state>> packages_;
  std::vector<int> package_of_;
  std::vector<int> package_of_place_;  // the package of a place's first worker
  std::vector<worker_state> workers_;

  std::atomic<mode> mode_{mode::fresh};
  std::unique_ptr<profile> profile_;
  cats_miss_source miss_source_used_ = nullptr;
  cats_instruction_source instruction_source_used_ = nullptr;
  double cmpi_threshold_ = default_cpu_bound_cmpi;
  // Read by every worker's segments while the profile ends on one of them.
  std::atomic<meter_kind> meter_{meter_kind::none};
  std::vector<prof::event_spec> pmu_events_;          // the candidates for this CPU's L2 misses
  std::vector<prof::event_spec> instruction_events_;  // and for its instructions
  std::atomic<int> pmu_workers_{0};                   // workers whose counter opened
  std::uint64_t profile_began_ns_ = 0;
  std::atomic<std::uint64_t> unknown_{0};
  std::atomic<std::uint64_t> looked_up_{0}, unknown_in_root_{0};  // in the running root
  std::atomic<std::uint64_t> profiles_{0};
  std::mutex placement_lock_;
  std::unordered_map<std::uint64_t, int> last_package_;  // leaf inter-socket task -> package
  mutable std::mutex report_lock_;
  report report_;
};

}  // namespace

void set_cats_observer(cats_observer o) noexcept {
  observer.store(o, std::memory_order_relaxed);
}

void set_cats_miss_source(cats_miss_source s) noexcept {
  miss_source.store(s, std::memory_order_relaxed);
}

void set_cats_instruction_source(cats_instruction_source s) noexcept {
  instruction_source.store(s, std::memory_order_relaxed);
}

void set_cats_pmu_event(const prof::event_spec* event) noexcept {
  pmu_event.store(event, std::memory_order_relaxed);
}

std::unique_ptr<policy> make_cats_policy() {
  return std::make_unique<cats_policy>();
}

}  // namespace locus::detail
