// hws: HotSLAW (seed 004: Min, Iancu, Yelick, "Hierarchical Work Stealing on Manycore Clusters",
// PGAS 2011), the shared-memory scheduler of §3:
// - §3.1: each worker's queue is split into a private region (LIFO, no synchronisation) and a
//   public one that thieves take the oldest items of (queue/split_queue.hpp);
// - §3 and §5.1: bounded queues: a spawn queues the child (help-first) while its worker's queue
//   has room, and runs it serially, as a plain call that leaves nothing stealable, once the queue
//   holds the bound (LOCUS_HWS_QUEUE_BOUND, default 40, the paper's setting); decided afresh at
//   every spawn;
// - §3.2.1, hierarchical victim selection: a thief tries the nearest level of the machine tree
//   first, with as many random victims as that level has workers, then each level up, with
//   4·log2(N) tries at the top, then starts again from the nearest (LOCUS_HWS_ATTEMPTS);
// - §3.2.2, hierarchical chunk selection: one item per steal inside the top level, half of the
//   victim's public items across it (LOCUS_HWS_CHUNKS).
//
// Where the paper leaves details open:
// - The levels are the topology's distance levels that hold other workers (e.g. L3, package,
//   machine); the top one is the farthest. With one level, it is the top.
// - The private region holds up to half the bound before a push publishes half of it (§5.3:
//   "queue bounds of 40 (public queue size of 20)"); a thief that finds the public region empty
//   asks the owner to publish at its next push or pop.
// - A spawn the program asked to queue (locus::parent_first) is queued even past the bound.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "queue/split_queue.hpp"
#include "sched/context.hpp"
#include "sched/hws_audit.hpp"
#include "sched/policy.hpp"
#include "topology/topology.hpp"

namespace locus::detail {
namespace {

std::atomic<hws_steal_observer> steal_observer{nullptr};

constexpr int default_bound = 40;
constexpr int auto_entry = -1;  // "auto" in a level list
constexpr int half_entry = -2;  // "half" in LOCUS_HWS_CHUNKS

using split_queue = queue::split_queue<work_item*>;

class hws_policy final : public policy_base<hws_policy> {
 public:
  void attach(const topo::topology& topology, int workers) override {
    if (const char* v = config::env_value("LOCUS_HWS_QUEUE_BOUND")) {
      bound_ = config::parse_int_in("LOCUS_HWS_QUEUE_BOUND", v, 1, 1 << 20);
    }
    const std::vector<int> levels = levels_with_workers(topology, workers);
    const std::string names = level_list(topology, levels);
    std::vector<int> attempts, chunks;
    if (const char* v = config::env_value("LOCUS_HWS_ATTEMPTS")) {
      const std::string accepted = "up to " + std::to_string(levels.size()) +
                                   " comma-separated entries, one per level (" + names +
                                   "), each an integer from 0 to 1000000 or auto, not all 0";
      attempts = config::parse_int_list("LOCUS_HWS_ATTEMPTS", v, 0, 1'000'000, {"auto"},
                                        levels.size(), accepted);
      // All 0 leaves every thief without a victim.
      if (attempts.size() == levels.size() &&
          std::all_of(attempts.begin(), attempts.end(), [](int a) { return a == 0; })) {
        config::reject("LOCUS_HWS_ATTEMPTS", v, accepted);
      }
    }
    if (const char* v = config::env_value("LOCUS_HWS_CHUNKS")) {
      chunks = config::parse_int_list(
          "LOCUS_HWS_CHUNKS", v, 1, 1'000'000, {"auto", "half"}, levels.size(),
          "up to " + std::to_string(levels.size()) + " comma-separated entries, one per level (" +
              names + "), each an integer from 1 to 1000000, half or auto");
    }
    const int top_tries = std::max(1, static_cast<int>(std::lround(4 * std::log2(workers))));
    plans_.assign(static_cast<std::size_t>(workers), {});
    for (int w = 0; w < workers; ++w) {
      for (std::size_t i = 0; i < levels.size(); ++i) {
        const bool top = i + 1 == levels.size();
        step s{.level = levels[i], .index = static_cast<int>(i)};
        int at_level = 0;
        for (int v = 0; v < workers; ++v) {
          at_level += v != w && topology.distance(w, v) == levels[i] ? 1 : 0;
        }
        const int a = i < attempts.size() ? attempts[i] : auto_entry;
        s.attempts = a != auto_entry ? a : top ? top_tries : at_level;
        const int c = i < chunks.size() ? chunks[i] : auto_entry;
        s.half = c == half_entry || (c == auto_entry && top);
        s.chunk = c > 0 ? static_cast<std::size_t>(c) : 1;
        if (at_level > 0 && s.attempts > 0) plans_[static_cast<std::size_t>(w)].push_back(s);
      }
    }
    queues_.assign(static_cast<std::size_t>(workers), nullptr);
    level_names_.clear();
    for (const int l : levels) level_names_.push_back(level_list(topology, {l}));
  }

