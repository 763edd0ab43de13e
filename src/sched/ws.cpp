// ws: classic randomized work stealing (Blumofe & Leiserson; the Cilk-5 baseline every seed
// paper compares against): child-first spawns, one deque per worker, victims drawn uniformly at
// random, one task per steal.
#include "sched/policy.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"

namespace locus::detail {
namespace {

class ws_policy final : public policy {
 public:
  std::string_view name() const noexcept override { return "ws"; }

  work_item* find_work(worker& w) override {
    const int n = w.rt.size();
    if (n < 2) return nullptr;
    // One round: as many random victims as there are other workers.
    for (int attempt = 0; attempt < n - 1; ++attempt) {
      int victim = static_cast<int>(w.next_random() % static_cast<std::uint32_t>(n - 1));
      if (victim >= w.index) ++victim;
      const int level = w.rt.distance(w.index, victim);
      if (auto item = w.rt.at(victim).deque.steal()) {
        w.counters.steals[static_cast<std::size_t>(level)].add();
        return *item;
      }
      w.counters.failed_steals[static_cast<std::size_t>(level)].add();
    }
    return nullptr;
  }
};

}  // namespace

std::unique_ptr<policy> make_ws_policy() {
  return std::make_unique<ws_policy>();
}

}  // namespace locus::detail
