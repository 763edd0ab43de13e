// The public runtime object and the default runtime.
#include "locus/runtime.hpp"

#include <stdexcept>
#include <string>

#include "locus/locality.hpp"
#include "prof/locality_hooks.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/task_frame.hpp"

namespace locus {

runtime::runtime() : runtime(options{}) {}
runtime::runtime(const options& opts) : impl_(std::make_unique<detail::runtime_impl>(opts)) {
  prof::locality_runtime_started(*this);
}
runtime::~runtime() {
  // A locality session must not outlive the workers and topology it records.
  prof::locality_runtime_stopping(*this);
}

void runtime::run_root(std::unique_ptr<detail::task_base> root, detail::root_signal& signal) {
  impl_->run_root(std::move(root), signal);
}
int runtime::num_workers() const noexcept {
  return impl_->size();
}
int runtime::num_places() const noexcept {
  return impl_->num_places();
}
int runtime::place_of_worker(int worker) const {
  if (worker < 0 || worker >= impl_->size()) {
    throw std::out_of_range("locus: worker " + std::to_string(worker) + " is not one of the " +
                            std::to_string(impl_->size()) + " workers");
  }
  return impl_->at(worker).place;
}
const std::string& runtime::scheduler() const noexcept {
  return impl_->settings.sched;
}
std::string runtime::describe() const {
  return impl_->describe();
}
locus::stats runtime::stats() const {
  return impl_->stats();
}
void runtime::reset_stats() {
  impl_->reset_stats();
}
void runtime::relearn() {
  impl_->sched->relearn();
  if (impl_->learner) impl_->learner->relearn();
}

void runtime::pmu_start() {
  impl_->pmu.start();
}
void runtime::pmu_stop() {
  impl_->pmu.stop();
}
std::optional<workspan_result> runtime::workspan() const {
  if (const prof::workspan_meter* m = impl_->workspan()) return m->result();
  return std::nullopt;
}

runtime& default_runtime() {
  // Created on first use; destroyed at exit after main returns (its destructor joins the
  // workers and prints the statistics when LOCUS_STATS is set).
  static runtime instance;
  return instance;
}

int this_worker() noexcept {
  detail::worker* w = detail::current_worker();
  return w != nullptr ? w->index : -1;
}

int this_task_place() noexcept {
  detail::worker* w = detail::current_worker();
  return w != nullptr ? detail::frame_of(*w->running).place() : -1;
}

std::uint64_t this_task_path() noexcept {
  detail::worker* w = detail::current_worker();
  return w != nullptr ? detail::frame_of(*w->running).path() : 0;
}

void next_iteration() noexcept {
  locality::next_iteration();
  detail::worker* w = detail::current_worker();
  if (w == nullptr) return;
  // The next iteration's groups get the names of this one's.
  detail::frame_of(*w->running).groups_started = 0;
  if (w->rt.learner) w->rt.learner->iteration_ends(*w);
  w->rt.sched->iteration_end(w->ctx);
}

int num_workers() {
  if (detail::runtime_impl* rt = detail::current_runtime()) return rt->size();
  return default_runtime().num_workers();
}

int num_places() {
  if (detail::runtime_impl* rt = detail::current_runtime()) return rt->num_places();
  return default_runtime().num_places();
}

int current_place() noexcept {
  detail::worker* w = detail::current_worker();
  return w != nullptr ? w->place : -1;
}

}  // namespace locus
