// Flow graphs of task assemblies (seed 003 §3.2: go:TAO's make_edge, after oneTBB's flow graphs):
// assemblies (locus/assembly.hpp) joined by edges; an assembly becomes ready, and is queued like a
// simple task, once every assembly it has an edge from has ended. Placement is the assemblies'
// own (assembly::place_on), which is how go:TAO initialises the ready set on chosen workers.
//
//   locus::flow_graph g;
//   auto sort_a = g.add(std::make_unique<quick_merge>(...));
//   auto sort_b = g.add(std::make_unique<quick_merge>(...));
//   auto merge = g.add(std::make_unique<merge4>(...));
//   g.make_edge(sort_a, merge);
//   g.make_edge(sort_b, merge);
//   g.run();  // every assembly once, in an order the edges allow
#pragma once

#include <cstddef>
#include <memory>

#include "locus/assembly.hpp"

namespace locus {

class flow_graph {
 public:
  using node = std::size_t;

  flow_graph();
  ~flow_graph();
  flow_graph(const flow_graph&) = delete;
  flow_graph& operator=(const flow_graph&) = delete;

  // Adds an assembly; returns its node. Throws std::invalid_argument for a null one and
  // std::logic_error once the graph has run.
  node add(std::unique_ptr<assembly> a);
  // `to` starts only after `from` has ended. Throws std::out_of_range for an unknown node,
  // std::invalid_argument for an edge that would close a cycle, std::logic_error once the graph
  // has run.
  void make_edge(node from, node to);
  std::size_t size() const noexcept;

  // Runs every assembly once, each after all its predecessors have ended, and returns when all
  // have ended; from a task, or from any thread (then on the default runtime). Rethrows the first
  // exception an assembly threw; the assemblies that depend on a failed one, directly or not, do
  // not run. Once per graph: throws std::logic_error the second time.
  void run();

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace locus
