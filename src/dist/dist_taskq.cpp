// locus::dist_taskq: a taskq whose plain puts may be offered to other ranks (dist_engine), with
// collective top-level waits.
#include "locus/dist_taskq.hpp"

#include <utility>

#include "dist/comm_thread.hpp"
#include "dist/dist_config.hpp"
#include "dist/dist_engine.hpp"
#include "taskq/taskq_impl.hpp"

namespace locus {

dist_taskq::dist_taskq(std::initializer_list<taskq_function> functions)
    : dist_taskq(std::span<const taskq_function>(functions.begin(), functions.size())) {}

dist_taskq::dist_taskq(std::span<const taskq_function> functions) : q_(functions) {
  // Read (and rejected when malformed) on every rank, one rank or many.
  const detail::dist_config config = detail::dist_config::from_environment();
  detail::comm_thread* comm = detail::comm_thread::instance();
  if (comm != nullptr && comm->size() > 1) {
    engine_ = std::make_unique<detail::dist_engine>(*q_.impl_, *comm, config);
    q_.impl_->remote = engine_.get();
  }
}

dist_taskq::~dist_taskq() {
  if (engine_) {
    engine_.reset();  // collective
    q_.impl_->remote = nullptr;
  }
}

int dist_taskq::rank() const noexcept {
  return engine_ ? engine_->rank() : 0;
}

int dist_taskq::ranks() const noexcept {
  return engine_ ? engine_->ranks() : 1;
}

bool dist_taskq::steal() {
  if (engine_ && engine_->run_import()) return true;
  const bool ran = q_.steal();
  if (!ran && engine_) engine_->hungry();
  return ran;
}

void dist_taskq::wait() {
  detail::taskq_frame* current = detail::current_taskq_frame();
  if (!engine_ || &q_.impl_->frame_of(current) != &q_.impl_->top) {
    q_.wait();  // one rank, or inside a task: taskq's join (which waits for shipped tasks too)
    return;
  }
  const std::uint64_t epoch = engine_->begin_epoch();
  try {
    q_.wait();
  } catch (...) {
    engine_->fail(std::current_exception());
  }
  engine_->await_epoch(epoch);
  detail::set_current_taskq_frame(current);
}

bool dist_taskq::all_empty() {
  if (!engine_) return q_.all_empty();
  detail::taskq_frame* current = detail::current_taskq_frame();
  const bool empty = engine_->all_empty();
  detail::set_current_taskq_frame(current);
  return empty;
}

dist_rank_stats dist_taskq::stats() const {
  if (engine_) return engine_->stats();
  dist_rank_stats s;
  s.tasks = q_.impl_->live.puts_total();
  return s;
}

void dist_taskq::reset_stats() {
  if (engine_) engine_->reset_stats();
}

std::vector<dist_rank_stats> dist_taskq::gather_stats() {
  if (engine_) return engine_->gather_stats();
  return {stats()};
}

std::vector<std::byte> dist_taskq::gather_bytes(std::span<const std::byte> mine) {
  if (engine_) return engine_->gather(mine);
  return {mine.begin(), mine.end()};
}

}  // namespace locus
