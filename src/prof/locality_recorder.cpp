// The recording side of the locality model: the session, the per-worker logs, the declaration
// entry points, and the replay of a closed session in global order.
//
// Global order: a relaxed fetch_add on one shared sequence counter per declaration. Unlike
// per-worker clock readings it needs no synchronised clocks, costs about what a vDSO clock read
// does, and is consistent with happens-before: a declaration made after a join gets a larger
// number than every declaration of the joined children (the counter has one modification order,
// and it agrees with happens-before), so a replay never runs a consumer before its producer. Its
// cache line bounces between workers, but only while a session is open and once per declaration
// (a whole block, not a line), so the perturbation stays small next to the task's work.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <exception>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "locus/locality.hpp"
#include "locus/runtime.hpp"
#include "mem/binding_registry.hpp"
#include "prof/locality_hooks.hpp"
#include "prof/locality_log.hpp"
#include "prof/locality_mapping.hpp"
#include "prof/locality_replay.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/worker.hpp"

namespace locus::locality::detail {
constinit std::atomic<unsigned char> active{0};
}  // namespace locus::locality::detail

namespace locus::prof {
namespace {

using locality::detail::active;
using locality::detail::meter_bit;
using locality::detail::session_bit;

struct binding_event {
  std::uint64_t seq;
  std::uintptr_t begin, end;
  std::optional<mem::page_home> home;
};

// The bindings of the session's runtime (locus/memory.hpp), those in force when it opened and
// every change after, numbered in the sequence of the declarations: the replay places a bound
// page by its binding from that point on.
class binding_log final : public mem::binding_observer {
 public:
  // Called under the registry's lock, which is what orders the events (and their numbers).
  void binding_changed(const void* owner, std::uintptr_t begin, std::uintptr_t end,
                       std::optional<mem::page_home> home) override;

