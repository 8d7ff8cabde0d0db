// GraphBuilder collects nodes and explicit edges; build() consumes it into an immutable Graph.
//
// Dependencies follow the order in which nodes are added, like statements of a program: a node
// depends on the last earlier writer of every buffer it reads or writes (read-after-write,
// write-after-write) and on every earlier reader of a buffer it writes since that buffer's
// last write (write-after-read). Two reads never order each other. Explicit edges add to these.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "uops/runtime/graph.h"

namespace uops::runtime {

class GraphBuilder;

// A handle to a node being built. It keeps its builder's state alive, so it stays valid (and
// reports misuse) even after the builder is moved from or consumed.
class NodeRef {
 public:
  NodeIndex index() const { return index_; }
  // Adds the edge this -> next and returns next, so chains read left to right: a.then(b).then(c).
  NodeRef then(NodeRef next) const;
  // Declares the node's estimated run time in nanoseconds (see BuildOptions::handoff_ns).
  NodeRef cost(double nanoseconds) const;

 private:
  friend class GraphBuilder;
  struct State;
  NodeRef(std::shared_ptr<State> state, NodeIndex index)
      : state_(std::move(state)), index_(index) {}
  std::shared_ptr<State> state_;
  NodeIndex index_;
};

// Several nodes that a later node waits for as a group: when_all({a, b}).then(c).
struct Join {
  std::vector<NodeRef> nodes;
  NodeRef then(NodeRef next) const;
};
Join when_all(std::vector<NodeRef> nodes);

class GraphBuilder {
 public:
  GraphBuilder();

  NodeRef add(Node node);
  NodeRef add(std::string name, CpuKernel kernel, std::vector<BufferId> reads,
              std::vector<BufferId> writes);
  NodeRef add_cuda(std::string name, CudaKernel kernel, std::vector<BufferId> reads,
                   std::vector<BufferId> writes);

  // Consumes the builder: any later use of it or of its NodeRefs throws Error. Throws Error
  // naming a node on a cycle if the explicit edges form one.
  Graph build(const BuildOptions& options = {}) &&;

 private:
  std::shared_ptr<NodeRef::State> state_;
};

}  // namespace uops::runtime
