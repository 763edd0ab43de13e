// numa-ws: NUMA-WS (seed 001: Deters, Wu, Xu, Lee, "A NUMA-Aware Provably-Efficient Task-Parallel
// Platform Based on the Work-First Principle", IISWC 2018; §III-B, Fig. 5). Work stealing with
// place hints honoured only on the steal path:
// - locality-biased steals: a thief draws its victim with a probability that falls with the
//   distance between their places (local, neighbour, remote weights);
// - lazy work pushing, only at Fig. 5's three points: a successful non-trivial sync of a frame
//   that belongs to another place (group_end, for a group whose continuation was taken), the
//   last child resuming a suspended parent that belongs elsewhere (route, for the waiter), and a
//   successful steal of such a frame (find_work). PUSHBACK puts the frame into the single-entry
//   mailbox of a random worker of its place, trying up to the threshold of workers, and
//   otherwise runs it where it is;
// - a thief flips a coin between a victim's mailbox and its deque; an idle worker looks in its
//   own mailbox first.
// Nothing of this is on the spawn path: the policy has no spawn, task or group-begin hook, so a
// program runs as ws does until a steal happens.
//
// Choices where the paper leaves details open:
// - Places are the topology's (NUMA nodes, else packages). Another place is a neighbour when the
//   OS's NUMA distance to it is the smallest from this place (without OS distances: when the two
//   places meet below the machine, e.g. two NUMA nodes of one package), remote otherwise.
//   LOCUS_NUMA_WS_WEIGHTS sets the weight of one victim of each class (default 8,2,1), so that a
//   place of more workers is chosen more often in proportion.
// - The threshold counts the tries of one push (LOCUS_NUMA_WS_THRESHOLD, default 4), each at
//   another worker of the place from a random one on; a frame a thief later takes from a mailbox
//   of another place is pushed again as a new push.
// - A frame with no place hint, or one of the thief's own place, runs where it is.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "sched/context.hpp"
#include "sched/mailboxes.hpp"
#include "sched/numa_ws_audit.hpp"
#include "sched/policy.hpp"
#include "sched/victims.hpp"
#include "topology/topology.hpp"

namespace locus::detail {
namespace {

std::atomic<numa_ws_push_observer> push_observer{nullptr};

enum place_class : std::size_t { local, neighbour, remote };

class numa_ws_policy final : public policy_base<numa_ws_policy> {
 public:
  void attach(const topo::topology& topology, int workers) override {
    if (const char* v = config::env_value("LOCUS_NUMA_WS_WEIGHTS")) {
      weights_ = config::parse_weights("LOCUS_NUMA_WS_WEIGHTS", v, 3, "local,neighbour,remote");
    }
    if (const char* v = config::env_value("LOCUS_NUMA_WS_THRESHOLD")) {
      threshold_ = config::parse_int_in("LOCUS_NUMA_WS_THRESHOLD", v, 1, 1000);
    }
    place_.resize(static_cast<std::size_t>(workers));
    workers_of_place_.assign(static_cast<std::size_t>(topology.num_numa()), {});
    for (int w = 0; w < workers; ++w) {
      place_[static_cast<std::size_t>(w)] = topology.numa_of(w);
      workers_of_place_[static_cast<std::size_t>(topology.numa_of(w))].push_back(w);
    }
    classes_ = place_classes(topology, workers);
    mailbox_ = mailboxes(workers);
    victims_ = std::vector<std::optional<victim_distribution>>(static_cast<std::size_t>(workers));
  }

  std::vector<policy_setting> settings() const override {
    std::string weights;
    for (const double w : weights_) {
      std::ostringstream one;
      one << w;
      weights += (weights.empty() ? "" : ",") + one.str();
    }
    return {{"LOCUS_NUMA_WS_WEIGHTS", weights + " (local,neighbour,remote)"},
            {"LOCUS_NUMA_WS_THRESHOLD", std::to_string(threshold_)}};
  }

  bool has_work(const context& ctx) const noexcept override { return mailbox_.full(ctx.self()); }

  work_item* find_work(context& ctx) override {
    // Fig. 5, line 26: its own mailbox first.
    if (work_item* mine = mailbox_.take(ctx.self())) return mine;
    if (ctx.workers() < 2) return nullptr;
    const victim_distribution& victims = victims_of(ctx);
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      const int victim = victims.draw(ctx);
      if (victim < 0) return nullptr;
      work_item* item = nullptr;
      // The coin flip: a victim's mailbox or its deque, so that the oldest item of every deque
      // keeps a fair chance (§IV); an empty mailbox falls back to the deque.
      if ((ctx.random() & 1) != 0) {
        if (work_item* mail = mailbox_.take(victim)) {
          item = ctx.steal_with(victim, [mail] { return mail; }).item;
        }
      }
      if (item == nullptr) item = ctx.steal(victim).item;
      if (item == nullptr) continue;
      if (!push_to_its_place(ctx, *item)) return item;
    }
    return nullptr;
  }

