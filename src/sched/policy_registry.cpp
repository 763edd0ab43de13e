#include <string>

#include "sched/policy.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"

namespace locus::detail {

std::unique_ptr<policy> make_ws_policy();
std::unique_ptr<policy> make_adws_policy();
std::unique_ptr<policy> make_ml_adws_policy();
std::unique_ptr<policy> make_ml_ws_policy();

int policy::on_ready(worker& w, group_state& g) {
  (void)g;
  return w.index;
}

bool policy::deliver(worker& from, int target, work_item* item) {
  return from.rt.at(target).offer(item);
}

const std::vector<policy_entry>& policy_registry() {
  static const std::vector<policy_entry> entries{
      {"ws", "random work stealing, child-first, one task per steal", &make_ws_policy},
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
  };
  return entries;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& e : policy_registry()) names.emplace_back(e.name);
  return names;
}

std::unique_ptr<policy> make_policy(std::string_view name) {
  for (const auto& e : policy_registry()) {
    if (e.name == name) return e.make();
  }
  return nullptr;  // resolve() has already rejected unknown names
}

}  // namespace locus::detail
