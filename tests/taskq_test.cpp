// Behaviour of locus::taskq (HotSLAW's task-queue API): input copied at put, output visible after
// wait, fence ordering, dependences, exceptions, nested waits, under every scheduler.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "locus/locus.hpp"
#include "locus/taskq.hpp"
#include "sched/policy.hpp"
#include "taskq/taskq_impl.hpp"
#include "test_policies.hpp"

namespace {

// Help-first everywhere: every spawn is queued, as HotSLAW's bounded queues do while they have
// room, so puts are really queued and run later, by execute(), a wait or a thief.
class help_first_policy final : public locus::detail::policy_base<help_first_policy> {
 public:
  locus::detail::work_item* find_work(locus::detail::context& ctx) override {
    for (int attempt = 1; attempt < ctx.workers(); ++attempt) {
      if (const auto r = ctx.steal(ctx.random_victim())) return r.item;
    }
    return nullptr;
  }
  locus::detail::spawn_decision on_spawn(locus::detail::context&,
                                         locus::detail::spawn_request&) override {
    return locus::detail::spawn_decision::parent_first;
  }
};

const bool help_first_registered =
    locus::detail::register_policy({"test-help-first", "test: every spawn queued (help-first)",
                                    []() -> std::unique_ptr<locus::detail::policy> {
                                      return std::make_unique<help_first_policy>();
                                    }});

// Task functions reach their queue as the seed's do, through a global.
locus::taskq* q = nullptr;

struct queue_scope {
  explicit queue_scope(locus::taskq& queue) { q = &queue; }
  ~queue_scope() { q = nullptr; }
};

long serial_fib(int n) {
  return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2);
}

// Fig. 2 of the seed, typed.
void fib_task(const int& n, long& out) {
  if (n < 2) {
    out = n;
    return;
  }
  long x = 0, y = 0;
  q->put(fib_task, n - 1, x);
  q->put(fib_task, n - 2, y);
  q->wait();
  out = x + y;
}

// The same in the seed's untyped form.
void fib_raw(void* in, void* out) {
  const int n = *static_cast<int*>(in);
  if (n < 2) {
    *static_cast<long*>(out) = n;
    return;
  }
  long x = 0, y = 0;
  int n1 = n - 1;
  q->put(fib_raw, &n1, &x);
  n1 = n - 2;  // the first task has its own copy
  q->put(fib_raw, &n1, &y);
  q->wait();
  *static_cast<long*>(out) = x + y;
}

locus::options opts(const std::string& sched, int workers) {
  locus::options o;
  o.sched = sched;
  o.workers = workers;
  return o;
}

// ---- input copied at put -----------------------------------------------------------------

struct big_input {
  std::array<std::uint64_t, 16> words;  // 128 bytes: beyond the closure's inline buffer
};

void check_big(const big_input& in, std::uint64_t& out) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < in.words.size(); ++i) {
    sum += in.words[i] == in.words[0] + i ? 1 : 1000;
  }
  out = sum == in.words.size() ? in.words[0] : ~std::uint64_t{0};
}

void check_small(const int& in, int& out) {
  out = in;
}

void check_raw(void* in, void* out) {
  std::memcpy(out, in, sizeof(std::uint64_t) * 3);
}

