#include "sched/runtime_impl.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "sched/fork_join.hpp"
#include "sched/futex.hpp"
#include "sched/task_frame.hpp"

namespace locus::detail {
namespace {

int worker_count(const config::settings& s, const topo::topology& t) {
  const int n = s.workers.value_or(t.default_workers());
  if (n > t.num_leaves()) {
    throw config_error("locus: invalid LOCUS_WORKERS='" + std::to_string(n) +
                       "'; accepted values: 1 to " + std::to_string(t.num_leaves()) +
                       " (the processing units of the topology '" + t.describe() +
                       "'; set LOCUS_TOPOLOGY to a larger synthetic topology to test more "
                       "workers)");
  }
  return n;
}

// The machine the workers run on: the leaves they use, spread evenly over its places when they
// do not use them all.
topo::topology load_topology(const config::settings& s) {
  topo::topology whole = s.topology.empty()
                             ? topo::topology::detect()
                             : topo::topology::synthetic(s.topology, "LOCUS_TOPOLOGY");
  const int workers = worker_count(s, whole);
  return topo::topology::spread_over_places(std::move(whole), workers);
}

// The policy learns the machine before the workers exist (it may replace their queues); the
// worker that starts roots is its answer then.
std::optional<int> attach_policy(policy& p, const topo::topology& t, int workers) {
  p.attach(t, workers);
  const std::optional<int> root = p.root_worker();
  if (root && (*root < 0 || *root >= workers)) {
    throw std::logic_error("locus: the scheduler's root_worker() names worker " +
                           std::to_string(*root) + " of " + std::to_string(workers));
  }
  return root;
}

// Sizes are learned for, or dropped from, a policy that sees groups begin: the others read none.
std::unique_ptr<size_learner> make_learner(const config::settings& s, const topo::topology& t,
                                           const hook_set& hooks) {
  if (s.size_hints == size_hint_source::given || !hooks.begins_groups()) return nullptr;
  std::size_t line = s.locality_line;
  for (int a : t.ancestors(0)) {
    const topo::node& n = t.nodes()[static_cast<std::size_t>(a)];
    if (line == 0 && n.kind == topo::node_kind::cache) line = n.line_bytes;
  }
  return std::make_unique<size_learner>(s.size_hints, s.size_hint_samples, line != 0 ? line : 64,
                                        worker_count(s, t));
}

}  // namespace

void runtime_impl::build_distances(int n) {
  distance_.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      distance_[static_cast<std::size_t>(a * n + b)] = topology.distance(a, b);
    }
  }
  const int levels = distance_levels();
  by_distance_.assign(static_cast<std::size_t>(n), {});
  level_start_.assign(static_cast<std::size_t>(n), std::vector<int>(levels + 1, 0));
  for (int a = 0; a < n; ++a) {
    auto& order = by_distance_[static_cast<std::size_t>(a)];
    auto& start = level_start_[static_cast<std::size_t>(a)];
    for (int level = 0; level < levels; ++level) {
      start[static_cast<std::size_t>(level)] = static_cast<int>(order.size());
      for (int b = 0; b < n; ++b) {
        if (b != a && distance(a, b) == level) order.push_back(b);
      }
    }
    start[static_cast<std::size_t>(levels)] = static_cast<int>(order.size());
  }
}

runtime_impl::runtime_impl(const options& opts)
    : settings(config::resolve(opts, policy_names())),
      topology(load_topology(settings)),
      sched(make_policy(settings.sched)),
      hooks(sched->hooks()),
      learner(make_learner(settings, topology, hooks)),
      root_worker(attach_policy(*sched, topology, worker_count(settings, topology))),
      pmu(settings.pmu, worker_count(settings, topology)),
      arena_(settings.stack_size) {
  calibrate_clock();
  const int n = worker_count(settings, topology);
  if (pmu.enabled()) pmu_opened_ = std::make_unique<std::latch>(n);
  if (settings.workspan && n != 1) {
    throw config_error("locus: invalid LOCUS_WORKSPAN=1 with " + std::to_string(n) +
                       " workers; work and span are measured on a one-worker run: set "
                       "LOCUS_WORKERS=1 (options::workers = 1)");
  }
  if (!settings.trace.empty()) {
    trace_ = std::make_unique<prof::trace_file>(settings.trace, settings.trace_variable, n);
  }
  if (settings.workspan) workspan_ = std::make_unique<prof::workspan_meter>();
  ult::install_overflow_handler();
  std::vector<std::unique_ptr<ready_queue>> queues(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    queues[static_cast<std::size_t>(i)] = sched->make_queue(i);
    any_queue_replaced_ = any_queue_replaced_ || queues[static_cast<std::size_t>(i)] != nullptr;
  }
  workers_.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    workers_.push_back(std::make_unique<worker>(*this, i, i, distance_levels(), arena_,
                                                std::move(queues[static_cast<std::size_t>(i)])));
    if (trace_) workers_.back()->trace = &trace_->buffer(i);
    workers_.back()->workspan = workspan_.get();
  }
  build_distances(n);
  roots_one_at_a_time_ = !sched->concurrent_roots();
  seat_index_ = root_worker.value_or(0);
  seat_open_ = !pmu.enabled();
  pinned_ = topology.can_pin(n);
  if (settings.print_config) std::fprintf(stderr, "%s", describe().c_str());
  for (auto& wp : workers_) {
    worker* w = wp.get();
    w->thread = std::thread([this, w, pin = pinned_] {
      set_current_worker(w);
      if (pin && topology.pin_current_thread(w->leaf)) w->cpu_watch.start(clock_ns());
      ult::prepare_thread_for_overflow_reports();
      w->own_native = ult::describe_native_stack();
      w->native = w->own_native;
      w->running = &w->native;
      if (pmu_opened_) {
        pmu.open_on_this_thread(w->index);
        pmu_opened_->count_down();
      }
      w->main_loop();
      set_current_worker(nullptr);
    });
  }
  // pmu_start() right after construction must find every worker's counters open.
  if (pmu_opened_) pmu_opened_->wait();
}

