#include "dist/dist_engine.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "dist/steal_protocol.hpp"
#include "locus/hints.hpp"

namespace locus::detail {
namespace {

namespace wire = dist_wire;
using clock = std::chrono::steady_clock;

// A thief that got nothing waits this long before it asks again, doubling up to the maximum:
// a rank with no work keeps asking, but without flooding the others.
constexpr std::chrono::microseconds first_backoff{10};
constexpr std::chrono::microseconds max_backoff{1000};

// A request that finds fewer than half of the fill target in the pool of a rank with work waits
// for this rank's puts to fill it, up to this long: a thief then gets a batch worth its round trip
// rather than the one or two tasks a pool of one level's puts holds.
constexpr std::chrono::microseconds fill_deadline{1000};
constexpr std::size_t fill_for_half = 128;

void invoke(const taskq_function& fn, void* in, void* out) {
  if (fn.thunk != nullptr) {
    fn.thunk(fn.fn, in, out);
  } else {
    fn.fn(in, out);
  }
}

std::uint64_t elapsed_ns(clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - since).count());
}

std::string describe(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const std::exception& e) {
    return std::string("a task threw: ") + e.what();
  } catch (...) {
    return "a task threw an exception that is not a std::exception";
  }
}

constexpr std::size_t stat_fields = 13;

}  // namespace

dist_engine::dist_engine(taskq_impl& q, comm_thread& comm, const dist_config& config)
    : q_(q),
      comm_(comm),
      config_(config),
      fill_target_(std::min(config.pool, config.chunk == 0 ? fill_for_half : 2 * config.chunk)),
      fills_(std::any_of(q.functions.begin(), q.functions.end(),
                         [](const taskq_function& f) { return f.out_size == 0; })),
      prefetch_below_(std::max<std::size_t>(1, fill_target_ / 2)),
      term_(comm.rank(), comm.size()),
      rng_(static_cast<std::minstd_rand::result_type>(comm.rank()) * 7919u + 17u) {
  stats_.puts_base.store(q_.live.puts_total(), std::memory_order_relaxed);
  stats_.wakeups_base.store(comm_.wakeups(), std::memory_order_relaxed);
  comm_.call([this] {
    MPI_Comm_idup(MPI_COMM_WORLD, &comm_world_, &setup_[0]);
    // On MPI_COMM_WORLD, whose collectives every rank posts in this same order (queues are made
    // collectively): this queue's communicator is not usable before its idup completes.
    node_key_ = node_key();
    node_keys_.assign(static_cast<std::size_t>(comm_.size()), 0);
    MPI_Iallgather(&node_key_, 1, MPI_UINT64_T, node_keys_.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD,
                   &setup_[1]);
    comm_.add(this);
  });
}

