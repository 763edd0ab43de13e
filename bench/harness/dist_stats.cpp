#include "harness/dist_stats.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "harness/json.hpp"

namespace locus_bench {

int launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* s = std::getenv(v); s != nullptr) {
      int rank = 0;
      const std::string_view text(s);
      const auto r = std::from_chars(text.data(), text.data() + text.size(), rank);
      if (r.ec == std::errc{}) return rank;
    }
  }
  return 0;
}

#if LOCUS_BENCH_MPI
std::string dist_stats_json(locus::dist_taskq& q) {
  const std::vector<locus::dist_rank_stats> all = q.gather_stats();
  if (all.empty()) return {};
  std::vector<std::string> ranks;
  for (const auto& s : all) {
    json::object o;
    const auto n = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
    o.num("rank", static_cast<std::int64_t>(s.rank))
        .num("tasks", n(s.tasks))
        .num("steals_sent", n(s.steals_sent))
        .num("steals_sent_node", n(s.steals_sent_node))
        .num("steals_served", n(s.steals_served))
        .num("steals_refused", n(s.steals_refused))
        .num("tasks_sent", n(s.tasks_sent))
        .num("tasks_received", n(s.tasks_received))
        .num("outputs_sent", n(s.outputs_sent))
        .num("bytes_sent", n(s.bytes_sent))
        .num("bytes_received", n(s.bytes_received))
        .num("idle_s", s.idle_seconds)
        .num("comm_wakeups", n(s.comm_wakeups));
    ranks.push_back(o.str());
  }
  std::string out = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) out += (i == 0 ? "" : ",") + ranks[i];
  return out + "]";
}
#endif

}  // namespace locus_bench