runtime_impl::~runtime_impl() {
  stopping_.store(true, std::memory_order_release);
  wake_all();
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  if (settings.stats_at_exit) std::fprintf(stderr, "%s", stats().to_text().c_str());
  if (trace_) {
    trace_->write("locus (" + settings.sched + ", " + std::to_string(size()) + " workers)");
  }
}

void runtime_impl::reject_place(int place) const {
  throw std::out_of_range(
      (place == bad_place ? std::string("locus: a negative place id other than any_place")
                          : "locus: place " + std::to_string(place)) +
      " is not one of this runtime's " + std::to_string(num_places()) + " places (0 to " +
      std::to_string(num_places() - 1) + "); locus::any_place clears a place hint");
}

void runtime_impl::admit_root(task_base& task) {
  check_place(task.options.place);
  task.submitted = true;
  task_frame& frame = frame_of(task);
  make_root_frame(frame);
  // A task spawned from outside with a place hint carries it as a root.
  if (task.options.place != inherit_place) set_place(frame, task.options.place);
  roots_active_.fetch_add(1, std::memory_order_relaxed);
}

void runtime_impl::submit(std::unique_ptr<task_base> task) {
  admit_root(*task);
  if (root_worker) {
    deliver(*root_worker, task.release(), lane::normal);
    return;
  }
  {
    std::lock_guard lock(submit_mutex_);
    submitted_.push_back(std::move(task));
    submitted_count_.fetch_add(1, std::memory_order_seq_cst);
  }
  // Fenced, unlike notify_work: with no root running a sleeper may sleep without a timeout, and
  // one that announced itself after this scan sees the root when it looks for work.
  wake_a_sleeper();
}