dist_engine::~dist_engine() {
  stopping_.store(true, std::memory_order_release);
  comm_.poke();
  while (!finished_.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void dist_engine::offer(taskq_frame& f, const taskq_function& fn, const void* in, void* out) {
  auto t = std::make_shared<pool_record>();
  t->fn = &fn;
  t->index = static_cast<std::uint32_t>(&fn - q_.functions.data());
  t->depth = f.depth;
  t->out = out;
  t->frame = &f;
  if (fn.in_size != 0) {
    t->input = std::make_unique_for_overwrite<std::byte[]>(fn.in_size);
    std::memcpy(t->input.get(), in, fn.in_size);
  }
  {
    const std::lock_guard hold(pool_lock_);
    pool_add(t);
    if (wanted_.load(std::memory_order_relaxed) && pool_.size() >= fill_target_) {
      wanted_.store(false, std::memory_order_relaxed);
      comm_.poke();
    }
  }
  f.tg.run([this, t = std::move(t)] { claim_and_run(t); }, locus::parent_first);
}

void dist_engine::pool_add(std::shared_ptr<pool_record> r) {
  ++pool_depths_[r->depth];
  if (r->frame == nullptr) ++pool_imported_;
  pool_.push_back(std::move(r));
}

std::shared_ptr<pool_record> dist_engine::pool_remove(
    std::deque<std::shared_ptr<pool_record>>::iterator at) {
  std::shared_ptr<pool_record> r = std::move(*at);
  pool_.erase(at);
  const auto d = pool_depths_.find(r->depth);
  if (--d->second == 0) pool_depths_.erase(d);
  if (r->frame == nullptr) --pool_imported_;
  return r;
}

void dist_engine::pool_changed() noexcept {
  shallowest_.store(pool_depths_.empty() ? no_record : pool_depths_.begin()->first,
                    std::memory_order_relaxed);
  imported_.store(pool_imported_, std::memory_order_release);
  pool_size_.store(pool_.size(), std::memory_order_relaxed);
}

void dist_engine::claim_and_run(const std::shared_ptr<pool_record>& t) {
  {
    const std::lock_guard hold(pool_lock_);
    if (t->st != pool_record::state::queued) {
      // Shipped: the thief's rank counts it live now, and the frame waits for its output.
      q_.live.end(this_thread_live_slot());
      return;
    }
    t->st = pool_record::state::claimed;
    // Claims come mostly newest first, as the owner's queue pops them.
    const auto it = std::find(pool_.rbegin(), pool_.rend(), t);
    pool_remove(std::next(it).base());
    pool_changed();
  }
  taskq_run(
      q_,
      [](void* self) {
        auto* task = static_cast<pool_record*>(self);
        invoke(*task->fn, task->input.get(), task->out);
      },
      t.get(), nullptr, t->depth + 1);
}

bool dist_engine::run_import() noexcept {
  if (imported_.load(std::memory_order_acquire) == 0) return false;
  std::shared_ptr<pool_record> t;
  bool low = false;
  {
    const std::lock_guard hold(pool_lock_);
    // The newest: thieves take the oldest.
    const auto it = std::find_if(pool_.rbegin(), pool_.rend(),
                                 [](const auto& r) { return r->frame == nullptr; });
    if (it == pool_.rend()) return false;
    t = pool_remove(std::next(it).base());
    t->st = pool_record::state::claimed;
    pool_changed();
    low = fills_ && pool_imported_ < prefetch_below_;
  }
  // Asks for more while the last imports run, rather than after: most tasks of a batch from a
  // deep tree are leaves, done long before a round trip.
  if (low) hungry();
  run_imported(*t);
  return true;
}

void dist_engine::run_imported(pool_record& t) noexcept {
  const taskq_function& fn = *t.fn;
  std::vector<std::byte> out(fn.out_size);
  // The output buffer is a byte vector's: as aligned as operator new makes it, which taskq
  // requires of every output type.
  struct call {
    const taskq_function* fn;
    void* in;
    void* out;
  } c{&fn, t.input.get(), out.data()};
  try {
    taskq_run(
        q_,
        [](void* self) {
          auto* c = static_cast<call*>(self);
          invoke(*c->fn, c->in, c->out);
        },
        &c, nullptr, 1);
  } catch (...) {
    fail(std::current_exception());
  }
  if (t.handle != no_result) {
    const std::lock_guard hold(results_lock_);
    results_.push_back({t.origin, t.handle, std::move(out)});
    has_results_.store(true, std::memory_order_release);
    comm_.poke();
  }
  // The second of the two counts taken at import: this rank stays active until the output is
  // in the communication thread's hands.
  q_.live.end(this_thread_live_slot());
}

void dist_engine::idle() noexcept {
  hungry();
  const auto t0 = clock::now();
  std::this_thread::sleep_for(std::chrono::microseconds(20));
  stats_.idle_ns.fetch_add(elapsed_ns(t0), std::memory_order_relaxed);
}

void dist_engine::help() noexcept {
  if (!run_import()) idle();
}

std::uint64_t dist_engine::begin_epoch() noexcept {
  return entered_.fetch_add(1, std::memory_order_acq_rel) + 1;
}

void dist_engine::await_epoch(std::uint64_t epoch) noexcept {
  while (done_.load(std::memory_order_acquire) < epoch) help();
}

bool dist_engine::all_empty() noexcept {
  // The first call enters an epoch; the calls after it test it, until one reports it ended.
  if (testing_ == 0) testing_ = begin_epoch();
  if (!run_import()) hungry();
  if (done_.load(std::memory_order_acquire) < testing_) return false;
  testing_ = 0;
  return true;
}

void dist_engine::fail(std::exception_ptr error) noexcept {
  comm_.abort("locus::dist_taskq: " + describe(std::move(error)));
}

// ---- communication thread -------------------------------------------------------------------

void dist_engine::send(int to, int tag, std::vector<std::byte> bytes) {
  outgoing& o = sends_.emplace_back();
  o.bytes = std::move(bytes);
  MPI_Isend(o.bytes.data(), static_cast<int>(o.bytes.size()), MPI_BYTE, to, tag, comm_world_,
            &o.request);
  comm_.ring(to);
}

bool dist_engine::awaited() noexcept {
  const bool idled = waited_.exchange(false, std::memory_order_seq_cst);
  // Neither a deferred request's deadline nor a send or collective still to complete rings a
  // bell: they need this rank's own polls.
  return idled || !ready_ || !sends_.empty() || !deferred_.empty() || gather_ != MPI_REQUEST_NULL ||
         stopping_.load(std::memory_order_relaxed);
}

bool dist_engine::progress() {
  if (!ready_) {
    int done = 0;
    MPI_Testall(static_cast<int>(setup_.size()), setup_.data(), &done, MPI_STATUSES_IGNORE);
    if (done == 0) return false;
    for (int r = 0; r < comm_.size(); ++r) {
      if (r == comm_.rank()) continue;
      (node_keys_[static_cast<std::size_t>(r)] == node_key_ ? near_ : far_).push_back(r);
    }
    ready_ = true;
  }
  bool busy = receive();
  busy = send_results() || busy;
  busy = complete_sends() || busy;
  busy = serve_deferred() || busy;
  busy = try_steal() || busy;
  busy = detect_termination() || busy;
  if (gather_ != MPI_REQUEST_NULL) {
    int done = 0;
    MPI_Test(&gather_, &done, MPI_STATUS_IGNORE);
    if (done != 0) {
      gathered_.set_value();
      busy = true;
    }
  }
  if (stopping_.load(std::memory_order_acquire)) busy = teardown() || busy;
  return busy;
}

bool dist_engine::receive() {
  bool any = false;
  // A bounded batch per round, so that sends and steals keep their turn under a flood.
  for (int i = 0; i < 64; ++i) {
    int flag = 0;
    MPI_Message message;
    MPI_Status status;
    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_world_, &flag, &message, &status);
    // A probe's progress may only bring a message in from the transport (Open MPI's shared
    // memory: the first probe after a message arrived misses it, the second matches it); one
    // more probe, so that a round woken by a ring finds the message that rang.
    if (flag == 0 && i == 0) {
      MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_world_, &flag, &message, &status);
    }
    if (flag == 0) break;
    int size = 0;
    MPI_Get_count(&status, MPI_BYTE, &size);
    std::vector<std::byte> msg(static_cast<std::size_t>(size));
    MPI_Mrecv(msg.data(), size, MPI_BYTE, &message, MPI_STATUS_IGNORE);
    if (config_.delay_us != 0) {
      std::uniform_int_distribution<unsigned> pick(0, config_.delay_us);
      std::this_thread::sleep_for(std::chrono::microseconds(pick(rng_)));
    }
    handle(status.MPI_SOURCE, status.MPI_TAG, msg);
    any = true;
  }
  return any;
}

