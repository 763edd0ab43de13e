// ws: classic randomized work stealing (Blumofe & Leiserson; the Cilk-5 baseline every seed
// paper compares against): child-first spawns, one deque per worker, victims drawn uniformly at
// random, one continuation per steal.
//
// One departure from Cilk-5, at joins only, with two workers (LOCUS_WS_JOIN, default `auto`):
// when a thief completes the join of a continuation it stole while the worker it stole from is
// looking for work, the task goes back to that worker instead of going on on the thief. With two
// workers the thief of a step's continuation is always the other worker, so under Cilk-5's rule
// a loop of fork-join steps changes worker at almost every step, and with it the half of the data
// each worker touches; the hand-back keeps each half on one worker from step to step, which pays
// most when the host places the two CPUs far apart (bench/README, "What ws moves"). With more
// workers the thieves are drawn at random, so the hand-back cannot pin a step's pieces to workers
// as it does with two, while it still adds the victim's claim to the path of every stolen join;
// on 16 cores that cost more than it kept, and `auto` keeps Cilk-5's rule there (bench/README,
// "Sixteen cores"). The hand-back is an offer: the task waits in the victim's single-entry slot,
// and the thief takes it back if the victim has not claimed it within reclaim_after_ns (the OS
// may deschedule the victim right after it was seen searching), so a join never waits on a worker
// that does not run. `home` and `thief` choose one rule at any worker count. Nothing of this is
// on the spawn path: the policy has no spawn, task or group-begin hook.
//
// A second departure comes with the plain spawn path of the core (docs/scheduler-policies.md): a
// group whose continuation was taken queues its further children until its join, up to a bound,
// so that a flat loop of spawns is not stolen once per child. A thief that finds such
// queued children takes half of them (steal-half, Hendler and Shavit), not one: each is a small
// part of the loop, and taken one at a time every child the thief runs costs a steal, whose
// cache-line transfers were a visible share of a few-microsecond task (bench/README, "sparselu").
// It runs them oldest first, towards those the victim still holds, so that each of two workers
// keeps one contiguous part of a loop from step to step (context::steal). A continuation is
// still taken alone (context::chunk::of_queued_tasks).
//
// A third keeps a step's data on its worker, as the hand-back does, and comes with it: a thief
// that finds exactly one item at its victim, a continuation, while a region whose continuation
// was stolen is still open (a step of a loop that the two workers share) waits up to
// LOCUS_WS_LONE_WAIT_US (5 us) before taking it, unless another process shares a worker's CPU. At
// the end of such a step the one item is the rest of the piece the victim is finishing, whose data
// is in the victim's cache: taken, each of its leaves runs several times slower on the thief, and
// the next step moves the data back. The first steal of a region never waits (no stolen region is
// open then), so a phase still starts on both workers at once (bench/README, "The lone item").
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "sched/context.hpp"
#include "sched/mailboxes.hpp"
#include "sched/policy.hpp"

namespace locus::detail {
namespace {

// A victim counts as searching if it began a round of looking for work this recently: a round
// (a look at its queues and a few failed steals, then a few pauses) takes well under a
// microsecond.
constexpr std::uint64_t searching_within_ns = 5'000;
// An offer unclaimed this long goes back to the thief: a searching victim claims within a round
// or two, even with a far cache-line round trip.
constexpr std::uint64_t reclaim_after_ns = 10'000;
constexpr int default_lone_wait_us = 5;

class ws_policy final : public policy_base<ws_policy> {
 public:
  void attach(const topo::topology& /*topology*/, int workers) override {
    std::string rule = "auto";
    if (const char* v = config::env_value("LOCUS_WS_JOIN")) {
      rule = config::parse_choice("LOCUS_WS_JOIN", v, {"auto", "home", "thief"});
    }
    chosen_by_auto_ = rule == "auto";
    hand_back_ = rule == "home" || (chosen_by_auto_ && workers == 2);
    workers_ = workers;
    lone_wait_us_ = default_lone_wait_us;
    if (const char* v = config::env_value("LOCUS_WS_LONE_WAIT_US")) {
      lone_wait_us_ = config::parse_int_in("LOCUS_WS_LONE_WAIT_US", v, 0, 1'000'000);
    }
    slots_ = mailboxes(workers);
    offers_ = std::vector<offer>(static_cast<std::size_t>(workers));
    open_stolen_ = std::vector<stolen_count>(static_cast<std::size_t>(workers));
  }