void inputs_are_copied(locus::runtime& rt) {
  locus::taskq queue{
      locus::task_function(check_big), locus::task_function(check_small),
      locus::task_function(check_raw, 3 * sizeof(std::uint64_t), 3 * sizeof(std::uint64_t))};
  constexpr int n = 64;
  std::vector<std::uint64_t> big_out(n, 0);
  std::vector<int> small_out(n, -1);
  std::vector<std::array<std::uint64_t, 3>> raw_out(n);
  rt.exec([&] {
    big_input buf{};
    int small = 0;
    std::array<std::uint64_t, 3> raw{};
    for (int i = 0; i < n; ++i) {
      for (std::size_t k = 0; k < buf.words.size(); ++k) buf.words[k] = 100 * i + k;
      queue.put(check_big, buf, big_out[i]);
      buf.words.fill(0xdead);  // reused at once
      small = i;
      queue.put(check_small, small, small_out[i]);
      small = -7;
      raw = {std::uint64_t(i), std::uint64_t(i) + 1, std::uint64_t(i) + 2};
      queue.put(check_raw, raw.data(), raw_out[i].data());
      raw.fill(0xbeef);
    }
    queue.wait();
  });
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(big_out[i], std::uint64_t(100 * i)) << i;
    EXPECT_EQ(small_out[i], i) << i;
    EXPECT_EQ(raw_out[i][0], std::uint64_t(i));
    EXPECT_EQ(raw_out[i][2], std::uint64_t(i) + 2);
  }
  EXPECT_TRUE(queue.all_empty());
}

// ---- fence ordering ---------------------------------------------------------------------

std::atomic<std::uint64_t> clock_tick{0};

struct fenced_record {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
};

// Spins a little and puts a child of its own, so that tasks overlap and their ends spread out.
void fenced_leaf(const int& spin, fenced_record& rec) {
  rec.start = clock_tick.fetch_add(1, std::memory_order_acq_rel);
  volatile int sink = 0;
  for (int i = 0; i < spin; ++i) sink = sink + i;
  rec.end = clock_tick.fetch_add(1, std::memory_order_acq_rel);
}

void fenced_task(const int& spin, fenced_record& rec) {
  rec.start = clock_tick.fetch_add(1, std::memory_order_acq_rel);
  fenced_record child;
  q->put(fenced_leaf, spin, child);
  q->wait();
  rec.end = clock_tick.fetch_add(1, std::memory_order_acq_rel);
}

// Phases of tasks separated by fences, put by `putter` without waiting in between: every task
// of a phase starts after every task of the phases before it ended.
void check_fences(locus::runtime& rt, bool nested) {
  locus::taskq queue{locus::task_function(fenced_leaf), locus::task_function(fenced_task)};
  queue_scope scope(queue);
  constexpr int phases = 4;
  constexpr int per_phase = 24;
  std::vector<std::vector<fenced_record>> recs(phases, std::vector<fenced_record>(per_phase));
  const auto put_phases = [&] {
    for (int p = 0; p < phases; ++p) {
      for (int i = 0; i < per_phase; ++i) {
        queue.put(fenced_task, 200 * ((i * 7 + p) % 5), recs[p][i]);
      }
      queue.fence();
      queue.fence();  // a fence with nothing before it changes nothing
    }
    queue.wait();
  };
  if (nested) {
    // The same from inside a task, whose fences are its own.
    using phases_fn = decltype(put_phases);
    struct put_all {
      static void run(void* in, void*) {
        const void* fn = nullptr;
        std::memcpy(&fn, in, sizeof fn);
        (*static_cast<const phases_fn*>(fn))();
      }
    };
    locus::taskq outer{locus::task_function(&put_all::run, sizeof(void*), 0)};
    rt.exec([&] {
      // The outer queue's task runs put_phases, whose calls go to `queue`'s top level.
      const void* fn = &put_phases;
      outer.put(&put_all::run, &fn, nullptr);
      outer.wait();
    });
  } else {
    rt.exec(put_phases);
  }
  for (int p = 1; p < phases; ++p) {
    std::uint64_t last_end = 0;
    for (const auto& r : recs[p - 1]) last_end = std::max(last_end, r.end);
    for (int i = 0; i < per_phase; ++i) {
      EXPECT_GT(recs[p][i].start, last_end) << "phase " << p << " task " << i;
      EXPECT_GT(recs[p][i].end, recs[p][i].start);
    }
  }
  EXPECT_TRUE(queue.all_empty());
}