void dist_engine::handle(int from, int tag, const std::vector<std::byte>& msg) {
  switch (tag) {
    case wire::steal_request:
      serve_steal(from, true);
      break;
    case wire::tasks:
      take_tasks(msg);
      break;
    case wire::result:
      take_result(msg);
      break;
    case wire::token:
      term_.token_arrived(wire::read_token(msg));
      break;
    case wire::done:
      term_.done_arrived(wire::read_epoch(msg));
      done_.store(term_.done_epoch(), std::memory_order_release);
      break;
    default:
      comm_.abort("locus::dist_taskq: a message with unknown tag " + std::to_string(tag) +
                  " from rank " + std::to_string(from));
  }
}

namespace {

// Never a task with an output back to the rank it came from: the two ranks then traded the same
// tasks back and forth, each steal one task, while the joins waiting for them idled. An
// output-less task has no join waiting for it and may go anywhere.
bool may_go_to(const pool_record& r, int thief) noexcept {
  return r.frame != nullptr || r.origin != thief || r.fn->out_size == 0;
}

}  // namespace

std::size_t dist_engine::eligible_for(int thief) const {
  return static_cast<std::size_t>(std::count_if(
      pool_.begin(), pool_.end(), [thief](const auto& r) { return may_go_to(*r, thief); }));
}

