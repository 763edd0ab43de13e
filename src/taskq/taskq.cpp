// locus::taskq's verbs. A task of the queue is a locus task (task_group::run, so the selected
// scheduler decides whether it runs now or is queued) whose body sets up a frame on its own
// stack: the group its puts join, and its fences. Which frame a call refers to is found through
// a thread-local pointer, set on entry to a task and again after every put and wait, since a
// task may come back from either on another worker.
#include <cstring>
#include <stdexcept>
#include <utility>

#include "sched/fork_join.hpp"
#include "taskq/taskq_impl.hpp"

namespace locus::detail {
namespace {

void invoke(const taskq_function& fn, void* in, void* out) {
  if (fn.thunk != nullptr) {
    fn.thunk(fn.fn, in, out);
  } else {
    fn.fn(in, out);
  }
}

// A put whose input fits here travels inside the closure, copied with it onto the child's stack
// or into the queued task, without a heap allocation.
constexpr std::size_t inline_input_bytes = 48;

struct inline_put {
  const taskq_function* fn;  // in the queue's table, which outlives its tasks
  void* out;
  alignas(16) std::byte in[inline_input_bytes];
  static void run(void* self) {
    auto* p = static_cast<inline_put*>(self);
    invoke(*p->fn, p->in, p->out);
  }
};

void run_held(taskq_impl& q, std::unique_ptr<held_task> h) {
  taskq_run(
      q,
      [](void* self) {
        auto* t = static_cast<held_task*>(self);
        invoke(t->fn, t->input.get(), t->out);
      },
      h.get(), h->self.get(), h->depth);
}

}  // namespace

// initial-exec: the inline access in this_taskq_thread() reads its offset from the GOT.
[[gnu::tls_model("initial-exec")]] constinit thread_local taskq_thread_state tls_taskq asm(
    "locus_tls_taskq"){nullptr, 0};

taskq_thread_state* taskq_thread_state_noipa() noexcept {
  return &tls_taskq;
}

const taskq_function& taskq_impl::find(task_fn fn, const char* verb) const {
  for (const auto& f : functions) {
    if (f.fn == fn) return f;
  }
  throw std::invalid_argument(std::string("locus::taskq::") + verb +
                              ": the function is not registered with this queue");
}

std::unique_ptr<held_task> taskq_impl::make_held(const taskq_frame& f, const taskq_function& fn,
                                                 const void* in, void* out) const {
  auto h = std::make_unique<held_task>();
  h->fn = fn;
  h->out = out;
  h->depth = f.depth + 1;
  if (fn.in_size != 0) {
    h->input = std::make_unique_for_overwrite<std::byte[]>(fn.in_size);
    std::memcpy(h->input.get(), in, fn.in_size);
  }
  return h;
}

void taskq_impl::launch(taskq_frame& f, std::unique_ptr<held_task> h) {
  f.tg.run([this, h = std::move(h)]() mutable { run_held(*this, std::move(h)); });
}

void taskq_impl::join(taskq_frame& f, std::exception_ptr& error) noexcept {
  for (;;) {
    // The task may suspend here, and its worker run other work meanwhile: that work must not
    // take this frame for its own.
    set_current_taskq_frame(nullptr);
    try {
      f.tg.wait();
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    if (remote != nullptr) {
      while (f.remote_pending.load(std::memory_order_acquire) != 0) remote->help();
    }
    if (!f.fences) break;
    if (error || f.fences->epochs.empty()) {
      // Tasks held behind a fence after a failure are dropped, as dependents of a failed task.
      auto held = std::move(f.fences);
      for (auto& epoch : held->epochs) {
        for (auto& h : epoch) {
          if (h->self) end(*h->self, true, f);
          live.end(this_thread_live_slot());
        }
      }
      if (error) continue;  // join what end() may have released
      break;
    }
    auto epoch = std::move(f.fences->epochs.front());
    f.fences->epochs.pop_front();
    try {
      for (auto& h : epoch) {
        auto after = std::move(h->after);
        submit(f, std::move(h), after);
      }
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  f.put_any = false;
}

namespace {

// Both entry points' body, inlined into each (a put's child enters through taskq_run_put).
inline void run_task(taskq_impl& q, void (*call)(void*), void* arg, taskq_node* self,
                     std::uint32_t depth) {
  taskq_frame f(q, depth);
  set_current_taskq_frame(&f);
  std::exception_ptr error;
  try {
    call(arg);
  } catch (...) {
    error = std::current_exception();
  }
  if (f.put_any || error) q.join(f, error);
  if (self != nullptr) {
    q.end(*self, error != nullptr, f);
    q.join(f, error);
  }
  set_current_taskq_frame(nullptr);
  q.live.end(this_thread_live_slot());
  if (error) std::rethrow_exception(error);
}

}  // namespace

void taskq_run(taskq_impl& q, void (*call)(void*), void* arg, taskq_node* self,
               std::uint32_t depth) {
  run_task(q, call, arg, self, depth);
}

void taskq_run_put(const taskq_frame& putter, void (*call)(void*), void* arg) {
  run_task(putter.q, call, arg, nullptr, putter.depth + 1);
}

taskq_put_site::taskq_put_site(taskq_impl& q, task_fn fn, taskq_thunk thunk, std::size_t in_size,
                               std::size_t out_size)
    : q_(q), fn_(fn) {
  const taskq_function& f = q.find(fn, "put");
  if (f.thunk != thunk || f.in_size != in_size || f.out_size != out_size) {
    throw std::invalid_argument(
        "locus::taskq::put: the function is registered with other input or output types");
  }
  taskq_frame* current = current_taskq_frame();
  previous_ = current;
  taskq_frame& frame = q.frame_of(current);
  frame_ = &frame;
  frame.put_any = true;
  q.live.put(detail::this_thread_live_slot());
  group_ = frame.fences || (q.remote != nullptr && q.remote->wants_offer(frame, out_size))
               ? nullptr
               : &frame.tg;
}

taskq_put_site::~taskq_put_site() {
  set_current_taskq_frame(static_cast<taskq_frame*>(previous_));
}

void taskq_put_site::defer(const void* in, void* out) {
  taskq_frame& frame = *frame_;
  if (!frame.fences) {
    q_.remote->offer(frame, q_.find(fn_, "put"), in, out);
    return;
  }
  frame.fences->epochs.back().push_back(q_.make_held(frame, q_.find(fn_, "put"), in, out));
}

}  // namespace locus::detail

namespace locus {

using detail::current_taskq_frame;
using detail::set_current_taskq_frame;
using detail::taskq_frame;

bool taskq::dep::done() const noexcept {
  return node_ != nullptr && node_->ended.load(std::memory_order_acquire);
}

taskq::taskq(std::initializer_list<taskq_function> functions)
    : taskq(std::span<const taskq_function>(functions.begin(), functions.size())) {}

taskq::taskq(std::span<const taskq_function> functions)
    : impl_(std::make_unique<detail::taskq_impl>(functions)) {
  for (const auto& f : functions) {
    if (f.fn == nullptr) throw std::invalid_argument("locus::taskq: a null task function");
  }
}

taskq::~taskq() {
  std::exception_ptr dropped;
  taskq_frame* current = current_taskq_frame();
  impl_->join(impl_->top, dropped);
  set_current_taskq_frame(current);
}

void taskq::put(task_fn fn, const void* in, void* out) {
  detail::taskq_impl& q = *impl_;
  const taskq_function& f = q.find(fn, "put");
  taskq_frame* current = current_taskq_frame();
  taskq_frame& frame = q.frame_of(current);
  frame.put_any = true;
  q.live.put(detail::this_thread_live_slot());
  if (frame.fences) {
    frame.fences->epochs.back().push_back(q.make_held(frame, f, in, out));
    return;
  }
  if (q.remote != nullptr && q.remote->wants_offer(frame, f.out_size)) {
    q.remote->offer(frame, f, in, out);
    set_current_taskq_frame(current);
    return;
  }
  if (f.in_size <= detail::inline_input_bytes) {
    detail::inline_put p{&f, out, {}};
    if (f.in_size != 0) std::memcpy(p.in, in, f.in_size);
    frame.tg.run([p, putter = &frame]() mutable {
      detail::taskq_run_put(*putter, &detail::inline_put::run, &p);
    });
  } else {
    auto h = q.make_held(frame, f, in, out);
    frame.tg.run([h = std::move(h), &q]() mutable { detail::run_held(q, std::move(h)); });
  }
  set_current_taskq_frame(current);
}

taskq::dep taskq::put_after(std::span<const dep> after, task_fn fn, const void* in, void* out) {
  detail::taskq_impl& q = *impl_;
  const taskq_function& f = q.find(fn, "put_after");
  taskq_frame* current = current_taskq_frame();
  taskq_frame& frame = q.frame_of(current);
  auto h = q.make_held(frame, f, in, out);
  h->self = std::make_shared<detail::taskq_node>();
  dep d;
  d.node_ = h->self;
  frame.put_any = true;
  q.live.put(detail::this_thread_live_slot());
  if (frame.fences) {
    h->after.assign(after.begin(), after.end());
    frame.fences->epochs.back().push_back(std::move(h));
    return d;
  }
  q.submit(frame, std::move(h), after);
  set_current_taskq_frame(current);
  return d;
}

bool taskq::execute() {
  taskq_frame* current = current_taskq_frame();
  taskq_frame& frame = impl_->frame_of(current);
  const bool ran = detail::run_own_queued_task(detail::group_access::of(frame.tg));
  set_current_taskq_frame(current);
  return ran;
}

bool taskq::steal() {
  taskq_frame* current = current_taskq_frame();
  const bool ran = detail::steal_and_run_task();
  set_current_taskq_frame(current);
  return ran;
}

void taskq::wait() {
  taskq_frame* current = current_taskq_frame();
  std::exception_ptr error;
  impl_->join(impl_->frame_of(current), error);
  set_current_taskq_frame(current);
  if (error) std::rethrow_exception(error);
}

void taskq::fence() {
  taskq_frame& frame = impl_->frame_of(current_taskq_frame());
  if (!frame.fences) {
    if (!frame.put_any) return;
    frame.fences = std::make_unique<detail::fence_state>();
    frame.fences->epochs.emplace_back();
    return;
  }
  if (!frame.fences->epochs.back().empty()) frame.fences->epochs.emplace_back();
}

bool taskq::all_empty() const noexcept {
  return impl_->live.empty();
}

}  // namespace locus
