#include "locus/flow_graph.hpp"

#include <atomic>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "locus/runtime.hpp"
#include "locus/task_group.hpp"
#include "sched/dag_reach.hpp"
#include "sched/group_access.hpp"

namespace locus {

struct flow_graph::impl {
  struct node_state {
    std::unique_ptr<assembly> work;
    std::vector<node> successors;
    int predecessors = 0;
    std::atomic<int> waiting{0};
    std::atomic<bool> failed{false};  // a predecessor failed: it does not run
  };

  // A node's assembly as the runtime runs it: the user's, and, once it has ended, its successors
  // that it was the last predecessor of are queued.
  class node_assembly final : public assembly {
   public:
    node_assembly(impl& graph, node n, std::unique_ptr<assembly> work)
        : assembly(work->width(), work->entry()), graph_(graph), node_(n), work_(std::move(work)) {
      place_on(work_->placed_on());
    }
    void execute(int index) override {
      try {
        work_->execute(index);
      } catch (...) {
        failed_.store(true, std::memory_order_relaxed);
        throw;
      }
    }
    bool workers_wait_for_each_other() const noexcept override {
      return work_->workers_wait_for_each_other();
    }
    void cleanup() override {
      try {
        work_->cleanup();
      } catch (...) {
        graph_.ended(node_, true);
        throw;
      }
      graph_.ended(node_, failed_.load(std::memory_order_relaxed));
    }

   private:
    impl& graph_;
    node node_;
    std::unique_ptr<assembly> work_;
    std::atomic<bool> failed_{false};
  };

  void start(node n) {
    node_state& s = *nodes[n];
    if (s.failed.load(std::memory_order_relaxed)) {
      ended(n, true);
      return;
    }
    run_assembly(group, std::make_unique<node_assembly>(*this, n, std::move(s.work)));
  }

  // Node `n` has ended (or, after a failure, will not run): its successors whose last
  // predecessor it was start, or are skipped in turn.
  void ended(node n, bool failed) {
    for (const node s : nodes[n]->successors) {
      node_state& next = *nodes[s];
      if (failed) next.failed.store(true, std::memory_order_relaxed);
      if (next.waiting.fetch_sub(1, std::memory_order_acq_rel) == 1) start(s);
    }
  }

  void check_open(const char* what) const {
    if (ran)
      throw std::logic_error(std::string("locus::flow_graph::") + what + ": the graph has run");
  }

  // Isolated: a failed node stops what depends on it, not the nodes beside it (their group
  // would otherwise cancel them, as a task_group cancels the siblings of a child that throws).
  impl() { detail::group_access::of(group).isolated = true; }

  std::vector<std::unique_ptr<node_state>> nodes;
  task_group group;
  bool ran = false;
};

flow_graph::flow_graph() : impl_(std::make_unique<impl>()) {}
flow_graph::~flow_graph() = default;

flow_graph::node flow_graph::add(std::unique_ptr<assembly> a) {
  impl_->check_open("add");
  if (a == nullptr) throw std::invalid_argument("locus::flow_graph::add: no assembly");
  impl_->nodes.push_back(std::make_unique<impl::node_state>());
  impl_->nodes.back()->work = std::move(a);
  return impl_->nodes.size() - 1;
}

void flow_graph::make_edge(node from, node to) {
  impl_->check_open("make_edge");
  const std::size_t n = impl_->nodes.size();
  if (from >= n || to >= n) {
    throw std::out_of_range("locus::flow_graph::make_edge: no node " +
                            std::to_string(from >= n ? from : to) + " in a graph of " +
                            std::to_string(n));
  }
  const auto successors = [this](node n) -> const std::vector<node>& {
    return impl_->nodes[n]->successors;
  };
  if (from == to || detail::reaches(n, to, from, successors)) {
    throw std::invalid_argument("locus::flow_graph::make_edge: " + std::to_string(from) + " -> " +
                                std::to_string(to) + " closes a cycle");
  }
  impl_->nodes[from]->successors.push_back(to);
  ++impl_->nodes[to]->predecessors;
}

std::size_t flow_graph::size() const noexcept {
  return impl_->nodes.size();
}

void flow_graph::run() {
  impl_->check_open("run");
  impl_->ran = true;
  root_exec([this] {
    std::vector<node> sources;
    for (node n = 0; n < impl_->nodes.size(); ++n) {
      impl::node_state& s = *impl_->nodes[n];
      s.waiting.store(s.predecessors, std::memory_order_relaxed);
      if (s.predecessors == 0) sources.push_back(n);
    }
    for (const node n : sources) impl_->start(n);
    impl_->group.wait();
  });
}

}  // namespace locus
