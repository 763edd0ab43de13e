// `locus-bench idle`: how much CPU an idle locus runtime burns after a parallel phase.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace locus_bench {

// Parses `idle [--workers N] [--reps R] [--seconds S]`, runs the probe, prints one line per rep
// and a summary. Throws usage_error on bad arguments.
int run_idle_probe(const std::vector<std::string>& args, std::ostream& out);

}  // namespace locus_bench