  std::vector<policy_setting> settings() const override {
    const std::string rule = hand_back_ ? "home" : "thief";
    std::vector<policy_setting> out;
    if (!chosen_by_auto_) {
      out.push_back({"LOCUS_WS_JOIN", rule});
    } else {
      const char* unit = workers_ == 1 ? " worker)" : " workers)";
      out.push_back({"LOCUS_WS_JOIN", "auto (" + rule + ", " + std::to_string(workers_) + unit});
    }
    out.push_back({"LOCUS_WS_LONE_WAIT_US",
                   hand_back_ ? std::to_string(lone_wait_us_)
                              : std::to_string(lone_wait_us_) + " (unused: no hand-back)"});
    return out;
  }

  // Also while this worker's own offer is open: it must not sleep before it can take it back.
  bool has_work(const context& ctx) const noexcept override {
    return slots_.full(ctx.self()) || offers_[static_cast<std::size_t>(ctx.self())].item != nullptr;
  }

  work_item* find_work(context& ctx) override {
    if (hand_back_) {
      if (work_item* mine = slots_.take(ctx.self())) return mine;
      if (work_item* back = reclaim(ctx)) return back;
    }
    // One round: as many random victims as there are other workers.
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      const int victim = ctx.random_victim();
      const std::size_t stealable = ctx.stealable(victim);
      if (stealable == 1) {
        if (leaves_lone_item(ctx, victim)) continue;
      } else {
        offers_[static_cast<std::size_t>(ctx.self())].lone_since_ns = 0;
      }
      const steal_result r =
          ctx.steal(victim, (stealable + 1) / 2, context::chunk::of_queued_tasks);
      if (!r) continue;
      // The stolen parent's groups remember where it came from, for group_end, and which thief
      // counts them as open. The record lives on the parent's stack, which only this thief runs
      // from now on.
      if (hand_back_ && r.item->kind == item_kind::continuation) {
        group_state& g = *r.item->group;
        int counted_by = thief_of(g.policy_data);
        if (counted_by < 0) {
          counted_by = ctx.self();
          open_stolen_[static_cast<std::size_t>(counted_by)].n.fetch_add(1,
                                                                         std::memory_order_relaxed);
        }
        g.policy_data = stolen_tag(victim, counted_by);
      }
      return r.item;
    }
    return nullptr;
  }

  // The join of a group whose continuation was taken is complete here.
  std::optional<int> group_end(context& ctx, group_state& g) override {
    const int home = home_of(g.policy_data);
    if (const int thief = thief_of(g.policy_data); thief >= 0) {
      open_stolen_[static_cast<std::size_t>(thief)].n.fetch_sub(1, std::memory_order_relaxed);
    }
    g.policy_data = nullptr;
    if (home < 0 || home == ctx.self() || !ctx.searching(home, searching_within_ns)) {
      return std::nullopt;
    }
    offers_[static_cast<std::size_t>(ctx.self())].target = home;
    return home;
  }

  // The task group_end moves (a parked waiter, item.kind resume), or a waiter whose last child
  // finished here (no offer pending: it resumes here).
  bool route(context& ctx, work_item& item) override {
    offer& mine = offers_[static_cast<std::size_t>(ctx.self())];
    const int target = mine.target;
    mine.target = -1;
    if (target < 0 || item.kind != item_kind::resume) return false;
    if (!slots_.put(target, &item)) return false;
    mine.item = &item;
    mine.at = target;
    mine.since_ns = ctx.now_ns();
    ctx.posted(target);
    return true;
  }

