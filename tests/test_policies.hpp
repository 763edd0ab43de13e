// Scheduler policies written only for tests, each showing one capability of the core's policy
// interface (sched/policy.hpp, sched/context.hpp) as a new scheduler would use it. Registered at
// static initialisation, so that LOCUS_SCHED / options::sched accept their names.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "sched/context.hpp"
#include "sched/policy.hpp"
#include "sched/victims.hpp"

namespace locus_test {

using locus::detail::context;
using locus::detail::lane;
using locus::detail::policy;
using locus::detail::policy_base;
using locus::detail::ready_queue;
using locus::detail::spawn_decision;
using locus::detail::spawn_request;
using locus::detail::steal_result;
using locus::detail::steal_status;
using locus::detail::work_item;

// A queue with the core's contract under one lock: the kind of queue a policy brings (HotSLAW's
// split queue locks its public part). A thief that finds the lock taken reports a lost race.
class locked_queue final : public ready_queue {
 public:
  void push(work_item* item) override {
    const std::lock_guard hold(lock_);
    items_.push_back(item);
    count_.fetch_add(1, std::memory_order_seq_cst);
  }
  work_item* pop() override {
    const std::lock_guard hold(lock_);
    if (items_.empty()) return nullptr;
    work_item* item = items_.back();
    items_.pop_back();
    count_.fetch_sub(1, std::memory_order_relaxed);
    return item;
  }
  std::size_t steal(work_item** out, std::size_t max, steal_status* why) override {
    if (!lock_.try_lock()) {
      *why = steal_status::lost_race;
      return 0;
    }
    std::size_t n = 0;
    while (n < max && !items_.empty()) {
      out[n++] = items_.front();
      items_.pop_front();
    }
    count_.fetch_sub(n, std::memory_order_relaxed);
    lock_.unlock();
    *why = n > 0 ? steal_status::taken : steal_status::empty;
    return n;
  }
  std::size_t size() const noexcept override { return count_.load(std::memory_order_seq_cst); }

 private:
  std::mutex lock_;
  std::deque<work_item*> items_;
  std::atomic<std::size_t> count_{0};
};

// Every core capability at once, for the randomized stress test: the locked queue, steal-half
// from random victims, one child in eight routed to a random worker's inbox, one in eight run
// serially (spawn_decision::serial), and task hooks that count begins and ends.
class mixed_policy final : public policy_base<mixed_policy> {
 public:
  static inline std::atomic<std::uint64_t> begun{0};
  static inline std::atomic<std::uint64_t> ended{0};

  std::unique_ptr<ready_queue> make_queue(int) override { return std::make_unique<locked_queue>(); }

  work_item* find_work(context& ctx) override {
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      const int victim = ctx.random_victim();
      const std::size_t half = (ctx.queue_size(victim) + 1) / 2;
      if (const steal_result r = ctx.steal(victim, half < 1 ? 1 : half)) return r.item;
    }
    return nullptr;
  }

  spawn_decision on_spawn(context& ctx, spawn_request& spawn) override {
    const std::uint32_t draw = ctx.random() % 8;
    if (ctx.workers() > 1 && draw == 0) return spawn_decision::route;
    if (draw == 1) return spawn_decision::serial;  // the core queues it if the program asked
    return spawn.queued ? spawn_decision::parent_first : spawn_decision::child_first;
  }

  bool route(context& ctx, work_item& item) override {
    if (item.kind == locus::detail::item_kind::resume) return false;
    ctx.deliver(ctx.random_victim(), &item, lane::normal);
    return true;
  }

  void task_begin(context&) override { begun.fetch_add(1, std::memory_order_relaxed); }
  void task_end(context&) override { ended.fetch_add(1, std::memory_order_relaxed); }
};

// Steals once: when armed, worker 1 takes a chunk of `chunk` items from worker 0's queue (the
// default deque, or the locked queue). Nobody else steals.
template <bool Locked>
class chunk_once_policy final : public policy_base<chunk_once_policy<Locked>> {
 public:
  static inline std::atomic<bool> armed{false};
  static inline std::atomic<bool> done{false};
  static inline std::atomic<std::size_t> chunk{1};
  static inline std::atomic<std::size_t> taken{0};

  std::unique_ptr<ready_queue> make_queue(int) override {
    if constexpr (Locked) return std::make_unique<locked_queue>();
    return nullptr;
  }
  std::optional<int> root_worker() const noexcept override { return 0; }

  work_item* find_work(context& ctx) override {
    if (ctx.self() != 1 || !armed.load(std::memory_order_acquire) || ctx.queue_looks_empty(0)) {
      return nullptr;
    }
    armed.store(false, std::memory_order_relaxed);
    const steal_result r = ctx.steal(0, chunk.load(std::memory_order_relaxed));
    taken.store(r.taken, std::memory_order_relaxed);
    done.store(true, std::memory_order_release);
    return r.item;
  }
};

