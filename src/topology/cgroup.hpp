// Private to src/topology: the CPU quota of the process's cgroup and how it caps the workers.
#pragma once

namespace locus::topo {

// The default number of workers: the allowed PUs, capped by the CPU quota rounded up when there
// is one (quota_cpus > 0), and never less than 1. 1.5 CPUs give 2 workers, 0.2 CPUs give 1.
int cap_workers(int allowed_pus, double quota_cpus) noexcept;

}  // namespace locus::topo