// A task's fences order the tasks it puts: here each of several concurrent tasks fences its own
// two phases.
void fencing_task(const int& spin, fenced_record& worst) {
  std::array<fenced_record, 8> before, after;
  for (auto& r : before) q->put(fenced_leaf, spin, r);
  q->fence();
  for (auto& r : after) q->put(fenced_leaf, spin, r);
  q->wait();
  std::uint64_t last_end = 0, first_start = ~std::uint64_t{0};
  for (const auto& r : before) last_end = std::max(last_end, r.end);
  for (const auto& r : after) first_start = std::min(first_start, r.start);
  worst.start = first_start;
  worst.end = last_end;
}

void check_task_fences(locus::runtime& rt) {
  locus::taskq queue{locus::task_function(fenced_leaf), locus::task_function(fencing_task)};
  queue_scope scope(queue);
  std::vector<fenced_record> worst(16);
  rt.exec([&] {
    for (auto& w : worst) queue.put(fencing_task, 300, w);
    queue.wait();
  });
  for (const auto& w : worst) EXPECT_GT(w.start, w.end);
}

// ---- dependences -------------------------------------------------------------------------

struct dep_input {
  const long* a;
  const long* b;
  long add;
};

std::atomic<int> dep_order{0};

struct stamped {
  long value = 0;
  int order = -1;
};

void produce(const long& v, stamped& out) {
  volatile int sink = 0;
  for (int i = 0; i < 2000; ++i) sink = sink + i;
  out.value = v;
  out.order = dep_order.fetch_add(1, std::memory_order_acq_rel);
}

struct combine_input {
  const stamped* a;
  const stamped* b;
};

void combine(const combine_input& in, stamped& out) {
  out.order = dep_order.fetch_add(1, std::memory_order_acq_rel);
  // Runs after both: their outputs are there, and so are their stamps.
  out.value =
      in.a->order >= 0 && in.b->order >= 0 && in.a->order < out.order && in.b->order < out.order
          ? in.a->value + in.b->value
          : -1;
}

void check_dependences(locus::runtime& rt) {
  locus::taskq queue{locus::task_function(produce), locus::task_function(combine)};
  queue_scope scope(queue);
  constexpr int n = 16;
  std::vector<stamped> leaves(2 * n), pairs(n), top(1);
  std::vector<stamped> chain(32);
  rt.exec([&] {
    // A tree: pairs of leaves combined, then all pairs' sums combined pairwise in a chain.
    std::vector<locus::taskq::dep> leaf_deps(2 * n), pair_deps(n);
    for (int i = 0; i < 2 * n; ++i) {
      leaf_deps[i] = queue.put_after({}, produce, long(i), leaves[i]);
    }
    for (int i = 0; i < n; ++i) {
      pair_deps[i] = queue.put_after({leaf_deps[2 * i], leaf_deps[2 * i + 1]}, combine,
                                     combine_input{&leaves[2 * i], &leaves[2 * i + 1]}, pairs[i]);
    }
    // A chain: each link depends on the previous one (the first on a pair).
    locus::taskq::dep prev = pair_deps[0];
    const stamped* prev_out = &pairs[0];
    for (std::size_t k = 0; k < chain.size(); ++k) {
      prev = queue.put_after({prev, pair_deps[k % n]}, combine,
                             combine_input{prev_out, &pairs[k % n]}, chain[k]);
      prev_out = &chain[k];
    }
    queue.wait();
    EXPECT_TRUE(prev.done());
    // A task depending on tasks that already ended runs at once.
    queue.put_after({pair_deps[1], prev}, combine, combine_input{&pairs[1], &chain.back()}, top[0]);
    queue.wait();
  });
  for (int i = 0; i < n; ++i) EXPECT_EQ(pairs[i].value, 4 * i + 1) << i;
  long expect = pairs[0].value;
  for (std::size_t k = 0; k < chain.size(); ++k) {
    expect += pairs[k % n].value;
    EXPECT_EQ(chain[k].value, expect) << k;
  }
  EXPECT_EQ(top[0].value, pairs[1].value + chain.back().value);
  EXPECT_TRUE(queue.all_empty());
}

// ---- exceptions -------------------------------------------------------------------------