task_base* runtime_impl::take_submitted() noexcept {
  std::lock_guard lock(submit_mutex_);
  if (submitted_.empty()) return nullptr;
  task_base* t = submitted_.front().release();
  submitted_.pop_front();
  submitted_count_.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

bool runtime_impl::any_work_visible() const noexcept {
  if (submitted_count_.load(std::memory_order_seq_cst) != 0) return true;
  for (const auto& w : workers_) {
    if (!w->queue().empty()) return true;
  }
  return false;
}

bool runtime_impl::shared_work_in_sight(const worker& w) const noexcept {
  return any_work_visible() || !w.mail.empty() || stopping();
}

bool runtime_impl::work_in_sight(worker& w) const noexcept {
  return shared_work_in_sight(w) || sched->has_work(w.ctx);
}

bool runtime_impl::sleep(worker& w, bool giving_up_seat) noexcept {
  // Read while this thread runs the worker: after the wait, a caller may sit in its seat.
  const bool hosting = w.hosting();
  std::atomic<std::uint32_t>& word_ref = hosting ? guest_word_ : w.wake_word;
  const std::uint32_t word = word_ref.load(std::memory_order_seq_cst);
  // Announce, then look: a deliverer makes its work visible, then looks for the announcement
  // (both seq_cst), so one of the two sees the other.
  w.asleep.store(true, std::memory_order_seq_cst);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  bool called = true;
  // The seat's own thread leaves its seat while it sleeps: a caller of exec may sit in. Asked
  // for the seat, it sleeps even with work in sight, which the caller in its place will see.
  const bool leaves_seat = w.index == seat_index_ && !hosting;
  std::uint32_t wanted = seat_wanted;
  if (giving_up_seat ? seat_.compare_exchange_strong(wanted, seat_free, std::memory_order_seq_cst)
                     : !work_in_sight(w) && !w.guest_done()) {
    w.counters.sleeps.add();
    if (leaves_seat && !giving_up_seat) seat_.store(seat_free, std::memory_order_seq_cst);
    // Pushes check for sleepers without a fence (the spawn path stays cheap), so a wake-up can
    // be missed while tasks run; a short timeout bounds that. With no root running, nothing
    // can create work without a fenced wake-up (submit, deliver), and the sleep is unbounded:
    // an idle runtime uses no CPU.
    static constexpr timespec missed_wakeup_bound{0, 2'000'000};
    const bool busy = roots_active_.load(std::memory_order_relaxed) > 0;
    futex_wait(&word_ref, word, busy ? &missed_wakeup_bound : nullptr);
    called = word_ref.load(std::memory_order_relaxed) != word;
    // Awake, the caller sees for itself what it was woken for.
    if (hosting) seat_.fetch_and(~seat_poked, std::memory_order_seq_cst);
    // Back from a caller's stay in the seat: the caller left work behind, or none.
    if (leaves_seat && reclaim_seat(w)) called = false;
    if (called) w.counters.wakeups.add();
  }
  w.asleep.store(false, std::memory_order_relaxed);
  // On every way out, also when work showed up before the wait: a pusher may have seen this
  // sleeper and claimed the one wake-up in flight, and left alone that claim would keep every
  // later push from waking anyone (sleepers then only notice work at the 2 ms timeout).
  waking_.store(false, std::memory_order_relaxed);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return called;
}

bool runtime_impl::any_worker_contended(std::uint64_t now_ns) const noexcept {
  for (const auto& w : workers_) {
    if (w->cpu_watch.contended_lately(now_ns)) return true;
  }
  return false;
}

void runtime_impl::deliver(int target, work_item* item, lane where) {
  at(target).mail.put(item, where);
  wake(target);
}

void runtime_impl::wake(int target) noexcept {
  worker& t = at(target);
  if (!t.asleep.load(std::memory_order_seq_cst)) return;
  wake_sleeper(t);
}

void runtime_impl::wake_sleeper(worker& t) noexcept {
  if (t.index == seat_index_) {
    // A caller sitting in the seat sleeps on a word of its own, so that waking it does not wake
    // the seat's own thread, asleep on the worker's word meanwhile.
    std::uint32_t s = seat_.load(std::memory_order_seq_cst);
    while (caller_seated(s)) {
      if ((s & seat_poked) != 0 ||
          seat_.compare_exchange_weak(s, s | seat_poked, std::memory_order_seq_cst)) {
        bump(guest_word_);
        return;
      }
    }
  }
  bump(t.wake_word);
}

void runtime_impl::bump(std::atomic<std::uint32_t>& word) noexcept {
  word.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&word);
}

void runtime_impl::wake_one() noexcept {
  // Nobody was asleep after all: nobody else will release the claim.
  if (!wake_a_sleeper()) waking_.store(false, std::memory_order_relaxed);
}

bool runtime_impl::wake_a_sleeper() noexcept {
  // Any sleeper will do: the new work is stealable by every worker the policy lets steal, and a
  // sleeper that may not take it goes back to sleep. Starting where the last search ended
  // spreads the wake-ups.
  const int n = size();
  const int start = static_cast<int>(next_to_wake_.fetch_add(1, std::memory_order_relaxed) %
                                     static_cast<unsigned>(n));
  for (int i = 0; i < n; ++i) {
    worker& t = at((start + i) % n);
    if (t.asleep.load(std::memory_order_seq_cst)) {
      wake_sleeper(t);
      return true;
    }
  }
  return false;
}

void runtime_impl::wake_all() noexcept {
  bump(guest_word_);
  for (auto& t : workers_) {
    bump(t->wake_word);
  }
}

