// The backward pass: reverse topological order over the graph reachable from
// the root, one vector-Jacobian product per node, freeing each node as soon
// as it is consumed.
#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "amp/autocast_hooks.hpp"
#include "autodiff/graph.hpp"
#include "autodiff/vjp.hpp"

namespace burn::autodiff {
namespace {

[[noreturn]] void consumed_error() {
  throw Error("backward",
              "the autodiff graph was already consumed by a backward pass; run the forward computation again to "
              "build a new graph");
}

/// Values of checkpointed nodes, recomputed on demand during one backward
/// pass. Each is computed at most once and dropped when its node is consumed
/// (all its consumers are children, processed before it), so a recomputed
/// segment lives only while backward walks through it.
class Recomputer {
 public:
  /// A node's outputs: kept, or recomputed (iteratively: memory-bound chains
  /// can be arbitrarily long).
  const std::vector<TensorRef>& outputs(Node& target) {
    if (available(target)) return values(target);
    std::vector<Node*> stack{&target};
    while (!stack.empty()) {
      Node* node = stack.back();
      if (available(*node)) {
        stack.pop_back();
        continue;
      }
      Node* missing = nullptr;
      for (std::size_t i = 0; i < node->inputs.size() && !missing; ++i) {
        if (node->inputs[i]) continue;
        Node* parent = node->parents[i].get();
        if (!parent || parent->consumed) consumed_error();
        if (!available(*parent)) missing = parent;
      }
      if (missing) {
        stack.push_back(missing);
        continue;
      }
      cache_[node] = detail::execute(*node->op, inputs(*node));
      stack.pop_back();
    }
    return values(target);
  }

  /// A node's input values (saved, or its parents' outputs).
  std::vector<TensorRef> inputs(Node& node) {
    std::vector<TensorRef> values;
    values.reserve(node.inputs.size());
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i]) {
        values.push_back(node.inputs[i]);
      } else {
        if (!node.parents[i] || node.parents[i]->consumed) consumed_error();
        values.push_back(outputs(*node.parents[i]).at(node.parent_outputs[i]));
      }
    }
    return values;
  }

  void forget(Node& node) { cache_.erase(&node); }

 private:
  bool available(Node& node) const { return !node.outputs.empty() || cache_.count(&node); }
  const std::vector<TensorRef>& values(Node& node) const {
    return node.outputs.empty() ? cache_.at(&node) : node.outputs;
  }

  std::unordered_map<Node*, std::vector<TensorRef>> cache_;
};

/// Post-order DFS (iterative: graphs can be thousands of nodes deep). The
/// order owns the nodes: releasing a node drops its parents, and the pass must
/// still reach them.
std::vector<std::shared_ptr<Node>> topological_order(const std::shared_ptr<Node>& root) {
  std::vector<std::shared_ptr<Node>> order;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<std::shared_ptr<Node>, std::size_t>> stack{{root, 0}};
  visited.insert(root.get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->parents.size()) {
      std::shared_ptr<Node> parent = node->parents[next++];
      if (parent && visited.insert(parent.get()).second) stack.emplace_back(std::move(parent), 0);
    } else {
      order.push_back(std::move(node));
      stack.pop_back();
    }
  }
  return order;  // parents before children
}

void accumulate(std::optional<TensorRef>& slot, TensorRef grad) {
  slot = slot ? detail::binary(ir::BinaryOp::Add, *slot, grad) : std::move(grad);
}

void release(Node& node) {
  node.inputs.clear();
  node.outputs.clear();
  node.parents.clear();
  node.consumed = true;
}

}  // namespace

}  // namespace burn::autodiff

namespace burn::detail {

Gradients backward(const TensorRef& root, const LeafGradientHook& on_leaf) {
  using namespace autodiff;
  if (!root->node)
    throw Error("backward",
                "this tensor is not part of an autodiff graph: create the inputs on an autodiff device "
                "(Device::autodiff()) and call require_grad() on the leaves");
  if (!is_float(root->spec.dtype)) throw Error("backward", "only float tensors have gradients");
  if (root->node->consumed) consumed_error();

  NoGradGuard no_grad;  // the rules' own ops are never recorded
  // Each gradient stays in its forward value's dtype: the forward's casts
  // are nodes whose rules cast the gradient back.
  amp::detail::SuspendAutocast no_autocast;
  Gradients result;
  std::unordered_map<Node*, std::vector<std::optional<TensorRef>>> pending;
  auto slots = [&](Node* n) -> std::vector<std::optional<TensorRef>>& {
    auto& v = pending[n];
    if (v.empty()) v.resize(std::max<std::size_t>(n->output_specs.size(), 1));
    return v;
  };
  slots(root->node.get())[root->node_output] =
      create(ir::Full{root->spec.shape, 1.0, root->spec.dtype}, root->device.without_autodiff());

  Recomputer recomputer;
  std::vector<std::shared_ptr<Node>> order = topological_order(root->node);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = it->get();
    auto found = pending.find(node);
    std::vector<std::optional<TensorRef>> cotangents;
    if (found != pending.end()) {
      cotangents = std::move(found->second);
      pending.erase(found);
    }
    const bool any = std::any_of(cotangents.begin(), cotangents.end(), [](const auto& c) { return c.has_value(); });

    if (node->kind == NodeKind::Leaf) {
      if (any) {
        if (on_leaf) on_leaf(node->id, *cotangents[0]);
        result.insert(node->id, *cotangents[0]);
      }
      continue;  // leaves outlive the graph (parameters are reused across steps)
    }
    if (node->consumed) consumed_error();
    if (any) {
      if (node->kind == NodeKind::ToDevice) {
        if (node->parents[0])
          accumulate(slots(node->parents[0].get())[node->parent_outputs[0]],
                     to_device(*cotangents[0], node->source_device->without_autodiff()));
      } else {
        const std::vector<TensorRef> ins = recomputer.inputs(*node);
        const std::vector<TensorRef> outs = recomputer.outputs(*node);
        cotangents.resize(outs.size());
        // Only tracked float inputs want a gradient (span<const bool> needs real bools).
        std::unique_ptr<bool[]> needs(new bool[ins.size()]);
        for (std::size_t i = 0; i < ins.size(); ++i)
          needs[i] = node->parents[i] != nullptr && is_float(ins[i]->spec.dtype);
        const Grads grads =
            vjp(*node->op, VjpArgs{ins, outs, cotangents, std::span<const bool>(needs.get(), ins.size())});
        for (std::size_t i = 0; i < ins.size() && i < grads.size(); ++i) {
          if (!grads[i] || !node->parents[i]) continue;
          if (grads[i]->get()->spec != ins[i]->spec)
            throw Error(ir::op_name(*node->op),
                        fmt::format("backward rule returned a gradient of shape {} ({}) for an input of shape {} ({})",
                                    (*grads[i])->spec.shape.to_string(), dtype_name((*grads[i])->spec.dtype),
                                    ins[i]->spec.shape.to_string(), dtype_name(ins[i]->spec.dtype)));
          accumulate(slots(node->parents[i].get())[node->parent_outputs[i]], *grads[i]);
        }
      }
    }
    release(*node);
    recomputer.forget(*node);
    it->reset();  // a consumed node's memory goes now, not at the end of the pass
  }
  return result;
}

}  // namespace burn::detail