std::atomic<int> ran_after_failure{0};

void thrower(const int& depth, int& out) {
  if (depth == 0) throw std::runtime_error("task failed");
  int child = 0;
  q->put(thrower, depth - 1, child);
  q->wait();
  out = child;
}

void never_after_failure(const int&, int&) {
  ran_after_failure.fetch_add(1, std::memory_order_relaxed);
}

void check_exceptions(locus::runtime& rt) {
  locus::taskq queue{locus::task_function(thrower), locus::task_function(never_after_failure),
                     locus::task_function(fib_task)};
  queue_scope scope(queue);
  ran_after_failure.store(0);
  int out = 0;
  long f = 0;
  rt.exec([&] {
    queue.put(fib_task, 12, f);
    queue.put(thrower, 6, out);  // from six levels down
    EXPECT_THROW(queue.wait(), std::runtime_error);
    // The queue is usable again.
    queue.put(fib_task, 15, f);
    queue.wait();
    // A dependent of a failed task is not run, nor what depends on it, nor what a fence holds.
    int a = 0, b = 0, c = 0;
    const auto failed = queue.put_after({}, thrower, 0, a);
    const auto skipped = queue.put_after({failed}, never_after_failure, 0, b);
    queue.put_after({skipped}, never_after_failure, 0, c);
    queue.fence();
    queue.put(never_after_failure, 0, c);
    EXPECT_THROW(queue.wait(), std::runtime_error);
    EXPECT_TRUE(skipped.done());
  });
  EXPECT_EQ(f, serial_fib(15));
  EXPECT_EQ(ran_after_failure.load(), 0);
  EXPECT_TRUE(queue.all_empty());
}

// ---- no hang when every worker waits --------------------------------------------------------

void deep(const int& depth, int& out) {
  if (depth == 0) {
    out = 0;
    return;
  }
  int below = 0;
  q->put(deep, depth - 1, below);
  q->wait();
  out = below + 1;
}

// Under ThreadSanitizer every task stack is a fiber, each costing it a thread's state:
// child-first's two chains of nested waits hold a stack per level.
#if defined(LOCUS_TSAN)
constexpr int nested_wait_depth = 500;
#else
constexpr int nested_wait_depth = 1500;
#endif

void check_nested_waits(locus::runtime& rt) {
  locus::taskq queue{locus::task_function(deep), locus::task_function(fib_task)};
  queue_scope scope(queue);
  int d1 = 0, d2 = 0;
  long f = 0;
  rt.exec([&] {
    queue.put(deep, nested_wait_depth, d1);
    queue.put(fib_task, 18, f);
    queue.put(deep, nested_wait_depth, d2);
    queue.wait();
  });
  EXPECT_EQ(d1, nested_wait_depth);
  EXPECT_EQ(d2, nested_wait_depth);
  EXPECT_EQ(f, serial_fib(18));
}

// ---- execute, steal, all_empty --------------------------------------------------------------

void sleepy(const int& spin, int& out) {
  volatile int sink = 0;
  for (int i = 0; i < spin; ++i) sink = sink + i;
  out = 1;
}

void check_progress_loop(locus::runtime& rt) {
  locus::taskq queue{locus::task_function(sleepy), locus::task_function(fib_task)};
  queue_scope scope(queue);
  std::vector<int> outs(32, 0);
  long f = 0;
  rt.exec([&] {
    EXPECT_TRUE(queue.all_empty());
    for (auto& o : outs) queue.put(sleepy, 5000, o);
    queue.put(fib_task, 16, f);
    // The seed's SPMD loop: run and steal while there is work to take, then wait for the rest
    // (a continuation steal() takes is resumed by this worker once the caller waits).
    while (!queue.all_empty()) {
      if (!queue.execute() && !queue.steal()) break;
    }
    queue.wait();
  });
  for (int o : outs) EXPECT_EQ(o, 1);
  EXPECT_EQ(f, serial_fib(16));
  EXPECT_TRUE(queue.all_empty());
}

