// ws: classic randomized work stealing (Blumofe & Leiserson; the Cilk-5 baseline every seed
// paper compares against): child-first spawns, one deque per worker, victims drawn uniformly at
// random, one task per steal.
#include "sched/context.hpp"
#include "sched/policy.hpp"

namespace locus::detail {
namespace {

class ws_policy final : public policy_base<ws_policy> {
 public:
  work_item* find_work(context& ctx) override {
    // One round: as many random victims as there are other workers.
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      if (const steal_result r = ctx.steal(ctx.random_victim())) return r.item;
    }
    return nullptr;
  }
};

}  // namespace

std::unique_ptr<policy> make_ws_policy() {
  return std::make_unique<ws_policy>();
}

}  // namespace locus::detail