 private:
  // The thief's side of its last hand-back, and its wait for a lone item; touched by the thief
  // only.
  struct alignas(64) offer {
    int target = -1;  // set by group_end for the route call that follows it
    work_item* item = nullptr;
    int at = -1;
    std::uint64_t since_ns = 0;
    std::uint64_t lone_since_ns = 0;  // 0: not waiting
  };
  // Groups whose continuation a worker stole and whose join has not ended yet, counted on the
  // thief's own line (group_end, on whichever worker, takes one off).
  struct alignas(64) stolen_count {
    std::atomic<int> n{0};
  };

  // group_state::policy_data of a group whose continuation was stolen: the worker it was last
  // stolen from (where group_end hands the task back) and the thief that counts it in
  // open_stolen_, each plus one, in the low and high halves (null: never stolen).
  static constexpr unsigned tag_bits = sizeof(std::uintptr_t) * 4;
  static void* stolen_tag(int home, int thief) noexcept {
    const auto low = static_cast<std::uintptr_t>(home + 1);
    const auto high = static_cast<std::uintptr_t>(thief + 1);
    return reinterpret_cast<void*>(low | high << tag_bits);
  }
  static int home_of(const void* tag) noexcept {
    const auto word = reinterpret_cast<std::uintptr_t>(tag);
    return static_cast<int>(word & ((std::uintptr_t{1} << tag_bits) - 1)) - 1;
  }
  static int thief_of(const void* tag) noexcept {
    const auto word = reinterpret_cast<std::uintptr_t>(tag);
    return static_cast<int>(word >> tag_bits) - 1;
  }

  // Whether the thief leaves a victim's only item where it is for now (see the top of the file).
  // Only a continuation: a lone queued child is one of a loop's many (a sparselu phase's), which
  // the thief would only wait to take after the victim's current one.
  bool leaves_lone_item(context& ctx, int victim) noexcept {
    std::uint64_t& since = offers_[static_cast<std::size_t>(ctx.self())].lone_since_ns;
    if (!hand_back_ || lone_wait_us_ == 0 || !ctx.oldest_is_continuation(victim) ||
        !in_stolen_region() || ctx.any_worker_contended()) {
      since = 0;
      return false;
    }
    const std::uint64_t now = ctx.now_ns();
    if (since == 0) since = now;
    if (now - since < static_cast<std::uint64_t>(lone_wait_us_) * 1'000) return true;
    since = 0;
    return false;
  }
  bool in_stolen_region() const noexcept {
    for (const stolen_count& c : open_stolen_) {
      if (c.n.load(std::memory_order_relaxed) > 0) return true;
    }
    return false;
  }

  // The thief's pending offer, taken back once it has waited reclaim_after_ns unclaimed.
  work_item* reclaim(context& ctx) noexcept {
    offer& mine = offers_[static_cast<std::size_t>(ctx.self())];
    if (mine.item == nullptr) return nullptr;
    work_item* item = mine.item;
    if (!slots_.holds(mine.at, item)) {
      mine.item = nullptr;  // claimed
      return nullptr;
    }
    if (ctx.now_ns() < mine.since_ns + reclaim_after_ns) return nullptr;
    mine.item = nullptr;
    return slots_.take_back(mine.at, item) ? item : nullptr;
  }

  bool hand_back_ = true;
  bool chosen_by_auto_ = true;
  int workers_ = 0;
  int lone_wait_us_ = default_lone_wait_us;
  mailboxes slots_;
  std::vector<offer> offers_;
  std::vector<stolen_count> open_stolen_;
};

}  // namespace

std::unique_ptr<policy> make_ws_policy() {
  return std::make_unique<ws_policy>();
}

}  // namespace locus::detail
