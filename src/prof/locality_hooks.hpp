// What the runtime calls so that LOCUS_LOCALITY=1 (options::locality) records a whole run: open a
// session when the runtime has started, replay and print it before the runtime goes away.
#pragma once

#include <cstddef>
#include <cstdint>

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

// The bytes tasks declare (locus/locality.hpp's touch_* calls), counted per thread whether or
// not a session records them, while at least one user has turned the meter on: what cats learns
// a task's footprint from where no PMU counts cache misses. Declarations made while the meter is
// off are not counted.
void declared_bytes_meter(bool on) noexcept;
// The bytes the calling thread has declared while the meter was on (a running total).
std::uint64_t declared_bytes_here() noexcept;
// Where every declaration made while the meter is on also goes, as declared (learned size hints
// record their lines); one for the process, set once.
using declaration_sink = void (*)(const void* p, std::size_t row_bytes, std::size_t rows,
                                  std::ptrdiff_t stride) noexcept;
void set_declaration_sink(declaration_sink sink) noexcept;

}  // namespace locus::prof