locus::stats runtime_impl::stats() const {
  locus::stats s;
  s.scheduler = settings.sched;
  s.level_names = topology.level_names();
  s.suppressed_exceptions = suppressed_.load(std::memory_order_relaxed);
  s.canceled_tasks = canceled_.load(std::memory_order_relaxed);
  s.policy = sched->figures();
  if (learner) {
    for (policy_figure& f : learner->figures()) s.policy.push_back(std::move(f));
  }
  const std::uint64_t now = clock_ns();
  for (const auto& w : workers_) {
    const worker_counters& c = w->counters;
    worker_stats ws;
    ws.worker = w->index;
    // Include the phase the worker is in right now, so that busy + idle + overhead covers the
    // whole time since the last reset.
    std::uint64_t busy = c.busy_ns.get(), idle = c.idle_ns.get(), overhead = c.overhead_ns.get();
    const std::uint64_t since =
        std::max(w->phase_since_ns.load(std::memory_order_relaxed), stats_epoch_ns());
    if (now > since) {
      switch (w->current_phase.load(std::memory_order_relaxed)) {
        case worker::phase::busy:
          busy += now - since;
          break;
        case worker::phase::idle:
          idle += now - since;
          break;
        case worker::phase::overhead:
          overhead += now - since;
          break;
      }
    }
    ws.busy_s = static_cast<double>(busy) * 1e-9;
    ws.idle_s = static_cast<double>(idle) * 1e-9;
    ws.overhead_s = static_cast<double>(overhead) * 1e-9;
    ws.spawns = c.spawns.get();
    ws.serial_spawns = c.serial_spawns.get();
    ws.suspensions = c.suspensions.get();
    ws.local_resumes = c.local_resumes.get();
    ws.chained_tasks = c.chained_tasks.get();
    ws.sleeps = c.sleeps.get();
    ws.wakeups = c.wakeups.get();
    ws.pushes = c.pushes.get();
    ws.migrations = c.migrations.get();
    ws.cpu_unbinds = c.cpu_unbinds.get();
    ws.caller_moves = c.caller_moves.get();
    ws.stolen_items = c.stolen_items.get();
    ws.lost_races = c.lost_races.get();
    for (const auto& x : c.steals) ws.steals_by_level.push_back(x.get());
    for (const auto& x : c.failed_steals) ws.failed_steals_by_level.push_back(x.get());
    for (const auto& x : c.stolen_items_by_level) ws.stolen_items_by_level.push_back(x.get());
    ws.pmu = pmu.read(w->index);
    s.workers.push_back(std::move(ws));
  }
  return s;
}

void runtime_impl::reset_stats() noexcept {
  suppressed_.store(0, std::memory_order_relaxed);
  canceled_.store(0, std::memory_order_relaxed);
  pmu.rebaseline();
  if (workspan_) workspan_->reset();
  stats_epoch_ns_.store(clock_ns(), std::memory_order_relaxed);
  for (auto& w : workers_) {
    worker_counters& c = w->counters;
    for (counter* x :
         {&c.spawns, &c.serial_spawns, &c.suspensions, &c.local_resumes, &c.chained_tasks,
          &c.sleeps, &c.wakeups, &c.pushes, &c.migrations, &c.cpu_unbinds, &c.caller_moves,
          &c.stolen_items, &c.lost_races, &c.busy_ns, &c.idle_ns, &c.overhead_ns}) {
      x->reset();
    }
    for (auto& x : c.steals) x.reset();
    for (auto& x : c.failed_steals) x.reset();
    for (auto& x : c.stolen_items_by_level) x.reset();
  }
}

std::string runtime_impl::describe() const {
  std::ostringstream out;
  out << "locus configuration\n";
  out << "  LOCUS_SCHED        = " << settings.sched << '\n';
  out << "  LOCUS_WORKERS      = " << size() << '\n';
  for (const policy_setting& s : sched->settings()) {
    out << "  " << std::left << std::setw(18) << s.name << " = " << s.value << '\n';
  }
  out << "  LOCUS_TOPOLOGY     = " << (settings.topology.empty() ? "(this machine) " : "")
      << topology.describe() << '\n';
  out << "  pinned             = " << (pinned_ ? "yes" : "no") << '\n';
  out << "  LOCUS_STACK_SIZE   = " << settings.stack_size << '\n';
  out << "  LOCUS_STATS        = " << (settings.stats_at_exit ? 1 : 0) << '\n';
  out << "  LOCUS_PMU          = " << (settings.pmu ? 1 : 0) << '\n';
  out << "  LOCUS_LOCALITY     = " << (settings.locality ? 1 : 0) << '\n';
  out << "  LOCUS_LOCALITY_LINE = "
      << (settings.locality_line != 0 ? std::to_string(settings.locality_line) : "(the topology's)")
      << '\n';
  out << "  LOCUS_TRACE        = " << (settings.trace.empty() ? "(off)" : settings.trace) << '\n';
  out << "  LOCUS_WORKSPAN     = " << (settings.workspan ? 1 : 0) << '\n';
  out << "  LOCUS_SIZE_HINTS   = " << config::size_hint_source_name(settings.size_hints);
  if (settings.size_hints != size_hint_source::given && !learner) {
    out << " (unused: " << settings.sched << " reads no size hints)";
  } else if (learner && settings.size_hints != size_hint_source::none) {
    out << " (at most " << settings.size_hint_samples << " lines recorded)";
  }
  out << '\n';
  out << "  memory_binding     = ";
  switch (binder.support()) {
    case memory_binding::os:
      out << "os (hwloc)";
      break;
    case memory_binding::modeled:
      out << "modeled (synthetic topology: recorded for the locality model)";
      break;
    case memory_binding::unavailable:
      out << "unavailable (" << binder.unavailable_reason() << ")";
      break;
  }
  out << '\n';
  return out.str();
}

}  // namespace locus::detail