bool dist_engine::serve_deferred() {
  if (deferred_.empty()) return false;
  if (wanted_.load(std::memory_order_relaxed) && clock::now() < deferred_until_ && !passive())
    return false;
  wanted_.store(false, std::memory_order_relaxed);
  std::vector<int> thieves;
  thieves.swap(deferred_);
  for (const int thief : thieves) serve_steal(thief, false);
  return true;
}

void dist_engine::serve_steal(int thief, bool may_defer) {
  std::vector<std::shared_ptr<pool_record>> taken;
  {
    const std::lock_guard hold(pool_lock_);
    const std::size_t have = eligible_for(thief);
    if (may_defer && fills_ && 2 * have < fill_target_ && !passive()) {
      if (deferred_.empty()) deferred_until_ = clock::now() + fill_deadline;
      deferred_.push_back(thief);
      wanted_.store(true, std::memory_order_relaxed);
      return;
    }
    const auto eligible = [thief](const std::shared_ptr<pool_record>& r) {
      return may_go_to(*r, thief);
    };
    const std::size_t n = config_.chunk == 0 ? (have + 1) / 2 : std::min(config_.chunk, have);
    auto at = pool_.begin();
    for (std::size_t i = 0; i < n; ++i) {
      // The oldest: in a recursive program, the biggest pieces of work.
      at = std::find_if(at, pool_.end(), eligible);
      const auto offset = at - pool_.begin();
      std::shared_ptr<pool_record> t = pool_remove(at);
      at = pool_.begin() + offset;
      t->st = pool_record::state::shipped;
      // Before the claiming task can see the record shipped (it looks under this lock), so that
      // the frame's join, which follows that task's end, waits for the output. An output-less
      // task is not waited for: nothing of it comes back, and the collective top-level wait
      // covers it.
      if (t->frame != nullptr && t->fn->out_size != 0)
        t->frame->remote_pending.fetch_add(1, std::memory_order_relaxed);
      taken.push_back(std::move(t));
    }
    pool_changed();
  }
  wire::batch_writer batch;
  std::size_t forwarded = 0;
  for (auto& t : taken) {
    const std::span<const std::byte> input(t->input.get(), t->fn->in_size);
    if (t->frame == nullptr) {
      // Passed on: its output goes straight to its origin.
      batch.add({t->index, t->origin, t->handle, input});
      ++forwarded;
      continue;
    }
    if (t->fn->out_size == 0) {
      batch.add({t->index, comm_.rank(), no_result, input});
      continue;
    }
    const std::uint64_t handle = next_handle_++;
    batch.add({t->index, comm_.rank(), handle, input});
    shipped_.emplace(handle, std::move(t));
  }
  const std::uint32_t n = batch.count();
  std::vector<std::byte> bytes = batch.take();
  if (n != 0) {
    term_.basic_sent();
    stats_.steals_served.fetch_add(1, std::memory_order_relaxed);
    stats_.tasks_sent.fetch_add(n, std::memory_order_relaxed);
    stats_.bytes_sent.fetch_add(bytes.size(), std::memory_order_relaxed);
  } else {
    stats_.steals_refused.fetch_add(1, std::memory_order_relaxed);
  }
  send(thief, wire::tasks, std::move(bytes));
  // The two counts each passed-on task held here (take_tasks), now that the message counts it.
  const unsigned slot = this_thread_live_slot();
  for (std::size_t i = 0; i < 2 * forwarded; ++i) q_.live.end(slot);
}

