// locus::resolve_options: the constructor's resolution of a runtime's configuration, on its own.
#include "config/config.hpp"
#include "locus/runtime.hpp"
#include "sched/policy.hpp"
#include "topology/topology.hpp"

namespace locus {

options resolve_options(const options& opts) {
  const config::settings s = config::resolve(opts, detail::policy_names());
  // A synthetic description is parsed (and rejected) where a runtime loads it; the real machine
  // has nothing to check.
  if (!s.topology.empty()) (void)topo::topology::synthetic(s.topology, "LOCUS_TOPOLOGY");
  options r;
  r.sched = s.sched;
  r.workers = s.workers;
  if (!s.topology.empty()) r.topology = s.topology;
  r.stack_size = s.stack_size;
  r.stats_at_exit = s.stats_at_exit;
  r.print_config = s.print_config;
  r.pmu = s.pmu;
  r.locality = s.locality;
  if (s.locality_line != 0) r.locality_line = s.locality_line;
  if (!s.trace.empty()) r.trace = s.trace;
  r.workspan = s.workspan;
  r.size_hints = s.size_hints;
  r.size_hint_samples = s.size_hint_samples;
  return r;
}

}  // namespace locus
