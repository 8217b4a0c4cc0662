// Recording: which ops enter the graph and what each node keeps for backward.
#include <fmt/format.h>

#include "autodiff/graph.hpp"
#include "autodiff/vjp.hpp"

namespace burn {

namespace {
thread_local bool grad_enabled = true;
}

bool is_grad_enabled() noexcept { return grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(grad_enabled) { grad_enabled = false; }
NoGradGuard::~NoGradGuard() { grad_enabled = previous_; }

}  // namespace burn

namespace burn::autodiff {

Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending = std::move(parents);
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    // Holding the last reference: take over its parents before it dies, so
    // its destructor finds none.
    if (node && node.use_count() == 1) {
      for (auto& p : node->parents) pending.push_back(std::move(p));
      node->parents.clear();
    }
  }
}

std::uint64_t next_node_id() {
  static std::atomic<std::uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

TensorRef untracked(const TensorRef& t) {
  if (!t->node) return t;
  return std::make_shared<const detail::TensorImpl>(detail::TensorImpl{t->spec, t->device, t->primitive});
}

namespace {
/// What a node keeps of a value its rule reads only as a shape: spec and
/// device, no storage (dispatch refuses it as an op input).
TensorRef spec_only(const TensorRef& t) {
  return std::make_shared<const detail::TensorImpl>(detail::TensorImpl{t->spec, t->device, nullptr});
}
}  // namespace

std::uint32_t inputs_kept(const ir::Op& op, std::span<const TensorRef> inputs) {
  if (!is_grad_enabled()) return 0;
  bool tracked = false;
  for (const auto& t : inputs) {
    if (!t->node) continue;
    // Checkpointed nodes keep their inputs to run the op again.
    if (t->node->strategy.has_value()) return ~0u;
    tracked = true;
  }
  return tracked ? saved_values(op).inputs : 0;
}

std::shared_ptr<Node> record(const ir::Op& op, std::span<const TensorRef> inputs, std::span<const TensorRef> outputs) {
  if (!is_grad_enabled()) return nullptr;
  const TensorRef* first_tracked = nullptr;
  for (const auto& t : inputs)
    if (t->node) {
      if (!first_tracked) {
        first_tracked = &t;
      } else if ((*first_tracked)->node->strategy != t->node->strategy) {
        throw Error(ir::op_name(op),
                    "cannot combine tracked tensors with different gradient checkpointing settings; create both on "
                    "the same autodiff device (with or without .gradient_checkpointing())");
      }
    }
  if (!first_tracked) return nullptr;
  bool any_float_output = false;
  for (const auto& o : outputs) any_float_output = any_float_output || is_float(o->spec.dtype);
  if (!any_float_output) return nullptr;  // Int and Bool results never carry nodes

  auto node = std::make_shared<Node>();
  node->id = next_node_id();
  node->kind = NodeKind::Op;
  node->op = op;
  node->strategy = (*first_tracked)->node->strategy;
  node->checkpointed = node->strategy.has_value() && ir::is_memory_bound(op);
  for (const auto& o : outputs) node->output_specs.push_back(o->spec);
  // A checkpointed node keeps every input it cannot recompute (running the
  // op again needs them all) and no output. Any other node keeps only the
  // values its backward rule reads.
  const SavedValues keep = node->checkpointed ? SavedValues{} : saved_values(op);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const TensorRef& t = inputs[i];
    node->parents.push_back(t->node);
    node->parent_outputs.push_back(t->node_output);
    // A checkpointed node does not keep an input another checkpointed node
    // can recompute: that is where the memory saving comes from.
    const bool recomputable = node->checkpointed && t->node && t->node->checkpointed;
    node->inputs.push_back(recomputable ? nullptr : keeps_slot(keep.inputs, i) ? untracked(t) : spec_only(t));
  }
  if (!node->checkpointed)
    for (std::size_t i = 0; i < outputs.size(); ++i)
      node->outputs.push_back(keeps_slot(keep.outputs, i) ? outputs[i] : spec_only(outputs[i]));
  return node;
}

TensorRef track_to_device(const TensorRef& source, TensorRef moved) {
  if (!source->node || !is_grad_enabled()) return moved;
  auto node = std::make_shared<Node>();
  node->id = next_node_id();
  node->kind = NodeKind::ToDevice;
  node->parents.push_back(source->node);
  node->parent_outputs.push_back(source->node_output);
  node->inputs.push_back(nullptr);
  node->output_specs.push_back(moved->spec);
  node->source_device = source->device;
  node->strategy = source->node->strategy;
  return std::make_shared<const detail::TensorImpl>(
      detail::TensorImpl{moved->spec, moved->device, moved->primitive, std::move(node), 0});
}

}  // namespace burn::autodiff