void dist_engine::take_tasks(const std::vector<std::byte>& msg) {
  request_out_ = false;
  const std::vector<wire::task> tasks = wire::read_batch(msg);
  near_misses_ = tasks.empty() && request_near_ ? near_misses_ + 1 : 0;
  if (tasks.empty()) {
    backoff_ = backoff_.count() == 0 ? first_backoff : std::min(backoff_ * 2, max_backoff);
    next_steal_ = clock::now() + backoff_;
    return;
  }
  backoff_ = std::chrono::microseconds(0);
  term_.basic_received();
  stats_.tasks_received.fetch_add(tasks.size(), std::memory_order_relaxed);
  stats_.bytes_received.fetch_add(msg.size(), std::memory_order_relaxed);
  std::vector<std::shared_ptr<pool_record>> arrived;
  const unsigned slot = this_thread_live_slot();
  for (const wire::task& w : tasks) {
    if (w.fn >= q_.functions.size() || w.input.size() != q_.functions[w.fn].in_size) {
      comm_.abort("locus::dist_taskq: a task from rank " + std::to_string(w.origin) +
                  " does not match this rank's registered functions (register the same "
                  "functions in the same order on every rank)");
    }
    auto t = std::make_shared<pool_record>();
    t->fn = &q_.functions[w.fn];
    t->index = w.fn;
    t->origin = w.origin;
    t->handle = w.handle;
    if (!w.input.empty()) {
      t->input = std::make_unique_for_overwrite<std::byte[]>(w.input.size());
      std::memcpy(t->input.get(), w.input.data(), w.input.size());
    }
    // Two counts: one the task's run ends, one its output's hand-over ends (run_imported).
    q_.live.put(slot);
    q_.live.put(slot);
    arrived.push_back(std::move(t));
  }
  const std::lock_guard hold(pool_lock_);
  for (auto& t : arrived) pool_add(std::move(t));
  pool_changed();
}

void dist_engine::take_result(const std::vector<std::byte>& msg) {
  std::span<const std::byte> out;
  const std::uint64_t handle = wire::read_result(msg, out);
  const auto it = shipped_.find(handle);
  if (it == shipped_.end() || out.size() != it->second->fn->out_size) {
    comm_.abort("locus::dist_taskq: an output for a task this rank did not ship");
  }
  term_.basic_received();
  stats_.bytes_received.fetch_add(msg.size(), std::memory_order_relaxed);
  pool_record& t = *it->second;
  if (!out.empty()) std::memcpy(t.out, out.data(), out.size());
  t.frame->remote_pending.fetch_sub(1, std::memory_order_release);
  shipped_.erase(it);
}

bool dist_engine::send_results() {
  if (!has_results_.load(std::memory_order_acquire)) return false;
  std::vector<result> ready;
  {
    const std::lock_guard hold(results_lock_);
    ready.swap(results_);
    has_results_.store(false, std::memory_order_relaxed);
  }
  for (result& r : ready) {
    std::vector<std::byte> bytes = wire::write_result(r.handle, r.bytes);
    term_.basic_sent();
    stats_.bytes_sent.fetch_add(bytes.size(), std::memory_order_relaxed);
    stats_.outputs_sent.fetch_add(1, std::memory_order_relaxed);
    send(r.origin, wire::result, std::move(bytes));
  }
  return !ready.empty();
}