void sees_itself(const int&, int& out) {
  out = q->all_empty() ? 0 : 1;  // this task is in the queue
}

// ---- every scheduler --------------------------------------------------------------------

std::vector<std::string> schedulers() {
  std::vector<std::string> names;
  for (auto& n : locus::detail::policy_names()) {
    // Of the test policies, the one with a locked queue, routing and steal-half, and the
    // help-first one, close to what HotSLAW's own scheduler does; the others starve on purpose.
    if (n.rfind("test-", 0) == 0 && n != "test-mixed" && n != "test-help-first") continue;
    names.push_back(n);
  }
  return names;
}

// ---- task depth (what a distributed queue's pool keeps: src/dist) ---------------------------

// Tasks that ran, and those whose frame's depth was not level (1 + the putter's).
std::atomic<int> depth_probes{0};
std::atomic<int> depth_mismatches{0};

void depth_probe_raw(void* in, void* out);

void depth_probe(const int& level, int& out) {
  const locus::detail::taskq_frame* f = locus::detail::current_taskq_frame();
  if (f == nullptr || f->depth != static_cast<std::uint32_t>(level)) ++depth_mismatches;
  ++depth_probes;
  out = level;
  if (level == 4) return;
  int next = level + 1;
  int typed = 0, raw = 0, fenced = 0, after = 0;
  q->put(depth_probe, next, typed);
  q->put(depth_probe_raw, &next, &raw);
  const locus::taskq::dep d = q->put_after({}, depth_probe_raw, &next, &after);
  q->fence();  // held back until the puts before it have ended
  q->put(depth_probe, next, fenced);
  q->wait();
  if (!d.done() || typed != next || raw != next || fenced != next || after != next) {
    ++depth_mismatches;
  }
}

void depth_probe_raw(void* in, void* out) {
  depth_probe(*static_cast<const int*>(in), *static_cast<int*>(out));
}

class TaskqSched : public ::testing::TestWithParam<std::string> {};

TEST_P(TaskqSched, FibMatchesSerial) {
  for (const int workers : {1, 2}) {
    locus::runtime rt{opts(GetParam(), workers)};
    locus::taskq queue{locus::task_function(fib_task), locus::task_function(fib_raw, 4, 8)};
    queue_scope scope(queue);
    long typed = 0, raw = 0;
#if defined(LOCUS_TSAN)
    // test-mixed routes one child in eight to a random worker, where its waits park on stacks of
    // their own, and ThreadSanitizer pays for every stack's fiber.
    int n = 16;
#else
    int n = 20;
#endif
    rt.exec([&] {
      queue.put(fib_task, n, typed);
      queue.put(fib_raw, &n, &raw);
      queue.wait();
    });
    EXPECT_EQ(typed, serial_fib(n));
    EXPECT_EQ(raw, serial_fib(n));
    EXPECT_TRUE(queue.all_empty());
  }
}

TEST_P(TaskqSched, InputCopiedAtPut) {
  locus::runtime rt{opts(GetParam(), 2)};
  inputs_are_copied(rt);
}

TEST_P(TaskqSched, FenceOrdersPhases) {
  locus::runtime rt{opts(GetParam(), 2)};
  check_fences(rt, false);
  check_fences(rt, true);
  check_task_fences(rt);
}

TEST_P(TaskqSched, DependentRunsAfterItsInputs) {
  locus::runtime rt{opts(GetParam(), 2)};
  check_dependences(rt);
}

TEST_P(TaskqSched, ExceptionsReachWait) {
  locus::runtime rt{opts(GetParam(), 2)};
  check_exceptions(rt);
}

TEST_P(TaskqSched, NestedWaitsDoNotHang) {
  // A help-first wait runs a queued child on its own stack only while a quarter of it is left
  // (fork_join.cpp, stack_has_room), so the default stack holds any depth of nested waits.
  locus::runtime rt{opts(GetParam(), 2)};
  check_nested_waits(rt);
}

