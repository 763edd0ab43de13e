// locus::assembly (seed 003 §3.2): an assembly runs as a gang (sched/gang.hpp). The worker that
// takes it from a queue, like a simple task, puts one member into the assembly queue (the inbox's
// first lane, looked at before the worker's own queue) of each of its workers, all at once and
// in one order on every worker, which is the paper's deadlock-free FIFO insertion; each member
// calls execute with its index, and the last one to return runs cleanup.
#include "locus/assembly.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <utility>

#include "sched/cpu_relax.hpp"
#include "sched/gang.hpp"
#include "sched/group_access.hpp"

namespace locus {

assembly::assembly(int width, assembly_entry entry) : width_(width), entry_(entry) {
  if (width < 1) {
    throw std::invalid_argument("locus: an assembly needs a width of at least 1, not " +
                                std::to_string(width));
  }
}

namespace detail {
namespace {

class assembly_task final : public gang_task {
 public:
  explicit assembly_task(std::unique_ptr<assembly> a)
      : gang_task(a->width()), assembly_(std::move(a)), left_(assembly_->width()) {
    anchor = assembly_->placed_on();
    // One worker waits for nobody: its barriers are passed on arrival.
    independent_members = !assembly_->workers_wait_for_each_other() || assembly_->width() == 1;
  }

  void run_member(int index) override {
    try {
      if (assembly_->entry() == assembly_entry::synchronous) enter_together();
      assembly_->execute(index);
    } catch (...) {
      leave();
      throw;
    }
    leave();
  }

 private:
  // The entry barrier, spinning as go:TAO's workers do (yielding the CPU after a while). Every
  // member gets there: members reach their workers' assembly queues at once and in one order on
  // every worker, so no two synchronous assemblies can each hold a worker the other waits for.
  void enter_together() noexcept {
    arrived_.fetch_add(1, std::memory_order_acq_rel);
    spin_until([this] { return arrived_.load(std::memory_order_acquire) >= width(); });
  }

  void leave() {
    if (left_.fetch_sub(1, std::memory_order_acq_rel) == 1) assembly_->cleanup();
  }

  std::unique_ptr<assembly> assembly_;
  std::atomic<int> arrived_{0};
  std::atomic<int> left_;
};

}  // namespace
}  // namespace detail

void run_assembly(task_group& tg, std::unique_ptr<assembly> a) {
  if (a == nullptr) throw std::invalid_argument("locus::run_assembly: no assembly");
  detail::group_state& g = detail::group_access::of(tg);
  if (detail::any_group_canceling() && detail::drop_canceled_spawn(g)) return;
  detail::spawn_parent_first(g, std::make_unique<detail::assembly_task>(std::move(a)));
}

}  // namespace locus