// Work hints name workers: a child spawned with work_hint{w} goes to worker w - 1's inbox.
// Nobody steals, so idle workers sleep until something is delivered to them.
class deliver_policy final : public policy_base<deliver_policy> {
 public:
  work_item* find_work(context&) override { return nullptr; }
  spawn_decision on_spawn(context&, spawn_request& spawn) override {
    if (spawn.hints.work >= 1) return spawn_decision::route;
    return spawn.queued ? spawn_decision::parent_first : spawn_decision::child_first;
  }
  bool route(context& ctx, work_item& item) override {
    if (item.kind == locus::detail::item_kind::resume) return false;
    ctx.deliver(static_cast<int>(item.options.work) - 1, &item, lane::normal);
    return true;
  }
};

// Records, on worker 0's first search for work, 200 victims drawn at each topology level, and
// 10000 drawn with weights by level: 0 for workers 1's level, 3 for worker 4's, 1 for worker 8's.
class levels_policy final : public policy_base<levels_policy> {
 public:
  static inline std::mutex lock;
  static inline std::vector<std::vector<int>> drawn;  // by level
  static inline std::vector<int> counts;              // workers_at(level)
  static inline std::vector<int> weighted;

  work_item* find_work(context& ctx) override {
    if (ctx.self() != 0) return nullptr;
    const std::lock_guard hold(lock);
    if (!drawn.empty()) return nullptr;
    drawn.resize(static_cast<std::size_t>(ctx.levels()));
    for (int level = 0; level < ctx.levels(); ++level) {
      counts.push_back(ctx.workers_at(level));
      for (int i = 0; i < 200; ++i) {
        drawn[static_cast<std::size_t>(level)].push_back(ctx.random_victim_at(level));
      }
    }
    std::vector<double> by_level(static_cast<std::size_t>(ctx.levels()), 0.0);
    by_level[static_cast<std::size_t>(ctx.distance(0, 4))] = 3;
    by_level[static_cast<std::size_t>(ctx.distance(0, 8))] = 1;
    const auto victims = locus::detail::victim_distribution::by_level(ctx, by_level);
    for (int i = 0; i < 10000; ++i) weighted.push_back(victims.draw(ctx));
    return nullptr;
  }
};

// Random stealing that counts the joins a continuation was taken from (group_end without
// group_begin: a non-trivial sync, where NUMA-WS pushes a continuation to its place).
class sync_policy final : public policy_base<sync_policy> {
 public:
  static inline std::atomic<std::uint64_t> ends{0};

  work_item* find_work(context& ctx) override {
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      if (const steal_result r = ctx.steal(ctx.random_victim())) return r.item;
    }
    return nullptr;
  }
  std::optional<int> group_end(context&, locus::detail::group_state& g) override {
    if (g.policy_data != nullptr) std::abort();  // no group began: nobody set it
    ends.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
};

// Moves the task of every non-trivial join once, to the next worker: through the core (the
// worker group_end names) or, in routed_move_policy, through route(), which keeps it here.
// Records where each group asked to move and where it ended.
struct move_record {
  int asked_on;
  int ended_on = -1;
};
inline std::mutex moves_lock;
inline std::deque<move_record> moves;  // stable addresses: a moving group points at its own

template <class Self>
class move_policy_base : public policy_base<Self> {
 public:
  work_item* find_work(context& ctx) override {
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      if (const steal_result r = ctx.steal(ctx.random_victim())) return r.item;
    }
    return nullptr;
  }
  std::optional<int> group_end(context& ctx, locus::detail::group_state& g) override {
    const std::lock_guard hold(moves_lock);
    if (g.policy_data == nullptr) {
      g.policy_data = &moves.emplace_back(move_record{ctx.self()});
      return (ctx.self() + 1) % ctx.workers();
    }
    static_cast<move_record*>(g.policy_data)->ended_on = ctx.self();
    g.policy_data = nullptr;
    return std::nullopt;
  }
};

class move_policy final : public move_policy_base<move_policy> {};

class routed_move_policy final : public move_policy_base<routed_move_policy> {
 public:
  bool route(context&, work_item&) override { return false; }  // waiters and moves stay here
};

template <class P>
std::unique_ptr<policy> make() {
  return std::make_unique<P>();
}

inline const bool test_policies_registered = [] {
  using locus::detail::register_policy;
  register_policy(
      {"test-mixed", "test: locked queue, steal-half, routing, task hooks", &make<mixed_policy>});
  register_policy({"test-chunk-once", "test: one chunk steal from the default deque",
                   &make<chunk_once_policy<false>>});
  register_policy({"test-chunk-once-locked", "test: one chunk steal from a locked queue",
                   &make<chunk_once_policy<true>>});
  register_policy(
      {"test-deliver", "test: work hints name the worker a child goes to", &make<deliver_policy>});
  register_policy({"test-levels", "test: victims drawn by topology level", &make<levels_policy>});
  register_policy({"test-sync", "test: group_end at non-trivial joins only", &make<sync_policy>});
  register_policy(
      {"test-move", "test: group_end moves tasks to the next worker", &make<move_policy>});
  register_policy({"test-move-routed", "test: group_end moves tasks, route keeps them here",
                   &make<routed_move_policy>});
  return true;
}();

}  // namespace locus_test