TEST_P(TaskqSched, ProgressLoopDrainsTheQueue) {
  locus::runtime rt{opts(GetParam(), 2)};
  check_progress_loop(rt);
}

// Every kind of put (typed, untyped, put_after, fenced) gives its task the depth of the putter
// plus one, whichever worker runs it (help-first: mostly not the putter's).
TEST_P(TaskqSched, TaskDepthIsItsPuttersPlusOne) {
  locus::runtime rt{opts(GetParam(), 2)};
  locus::taskq queue{locus::task_function(depth_probe),
                     locus::task_function(depth_probe_raw, sizeof(int), sizeof(int))};
  queue_scope scope(queue);
  depth_probes = 0;
  depth_mismatches = 0;
  int root = 0;
  rt.exec([&] {
    queue.put(depth_probe, 1, root);  // the top level has depth 0
    queue.wait();
  });
  EXPECT_EQ(root, 1);
  EXPECT_EQ(depth_probes.load(), 1 + 4 + 16 + 64);
  EXPECT_EQ(depth_mismatches.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Taskq, TaskqSched, ::testing::ValuesIn(schedulers()),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

// ---- single cases -------------------------------------------------------------------------

TEST(Taskq, OneWorkerRunsTheSeedsFib) {
  locus::runtime rt{opts("ws", 1)};
  check_nested_waits(rt);
  check_dependences(rt);
  check_fences(rt, false);
}

TEST(Taskq, ExecuteRunsTheCallersQueuedTasks) {
  ASSERT_TRUE(help_first_registered);
  locus::runtime rt{opts("test-help-first", 1)};
  locus::taskq queue{locus::task_function(check_small), locus::task_function(fib_task)};
  queue_scope scope(queue);
  std::vector<int> outs(4, -1);
  long f = 0;
  rt.exec([&] {
    EXPECT_FALSE(queue.execute());  // nothing queued
    for (int i = 0; i < 4; ++i) {
      int in = i;
      queue.put(check_small, in, outs[i]);
      in = -9;  // the queued task has its own copy
    }
    EXPECT_FALSE(queue.all_empty());
    // Newest first, like the seed's private region (LIFO).
    EXPECT_TRUE(queue.execute());
    EXPECT_EQ(outs[3], 3);
    EXPECT_EQ(outs[0], -1);
    EXPECT_TRUE(queue.execute());
    EXPECT_EQ(outs[2], 2);
    EXPECT_FALSE(queue.steal());  // one worker: no victim
    queue.wait();                 // runs the rest
    queue.put(fib_task, 15, f);
    queue.wait();
  });
  EXPECT_EQ(outs, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(f, serial_fib(15));
  EXPECT_TRUE(queue.all_empty());
}

TEST(Taskq, AllEmptyCountsRunningTasks) {
  locus::runtime rt{opts("ws", 2)};
  locus::taskq queue{locus::task_function(sees_itself)};
  queue_scope scope(queue);
  int out = -1;
  rt.exec([&] {
    queue.put(sees_itself, 0, out);
    queue.wait();
  });
  EXPECT_EQ(out, 1);
  EXPECT_TRUE(queue.all_empty());
}

TEST(Taskq, UnregisteredFunctionIsRejected) {
  locus::runtime rt{opts("ws", 1)};
  locus::taskq queue{locus::task_function(fib_task)};
  int in = 1;
  long out = 0;
  rt.exec([&] {
    EXPECT_THROW(queue.put(deep, 1, in), std::invalid_argument);
    EXPECT_THROW(queue.put(fib_raw, &in, &out), std::invalid_argument);
    queue.wait();
  });
  EXPECT_TRUE(queue.all_empty());
}

TEST(Taskq, TopLevelFromAThreadOutsideTheRuntime) {
  locus::taskq queue{locus::task_function(fib_task)};
  queue_scope scope(queue);
  long f = 0;
  queue.put(fib_task, 15, f);
  queue.wait();
  EXPECT_EQ(f, serial_fib(15));
}

}  // namespace
