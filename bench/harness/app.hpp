// locus-bench's commands (list, info, run, idle, help) and their exit statuses, apart from main()
// so that tests can run a whole command line in-process.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace locus_bench {

// Runs the command line `args` (without the program name): results on `out`, progress and errors
// on `err`. Returns the exit status: 0 done, 1 a run failed (or an unexpected error), 2 a bad
// argument or LOCUS_* variable.
int run_command_line(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace locus_bench