  // Worker 0's plan, level by level (the others differ only where the topology is uneven).
  std::vector<policy_setting> settings() const override {
    std::string attempts, chunks;
    for (const step& s : plans_.front()) {
      const std::string& name = level_names_[static_cast<std::size_t>(s.index)];
      attempts += (attempts.empty() ? "" : ", ") + name + " " + std::to_string(s.attempts);
      chunks += (chunks.empty() ? "" : ", ") + name + " " +
                (s.half ? std::string("half") : std::to_string(s.chunk));
    }
    return {{"LOCUS_HWS_QUEUE_BOUND", std::to_string(bound_)},
            {"LOCUS_HWS_ATTEMPTS", attempts.empty() ? "(one worker: no victims)" : attempts},
            {"LOCUS_HWS_CHUNKS", chunks.empty() ? "(one worker: no victims)" : chunks}};
  }

  std::unique_ptr<ready_queue> make_queue(int worker) override {
    const auto bound = static_cast<std::size_t>(bound_);
    auto q = std::make_unique<split_queue>(bound, bound / 2);
    queues_[static_cast<std::size_t>(worker)] = q.get();
    return q;
  }

  spawn_decision on_spawn(context& ctx, spawn_request& spawn) override {
    if (spawn.queued) return spawn_decision::parent_first;
    return queues_[static_cast<std::size_t>(ctx.self())]->full() ? spawn_decision::serial
                                                                 : spawn_decision::parent_first;
  }

  // One round: every level from the nearest up, then nothing (the next round starts again at
  // the nearest).
  work_item* find_work(context& ctx) override {
    const hws_steal_observer observe = steal_observer.load(std::memory_order_relaxed);
    for (const step& s : plans_[static_cast<std::size_t>(ctx.self())]) {
      for (int attempt = 0; attempt < s.attempts; ++attempt) {
        const int victim = ctx.random_victim_at(s.level);
        hws_steal_event e{.thief = ctx.self(), .victim = victim, .level = s.level, .step = s.index};
        if (observe != nullptr) observe(e);
        if (s.half) {
          e.stealable = ctx.stealable(victim);
          e.asked = std::max<std::size_t>(1, (e.stealable + 1) / 2);
        } else {
          e.asked = s.chunk;
        }
        const steal_result r = ctx.steal(victim, e.asked);
        if (observe != nullptr) {
          e.done = true;
          e.taken = r.taken;
          e.status = r.status;
          observe(e);
        }
        if (r) return r.item;
      }
    }
    return nullptr;
  }

 private:
  struct step {
    int level = 0;  // topology distance of the victims
    int index = 0;  // among the levels with other workers
    int attempts = 0;
    bool half = false;  // steal half of the victim's public items, else `chunk`
    std::size_t chunk = 1;
  };

  static std::vector<int> levels_with_workers(const topo::topology& t, int workers) {
    std::vector<bool> seen(static_cast<std::size_t>(t.max_distance()) + 1, false);
    for (int a = 0; a < workers; ++a) {
      for (int b = 0; b < workers; ++b) {
        if (a != b) seen[static_cast<std::size_t>(t.distance(a, b))] = true;
      }
    }
    std::vector<int> levels;
    for (std::size_t l = 0; l < seen.size(); ++l) {
      if (seen[l]) levels.push_back(static_cast<int>(l));
    }
    return levels;
  }

  static std::string level_list(const topo::topology& t, const std::vector<int>& levels) {
    std::string out;
    for (const int l : levels) {
      const auto& names = t.level_names();
      out += (out.empty() ? "" : ", ") + (static_cast<std::size_t>(l) < names.size()
                                              ? names[static_cast<std::size_t>(l)]
                                              : "level " + std::to_string(l));
    }
    return out.empty() ? "none" : out;
  }

  int bound_ = default_bound;
  std::vector<std::vector<step>> plans_;  // by thief
  std::vector<std::string> level_names_;  // by step index
  std::vector<split_queue*> queues_;      // each worker's, owned by the core
};

}  // namespace

void set_hws_steal_observer(hws_steal_observer observer) noexcept {
  steal_observer.store(observer, std::memory_order_relaxed);
}

std::unique_ptr<policy> make_hws_policy() {
  return std::make_unique<hws_policy>();
}

}  // namespace locus::detail