bool dist_engine::complete_sends() {
  bool any = false;
  while (!sends_.empty()) {
    int done = 0;
    MPI_Test(&sends_.front().request, &done, MPI_STATUS_IGNORE);
    if (done == 0) break;
    sends_.pop_front();
    any = true;
  }
  return any;
}

std::uint64_t dist_engine::node_key() const {
  if (config_.node_size != 0) return static_cast<std::uint64_t>(comm_.rank()) / config_.node_size;
  std::array<char, MPI_MAX_PROCESSOR_NAME> name{};
  int length = 0;
  MPI_Get_processor_name(name.data(), &length);
  return std::hash<std::string_view>{}(
      std::string_view(name.data(), static_cast<std::size_t>(length)));
}

bool dist_engine::try_steal() {
  if (request_out_ || stopping_.load(std::memory_order_relaxed)) return false;
  if (imported_.load(std::memory_order_relaxed) >= (fills_ ? prefetch_below_ : 1)) return false;
  if (clock::now() < next_steal_) return false;
  if (!hungry_.exchange(false, std::memory_order_relaxed)) return false;
  request_near_ = !near_.empty() && (far_.empty() || near_misses_ < near_.size());
  const std::vector<int>& from = request_near_ ? near_ : far_;
  std::uniform_int_distribution<std::size_t> pick(0, from.size() - 1);
  const int victim = from[pick(rng_)];
  request_out_ = true;
  stats_.steals_sent.fetch_add(1, std::memory_order_relaxed);
  if (request_near_) stats_.steals_sent_node.fetch_add(1, std::memory_order_relaxed);
  send(victim, wire::steal_request, std::vector<std::byte>(1));
  return true;
}

bool dist_engine::passive() const noexcept {
  // live first: an imported task's output is queued before its last count ends, so a rank whose
  // count reads empty sees that output here. Tasks from other ranks waiting in the pool count
  // live.
  return q_.live.empty() && !has_results_.load(std::memory_order_acquire);
}

bool dist_engine::detect_termination() {
  if (!passive()) return false;
  const termination::step s = term_.passive(entered_.load(std::memory_order_acquire));
  switch (s.what) {
    case termination::step::kind::none:
      return false;
    case termination::step::kind::pass_token:
      send(s.to, wire::token, wire::write_token(s.token));
      return true;
    case termination::step::kind::announce:
      for (int r = 1; r < comm_.size(); ++r) send(r, wire::done, wire::write_epoch(s.epoch));
      done_.store(s.epoch, std::memory_order_release);
      return true;
  }
  return false;
}

bool dist_engine::teardown() {
  // Every request this rank sent has its answer before it enters the barrier, and every rank
  // answers requests until its barrier completes: after it, no request is left unanswered.
  if (!barrier_posted_) {
    if (request_out_) return false;
    MPI_Ibarrier(comm_world_, &barrier_);
    barrier_posted_ = true;
    return true;
  }
  int done = 0;
  MPI_Test(&barrier_, &done, MPI_STATUS_IGNORE);
  if (done == 0 || !sends_.empty() || gather_ != MPI_REQUEST_NULL) return false;
  MPI_Comm_free(&comm_world_);
  comm_.remove(this);
  finished_.store(true, std::memory_order_release);
  return true;
}

// ---- statistics -----------------------------------------------------------------------------