  const void* owner = nullptr;  // the session's runtime's binder
  std::vector<binding_event> events;
  std::uint64_t dropped = 0;
};

struct recorder {
  std::mutex control;  // begin / end; never taken by a declaration
  bool open = false;
  bool opened_by_runtime = false;
  const locus::detail::runtime_impl* rt = nullptr;
  std::size_t line_bytes = 64, page_bytes = 4096;
  bool coherence = true;
  // By worker index; only the first `workers` belong to the open session. Logs are never freed,
  // so a straggler of an earlier session never finds its log gone.
  std::vector<std::unique_ptr<worker_log>> logs;
  std::size_t workers = 0;
  // Declarations of threads that are not the session's workers, when the session attributes them
  // to worker `outside_worker` (-1: it does not). Its `busy` flag doubles as a lock, since any
  // number of such threads may declare at once.
  worker_log outside_log;
  int outside_worker = -1;
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::uint64_t> iteration{0};
  std::atomic<std::uint64_t> unattributed{0};
  binding_log bindings;
};

// Constant-initialised, so it outlives every runtime (the default runtime's destructor closes
// its session at exit).
constinit recorder g;

// The meter of declared bytes: how many want it, and each thread's count.
std::mutex meter_lock;
int meter_users = 0;
thread_local std::uint64_t declared_bytes = 0;
std::atomic<declaration_sink> sink{nullptr};

// The calling worker's log with its busy flag set, or null when the declaration is not recorded.
// The seq_cst store of `busy` followed by the seq_cst load of `active` pairs with end()'s store
// of `active` then loads of `busy`: either end() sees the worker busy and waits, or the worker
// sees the session closed and leaves the log alone.
worker_log* enter() noexcept {
  if ((active.load(std::memory_order_acquire) & session_bit) == 0) return nullptr;
  locus::detail::worker* w = locus::detail::current_worker();
  worker_log* log = nullptr;
  if (w != nullptr && &w->rt == g.rt && static_cast<std::size_t>(w->index) < g.workers) {
    log = g.logs[static_cast<std::size_t>(w->index)].get();
    log->busy.store(true, std::memory_order_seq_cst);
  } else if (g.outside_worker >= 0) {
    // A read of outside_worker racing with begin() is excluded: begin() writes it before it sets
    // `active`, which this thread has just seen set.
    log = &g.outside_log;
    bool expected = false;
    while (!log->busy.compare_exchange_weak(expected, true, std::memory_order_seq_cst)) {
      expected = false;
      std::this_thread::yield();
    }
  } else {
    g.unattributed.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if ((active.load(std::memory_order_seq_cst) & session_bit) == 0) {
    log->busy.store(false, std::memory_order_release);
    return nullptr;
  }
  return log;
}

void leave(worker_log* log) noexcept {
  log->busy.store(false, std::memory_order_release);
}

std::uint64_t next_seq() noexcept {
  return g.seq.fetch_add(1, std::memory_order_relaxed);
}

void binding_log::binding_changed(const void* by, std::uintptr_t begin, std::uintptr_t end,
                                  std::optional<mem::page_home> home) {
  // Another runtime's binding names that runtime's places: to this session the range is just no
  // longer bound by its own.
  try {
    events.push_back(binding_event{next_seq(), begin, end, by == owner ? home : std::nullopt});
  } catch (...) {
    ++dropped;
  }
}

// The line size of the innermost cache above leaf 0 that reports one.
std::size_t topology_line(const topo::topology& t) {
  for (int a : t.ancestors(0)) {
    const topo::node& n = t.nodes()[static_cast<std::size_t>(a)];
    if (n.kind == topo::node_kind::cache && n.line_bytes != 0) return n.line_bytes;
  }
  return 0;
}

// The session's logs with the worker each is modeled as (the outside log last, when used).
std::vector<std::pair<const worker_log*, int>> session_logs() {
  std::vector<std::pair<const worker_log*, int>> out;
  for (std::size_t w = 0; w < g.workers; ++w)
    out.emplace_back(g.logs[w].get(), static_cast<int>(w));
  if (g.outside_worker >= 0) out.emplace_back(&g.outside_log, g.outside_worker);
  return out;
}

// Replays every log's ranges in sequence order (a k-way merge: each log is already ordered), and
// the binding events between them.
void replay_ranges(locality_replay& model, std::uint64_t& ranges) {
  const std::vector<binding_event>& events = g.bindings.events;
  std::size_t next_event = 0;
  auto bind_before = [&](std::uint64_t seq) {
    for (; next_event < events.size() && events[next_event].seq < seq; ++next_event) {
      const binding_event& e = events[next_event];
      model.set_home(e.begin, e.end, e.home);
    }
  };
  const auto logs = session_logs();
  using cursor = std::pair<std::uint64_t, std::size_t>;  // (seq of the next record, log)
  std::priority_queue<cursor, std::vector<cursor>, std::greater<>> heads;
  std::vector<std::size_t> pos(logs.size(), 0);
  for (std::size_t k = 0; k < logs.size(); ++k) {
    if (logs[k].first->ranges.size() != 0) heads.emplace(logs[k].first->ranges[0].seq, k);
  }
  while (!heads.empty()) {
    const std::size_t k = heads.top().second;
    heads.pop();
    const auto& log = logs[k].first->ranges;
    const range_record& r = log[pos[k]];
    bind_before(r.seq);
    model.access_rows(logs[k].second, r.addr, r.row_bytes, r.rows, r.stride, r.write);
    ++ranges;
    if (++pos[k] < log.size()) heads.emplace(log[pos[k]].seq, k);
  }
}

mapping_result replay_leaves() {
  std::vector<leaf_record> all;
  for (const auto& [log, w] : session_logs()) {
    for (std::size_t i = 0; i < log->leaves.size(); ++i) {
      const leaf_declaration& d = log->leaves[i];
      all.push_back(leaf_record{d.seq, d.iteration, d.id, w});
    }
  }
  return mapping_stability(all);
}

void clear_log(worker_log& log) {
  log.ranges.clear();
  log.leaves.clear();
  log.dropped = 0;
}

// end() without the lock.
locality_report close_session() {
  if (!g.open) throw std::logic_error("locus::locality::end: no session is open");
  active.fetch_and(static_cast<unsigned char>(~session_bit), std::memory_order_seq_cst);
  for (const auto& log : g.logs) {
    while (log->busy.load(std::memory_order_acquire)) std::this_thread::yield();
  }
  while (g.outside_log.busy.load(std::memory_order_acquire)) std::this_thread::yield();
  mem::binding_registry::instance().detach(g.bindings);
  g.open = false;
  const locus::detail::runtime_impl& rt = *g.rt;
  locality_replay model(rt.topology, rt.size(), g.line_bytes, g.page_bytes, g.coherence);
  locality_report r;
  replay_ranges(model, r.ranges);
  const mapping_result m = replay_leaves();
  const std::uint64_t ranges = r.ranges;
  r = model.report();
  r.ranges = ranges;
  r.leaves_compared = m.compared;
  r.leaves_same = m.same;
  r.unattributed = g.unattributed.load(std::memory_order_relaxed);
  // The records can be large; a straggler that saw the session open before it closed only
  // touches `busy`, which stays.
  for (const auto& log : g.logs) {
    r.dropped += log->dropped;
    clear_log(*log);
  }
  r.dropped += g.outside_log.dropped;
  clear_log(g.outside_log);
  r.dropped += g.bindings.dropped;
  g.bindings.events = {};
  g.bindings.dropped = 0;
  g.outside_worker = -1;
  return r;
}

void open_session(runtime& rt, const locality::session_options& opts, bool by_runtime) {
  if (g.open) {
    throw std::logic_error("locus::locality::begin: a session is already open (call end() first)");
  }
  const locus::detail::runtime_impl& impl = rt.impl();
  std::size_t line = opts.line_bytes;
  if (line == 0) line = impl.settings.locality_line;
  if (line == 0) line = topology_line(impl.topology);
  if (line == 0) line = 64;
  if (!std::has_single_bit(line) || !std::has_single_bit(opts.page_bytes)) {
    throw std::invalid_argument("locus::locality::begin: line size " + std::to_string(line) +
                                " and page size " + std::to_string(opts.page_bytes) +
                                " must be powers of two");
  }
  if (opts.attribute_outside_to &&
      (*opts.attribute_outside_to < 0 || *opts.attribute_outside_to >= impl.size())) {
    throw std::invalid_argument("locus::locality::begin: attribute_outside_to = " +
                                std::to_string(*opts.attribute_outside_to) +
                                " is not a worker of the runtime (it has " +
                                std::to_string(impl.size()) + ")");
  }
  g.rt = &impl;
  g.line_bytes = line;
  g.page_bytes = opts.page_bytes;
  g.coherence = opts.coherence;
  g.opened_by_runtime = by_runtime;
  while (g.logs.size() < static_cast<std::size_t>(impl.size())) {
    g.logs.push_back(std::make_unique<worker_log>());
  }
  g.workers = static_cast<std::size_t>(impl.size());
  for (const auto& log : g.logs) clear_log(*log);
  clear_log(g.outside_log);
  g.outside_worker = opts.attribute_outside_to.value_or(-1);
  g.seq.store(0, std::memory_order_relaxed);
  g.iteration.store(0, std::memory_order_relaxed);
  g.unattributed.store(0, std::memory_order_relaxed);
  g.bindings.owner = &impl.binder;
  g.bindings.events.clear();
  g.bindings.dropped = 0;
  mem::binding_registry::instance().attach(g.bindings, &impl.binder);
  g.open = true;
  active.fetch_or(session_bit, std::memory_order_seq_cst);
}

}  // namespace

void declared_bytes_meter(bool on) noexcept {
  const std::lock_guard hold(meter_lock);
  meter_users += on ? 1 : -1;
  if (meter_users == 1 && on) active.fetch_or(meter_bit, std::memory_order_relaxed);
  if (meter_users == 0) {
    active.fetch_and(static_cast<unsigned char>(~meter_bit), std::memory_order_relaxed);
  }
}

std::uint64_t declared_bytes_here() noexcept {
  return declared_bytes;
}

void set_declaration_sink(declaration_sink s) noexcept {
  sink.store(s, std::memory_order_release);
}

void locality_runtime_started(runtime& rt) {
  if (!rt.impl().settings.locality) return;
  std::lock_guard lock(g.control);
  if (g.open) {
    std::fprintf(stderr,
                 "locus: LOCUS_LOCALITY: another runtime's session is open; this runtime's "
                 "workers are not modeled\n");
    return;
  }
  open_session(rt, {}, true);
}

void locality_runtime_stopping(runtime& rt) noexcept {
  std::lock_guard lock(g.control);
  if (!g.open || g.rt != &rt.impl()) return;
  const bool print = g.opened_by_runtime;
  try {
    const locality_report r = close_session();
    if (print) std::fprintf(stderr, "%s", r.to_text().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "locus: LOCUS_LOCALITY: the replay failed: %s\n", e.what());
  }
}

}  // namespace locus::prof

namespace locus::locality {

void begin(runtime& rt, const session_options& opts) {
  std::lock_guard lock(prof::g.control);
  prof::open_session(rt, opts, false);
}

locality_report end() {
  std::lock_guard lock(prof::g.control);
  return prof::close_session();
}

bool recording() noexcept {
  return (detail::active.load(std::memory_order_relaxed) & detail::session_bit) != 0;
}

namespace detail {

void record_range(const void* p, std::size_t row_bytes, std::size_t rows, std::ptrdiff_t stride,
                  bool write) noexcept {
  if (rows == 0 || row_bytes == 0) return;
  if ((active.load(std::memory_order_relaxed) & meter_bit) != 0) {
    prof::declared_bytes += row_bytes * rows;
    if (prof::declaration_sink s = prof::sink.load(std::memory_order_acquire)) {
      s(p, row_bytes, rows, stride);
    }
  }
  prof::worker_log* log = prof::enter();
  if (log == nullptr) return;
  try {
    log->ranges.push(prof::range_record{prof::next_seq(), reinterpret_cast<std::uintptr_t>(p),
                                        row_bytes, stride, rows, write});
  } catch (...) {
    ++log->dropped;
  }
  prof::leave(log);
}

void record_leaf(std::uint64_t id, std::optional<std::uint64_t> iteration) noexcept {
  prof::worker_log* log = prof::enter();
  if (log == nullptr) return;
  const std::uint64_t it =
      iteration ? *iteration : prof::g.iteration.load(std::memory_order_relaxed);
  try {
    log->leaves.push(prof::leaf_declaration{prof::next_seq(), it, id});
  } catch (...) {
    ++log->dropped;
  }
  prof::leave(log);
}

void advance_iteration() noexcept {
  prof::g.iteration.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace detail
}  // namespace locus::locality
