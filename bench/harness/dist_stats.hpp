// What locus-bench needs around the distributed taskq (impl::taskq_mpi): which rank this process
// is, and the ranks' counters as JSON.
#pragma once

#include <string>

#if LOCUS_BENCH_MPI
#include <locus/dist_taskq.hpp>
#endif

namespace locus_bench {

// This process's rank as the MPI launcher (mpirun, srun) announces it, 0 without one. Read from
// the environment, before MPI starts, so that only rank 0 prints.
int launcher_rank();

#if LOCUS_BENCH_MPI
// Collective: every rank's counters since q.reset_stats() as a JSON array on rank 0 (one object
// per rank: rank, tasks, steals_sent, steals_sent_node, steals_served, steals_refused, tasks_sent,
// tasks_received, bytes_sent, bytes_received, idle_s), empty on the others.
std::string dist_stats_json(locus::dist_taskq& q);
#endif

}  // namespace locus_bench