  // A waiter whose last child finished here (Fig. 5, lines 21-24), or a task that group_end
  // moves: pushed to its place, or resumed here.
  bool route(context& ctx, work_item& item) override {
    return item.kind == item_kind::resume && push_to_its_place(ctx, item);
  }

  // A successful non-trivial sync (Fig. 5, lines 5-11): the frame moves towards its place
  // (route chooses the mailbox); once it resumes, wherever that is, the group ends.
  std::optional<int> group_end(context& ctx, group_state& g) override {
    if (g.policy_data == &moving_) {
      g.policy_data = nullptr;
      return std::nullopt;
    }
    const int p = ctx.current().place();
    if (p < 0 || p == place_[static_cast<std::size_t>(ctx.self())]) return std::nullopt;
    g.policy_data = &moving_;
    return workers_of_place_[static_cast<std::size_t>(p)].front();
  }

 private:
  // PUSHBACK: into the mailbox of a random worker of the frame's place, up to the threshold of
  // tries; false when the frame belongs here (or nowhere) or every try found a full mailbox.
  bool push_to_its_place(context& ctx, work_item& item) {
    const int p = context::record_of(item).place();
    const int here = place_[static_cast<std::size_t>(ctx.self())];
    if (p < 0 || p == here) return false;
    const auto& candidates = workers_of_place_[static_cast<std::size_t>(p)];
    const int n = static_cast<int>(candidates.size());
    // Each try a different worker ("tries again with a different randomly chosen receiving
    // worker"): from a random one on, in turn, so that a free mailbox of the place is found
    // when the threshold allows as many tries as the place has workers.
    const int first = ctx.random_below(n);
    for (int tries = 1; tries <= threshold_; ++tries) {
      const int target = candidates[static_cast<std::size_t>((first + tries - 1) % n)];
      if (mailbox_.put(target, &item)) {
        report({ctx.self(), p, target, tries - 1, p});
        ctx.posted(target);
        return true;
      }
    }
    report({ctx.self(), p, -1, threshold_, here});
    return false;
  }

  static void report(const numa_ws_push_event& e) {
    if (const auto observe = push_observer.load(std::memory_order_relaxed)) observe(e);
  }

  const victim_distribution& victims_of(context& ctx) {
    auto& mine = victims_[static_cast<std::size_t>(ctx.self())];
    if (!mine) {
      const int here = place_[static_cast<std::size_t>(ctx.self())];
      std::vector<double> weight(static_cast<std::size_t>(ctx.workers()));
      for (int v = 0; v < ctx.workers(); ++v) {
        const std::size_t c =
            classes_[static_cast<std::size_t>(here)]
                    [static_cast<std::size_t>(place_[static_cast<std::size_t>(v)])];
        weight[static_cast<std::size_t>(v)] = weights_[c];
      }
      mine.emplace(ctx, std::move(weight));
    }
    return *mine;
  }

  // classes[a][b]: local, neighbour or remote, for places a and b.
  static std::vector<std::vector<std::size_t>> place_classes(const topo::topology& t, int workers) {
    const auto places = static_cast<std::size_t>(t.num_numa());
    std::vector<int> first_worker(places, -1);
    for (int w = workers - 1; w >= 0; --w) first_worker[static_cast<std::size_t>(t.numa_of(w))] = w;
    const auto& os = t.numa_distances();
    std::vector<std::vector<std::size_t>> classes(places, std::vector<std::size_t>(places, remote));
    for (std::size_t a = 0; a < places; ++a) {
      unsigned nearest = ~0u;
      for (std::size_t b = 0; b < places && !os.empty(); ++b) {
        if (b != a) nearest = std::min(nearest, os[a * places + b]);
      }
      for (std::size_t b = 0; b < places; ++b) {
        if (a == b) {
          classes[a][b] = local;
        } else if (!os.empty()) {
          classes[a][b] = os[a * places + b] <= nearest ? neighbour : remote;
        } else if (first_worker[a] >= 0 && first_worker[b] >= 0 &&
                   t.distance(first_worker[a], first_worker[b]) < t.max_distance()) {
          classes[a][b] = neighbour;
        }
      }
    }
    return classes;
  }

  std::vector<double> weights_{8, 2, 1};
  int threshold_ = 4;
  std::vector<int> place_;
  std::vector<std::vector<int>> workers_of_place_;
  std::vector<std::vector<std::size_t>> classes_;
  mailboxes mailbox_;
  std::vector<std::optional<victim_distribution>> victims_;  // each touched by its worker only
  char moving_ = 0;  // marks a group whose task group_end moves (group_state::policy_data)
};

}  // namespace

void set_numa_ws_push_observer(numa_ws_push_observer observer) noexcept {
  push_observer.store(observer, std::memory_order_relaxed);
}

std::unique_ptr<policy> make_numa_ws_policy() {
  return std::make_unique<numa_ws_policy>();
}

}  // namespace locus::detail
