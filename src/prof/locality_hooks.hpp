// What the runtime calls so that LOCUS_LOCALITY=1 (options::locality) records a whole run: open a
// session when the runtime has started, replay and print it before the runtime goes away.
#pragma once

namespace locus {
class runtime;
}

namespace locus::prof {

// Opens a session on `rt` when its settings ask for one (with a warning on stderr, and no
// session, when another one is already open).
void locality_runtime_started(runtime& rt);
// Closes a session that records `rt`'s workers, which would otherwise outlive them; prints the
// report to stderr when the session was opened by locality_runtime_started.
void locality_runtime_stopping(runtime& rt) noexcept;

}  // namespace locus::prof
