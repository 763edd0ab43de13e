// tao: the global scheduler of Task Assembly Objects (seed 003: Pericàs, §3.2, Listing 1). Each
// worker has a PolyTask queue of simple tasks and assemblies, used LIFO by its owner and stolen
// FIFO by random thieves (Cilk-5's policy, which the paper follows: the core's deque), and an
// assembly queue, looked at first: the first lane of its inbox, where a worker that takes an
// assembly puts one member for each of the `width` workers that share the smallest cache level
// around it holding that many (locus::assembly, sched/gang.hpp), under their locks taken in one
// global order, so that racing assemblies cannot deadlock.
//
// Table 3 of the paper runs with and without stealing of PolyTasks: LOCUS_TAO_STEAL=0 turns it
// off, and work then spreads only through assemblies and their placement (assembly::place_on).
// Plain task groups run as under ws (child-first spawns, a random victim per attempt), so a
// program can mix both, and an assembly's execute can itself use task groups.
#include <cstdlib>
#include <memory>
#include <vector>

#include "config/config.hpp"
#include "sched/context.hpp"
#include "sched/policy.hpp"

namespace locus::detail {
namespace {

class tao_policy final : public policy_base<tao_policy> {
 public:
  void attach(const topo::topology& /*topology*/, int /*workers*/) override {
    if (const char* v = config::env_value("LOCUS_TAO_STEAL")) {
      steal_ = config::parse_bool("LOCUS_TAO_STEAL", v);
    }
  }

  std::vector<policy_setting> settings() const override {
    return {{"LOCUS_TAO_STEAL", steal_ ? "1" : "0"}};
  }

  work_item* find_work(context& ctx) override {
    if (!steal_) return nullptr;
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      if (const steal_result r = ctx.steal(ctx.random_victim())) return r.item;
    }
    return nullptr;
  }

 private:
  bool steal_ = true;
};

}  // namespace

std::unique_ptr<policy> make_tao_policy() {
  return std::make_unique<tao_policy>();
}

}  // namespace locus::detail
