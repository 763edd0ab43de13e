#include <mutex>
#include <string>

#include "sched/policy.hpp"

namespace locus::detail {

std::unique_ptr<policy> make_ws_policy();
std::unique_ptr<policy> make_adws_policy();
std::unique_ptr<policy> make_ml_adws_policy();
std::unique_ptr<policy> make_ml_ws_policy();
std::unique_ptr<policy> make_numa_ws_policy();
std::unique_ptr<policy> make_hws_policy();
std::unique_ptr<policy> make_cats_policy();
std::unique_ptr<policy> make_tao_policy();

namespace {

struct registry {
  std::mutex lock;
  std::vector<policy_entry> entries{
      {"ws",
       "random work stealing, child-first, one continuation or half the queued tasks per steal",
       &make_ws_policy},
      {"adws", "almost deterministic work stealing (single level): work hints map tasks to workers",
       &make_adws_policy},
      {"ml-adws",
       "multi-level ADWS: groups whose size_hint fits a cache are tied to it, ADWS at each level, "
       "with cache hierarchy flattening",
       &make_ml_adws_policy},
      {"ml-ws",
       "multi-level work stealing: groups whose size_hint fits a cache are tied to it, random "
       "stealing at each level",
       &make_ml_ws_policy},
      {"numa-ws",
       "NUMA-WS: steals biased towards near places, frames pushed lazily to the place their "
       "hint names (single-entry mailboxes)",
       &make_numa_ws_policy},
      {"hws",
       "HotSLAW: split private/public bounded queues, help-first until full then serial, "
       "nearest-level-first victims, one task per steal inside the top level and half across",
       &make_hws_policy},
      {"cats",
       "CATS: the first iteration profiled (footprints by spawn path), then subtrees that fit a "
       "package's shared cache run inside one package, one at a time; head cores share the rest",
       &make_cats_policy},
      {"tao",
       "Task Assembly Objects: assemblies run by several workers that share a cache, from "
       "assembly queues looked at first; PolyTask queues stolen FIFO by random thieves",
       &make_tao_policy},
  };
};

registry& the_registry() {
  static registry r;
  return r;
}

}  // namespace

std::vector<policy_entry> policy_registry() {
  registry& r = the_registry();
  const std::lock_guard hold(r.lock);
  return r.entries;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& e : policy_registry()) names.push_back(e.name);
  return names;
}

std::unique_ptr<policy> make_policy(std::string_view name) {
  for (const auto& e : policy_registry()) {
    if (e.name == name) return e.make();
  }
  return nullptr;  // resolve() has already rejected unknown names
}

bool register_policy(policy_entry entry) {
  registry& r = the_registry();
  const std::lock_guard hold(r.lock);
  for (const auto& e : r.entries) {
    if (e.name == entry.name) return false;
  }
  r.entries.push_back(std::move(entry));
  return true;
}

}  // namespace locus::detail
