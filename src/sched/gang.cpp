#include "sched/gang.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sched/fork_join.hpp"
#include "sched/runtime_impl.hpp"
#include "sched/spin_lock.hpp"
#include "sched/worker.hpp"
#include "topology/topology.hpp"

namespace locus::detail {
namespace {

void check_workers(const std::vector<int>& workers, int width, int size) {
  if (static_cast<int>(workers.size()) != width) {
    throw std::invalid_argument("locus: a gang of width " + std::to_string(width) + " names " +
                                std::to_string(workers.size()) + " workers");
  }
  std::vector<int> sorted = workers;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() < 0 || sorted.back() >= size ||
      std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    throw std::invalid_argument("locus: a gang's workers must be distinct workers 0 to " +
                                std::to_string(size - 1));
  }
}

// The inbox locks of `order`'s workers, taken in that order and released when it goes (a vector
// of unique_locks cost an allocation per dispatch).
class inboxes_held {
 public:
  inboxes_held(runtime_impl& rt, const std::vector<int>& order) : rt_(rt), order_(order) {
    for (const int t : order_) rt_.at(t).mail.lock().lock();
  }
  ~inboxes_held() {
    for (const int t : order_) rt_.at(t).mail.lock().unlock();
  }
  inboxes_held(const inboxes_held&) = delete;
  inboxes_held& operator=(const inboxes_held&) = delete;

 private:
  runtime_impl& rt_;
  const std::vector<int>& order_;
};

}  // namespace

gang_task::gang_task(int width) : width_(width) {
  if (width < 1) {
    throw std::invalid_argument("locus: a gang needs a width of at least 1, not " +
                                std::to_string(width));
  }
}

std::vector<int> gang_workers(const runtime_impl& rt, int self, int width) {
  const int size = rt.size();
  if (width > size) {
    throw std::invalid_argument("locus: a gang of width " + std::to_string(width) +
                                " needs more workers than the runtime's " + std::to_string(size));
  }
  int first = 0, last = size;
  const auto& nodes = rt.topology.nodes();
  // Walked by parent links rather than through ancestors(): this runs at every dispatch.
  for (int n = nodes[static_cast<std::size_t>(rt.topology.leaf_node(self))].parent; n >= 0;
       n = nodes[static_cast<std::size_t>(n)].parent) {
    const int a = std::max(0, nodes[static_cast<std::size_t>(n)].first_leaf);
    const int b = std::min(size, nodes[static_cast<std::size_t>(n)].last_leaf);
    if (b - a >= width) {
      first = a;
      last = b;
      break;
    }
  }
  // An aligned window within the node, moved left if it would run past the node's end; it
  // contains `self` either way.
  const int start = std::min(first + (self - first) / width * width, last - width);
  std::vector<int> chosen(static_cast<std::size_t>(width));
  for (int i = 0; i < width; ++i) chosen[static_cast<std::size_t>(i)] = start + i;
  return chosen;
}

void gang_task::execute() {
  worker* w = current_worker();
  runtime_impl& rt = w->rt;
  if (workers.empty()) {
    if (anchor >= rt.size() || anchor < -1) {
      throw std::invalid_argument("locus: a gang placed on worker " + std::to_string(anchor) +
                                  " of a runtime of " + std::to_string(rt.size()) + " workers");
    }
    const int around = anchor >= 0 ? anchor : w->index;
    workers = width_ == 1 ? std::vector<int>{around} : gang_workers(rt, around, width_);
  }
  check_workers(workers, width_, rt.size());
  int own = -1;
  if (independent_members) {
    const auto at = std::find(workers.begin(), workers.end(), w->index);
    if (at != workers.end()) own = static_cast<int>(at - workers.begin());
  }
  if (own >= 0 && width_ == 1) {
    run_member(0);  // nothing to dispatch
    return;
  }
  group_state& g = *group;
  entries_ = std::make_unique<gang_member[]>(static_cast<std::size_t>(width_));
  // The workers in the order their locks are taken, before the point from which nothing may
  // throw. check_workers left them distinct; the usual gang's window is sorted already.
  std::vector<int> order;
  const bool sorted = std::is_sorted(workers.begin(), workers.end());
  if (!sorted) {
    order = workers;
    std::sort(order.begin(), order.end());
  }
  const std::vector<int>& lock_order = sorted ? workers : order;
  for (int i = 0; i < width_; ++i) {
    gang_member& m = entries_[static_cast<std::size_t>(i)];
    m.gang = this;
    m.index = i;
    m.origin = w->index;
    m.group = &g;
  }
  // From here on nothing throws: the members hold the gang, the core's hold ends after execute.
  const int queued = own >= 0 ? width_ - 1 : width_;
  left_.store(width_ + 1, std::memory_order_relaxed);
  outlives_execute = true;
  g.pending.fetch_add(queued, std::memory_order_acq_rel);
  {
    const inboxes_held hold(rt, lock_order);
    for (int i = 0; i < width_; ++i) {
      if (i == own) continue;
      rt.at(workers[static_cast<std::size_t>(i)])
          .mail.put_locked(&entries_[static_cast<std::size_t>(i)], lane::first);
    }
  }
  for (const int t : lock_order) {
    if (t == w->index) continue;
    w->counters.pushes.add();
    rt.wake(t);
  }
  if (own >= 0) {
    try {
      run_member(own);
    } catch (...) {
      record_exception(g, std::current_exception());
    }
    member_ended();  // never the last: the core still holds the gang
  }
}

}  // namespace locus::detail