dist_rank_stats dist_engine::stats() const {
  dist_rank_stats s;
  s.rank = comm_.rank();
  s.steals_sent = stats_.steals_sent.load(std::memory_order_relaxed);
  s.steals_sent_node = stats_.steals_sent_node.load(std::memory_order_relaxed);
  s.steals_served = stats_.steals_served.load(std::memory_order_relaxed);
  s.steals_refused = stats_.steals_refused.load(std::memory_order_relaxed);
  s.tasks_sent = stats_.tasks_sent.load(std::memory_order_relaxed);
  s.tasks_received = stats_.tasks_received.load(std::memory_order_relaxed);
  s.outputs_sent = stats_.outputs_sent.load(std::memory_order_relaxed);
  s.bytes_sent = stats_.bytes_sent.load(std::memory_order_relaxed);
  s.bytes_received = stats_.bytes_received.load(std::memory_order_relaxed);
  s.idle_seconds = static_cast<double>(stats_.idle_ns.load(std::memory_order_relaxed)) * 1e-9;
  // Puts counted here: this rank's own, and two per imported task; shipped ones ran elsewhere.
  const std::uint64_t puts =
      q_.live.puts_total() - stats_.puts_base.load(std::memory_order_relaxed);
  s.tasks = puts - s.tasks_received - s.tasks_sent;
  s.comm_wakeups = comm_.wakeups() - stats_.wakeups_base.load(std::memory_order_relaxed);
  return s;
}

void dist_engine::reset_stats() {
  for (auto* c :
       {&stats_.steals_sent, &stats_.steals_sent_node, &stats_.steals_served,
        &stats_.steals_refused, &stats_.tasks_sent, &stats_.tasks_received, &stats_.outputs_sent,
        &stats_.bytes_sent, &stats_.bytes_received, &stats_.idle_ns}) {
    c->store(0, std::memory_order_relaxed);
  }
  stats_.puts_base.store(q_.live.puts_total(), std::memory_order_relaxed);
  stats_.wakeups_base.store(comm_.wakeups(), std::memory_order_relaxed);
}

std::vector<std::byte> dist_engine::gather(std::span<const std::byte> mine) {
  gathered_ = std::promise<void>();
  auto done = gathered_.get_future();
  comm_.call([&] {
    gather_send_.assign(mine.begin(), mine.end());
    gather_recv_.assign(
        comm_.rank() == 0 ? mine.size() * static_cast<std::size_t>(comm_.size()) : 0, std::byte{0});
    MPI_Igather(gather_send_.data(), static_cast<int>(mine.size()), MPI_BYTE, gather_recv_.data(),
                static_cast<int>(mine.size()), MPI_BYTE, 0, comm_world_, &gather_);
  });
  done.wait();
  return std::move(gather_recv_);
}

std::vector<dist_rank_stats> dist_engine::gather_stats() {
  const dist_rank_stats mine = stats();
  const std::array<std::uint64_t, stat_fields> fields{
      static_cast<std::uint64_t>(mine.rank),
      mine.tasks,
      mine.steals_sent,
      mine.steals_served,
      mine.steals_refused,
      mine.tasks_sent,
      mine.tasks_received,
      mine.bytes_sent,
      mine.bytes_received,
      stats_.idle_ns.load(std::memory_order_relaxed),
      mine.steals_sent_node,
      mine.outputs_sent,
      mine.comm_wakeups};
  const std::vector<std::byte> bytes = gather(std::as_bytes(std::span(fields)));
  std::vector<dist_rank_stats> all;
  for (std::size_t at = 0; at < bytes.size(); at += sizeof fields) {
    std::array<std::uint64_t, stat_fields> v{};
    std::memcpy(v.data(), bytes.data() + at, sizeof v);
    dist_rank_stats s;
    s.rank = static_cast<int>(v[0]);
    s.tasks = v[1];
    s.steals_sent = v[2];
    s.steals_served = v[3];
    s.steals_refused = v[4];
    s.tasks_sent = v[5];
    s.tasks_received = v[6];
    s.bytes_sent = v[7];
    s.bytes_received = v[8];
    s.idle_seconds = static_cast<double>(v[9]) * 1e-9;
    s.steals_sent_node = v[10];
    s.outputs_sent = v[11];
    s.comm_wakeups = v[12];
    all.push_back(s);
  }
  return all;
}

}  // namespace locus::detail
