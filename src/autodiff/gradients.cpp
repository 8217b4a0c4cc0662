// Leaves, detaching, and reading gradients.
#include <fmt/format.h>

#include "autodiff/graph.hpp"

namespace burn {

std::optional<detail::TensorRef> Gradients::get(std::uint64_t leaf_id) const {
  auto it = grads_.find(leaf_id);
  if (it == grads_.end()) return std::nullopt;
  return it->second;
}

std::optional<detail::TensorRef> Gradients::remove(std::uint64_t leaf_id) {
  auto it = grads_.find(leaf_id);
  if (it == grads_.end()) return std::nullopt;
  auto g = std::move(it->second);
  grads_.erase(it);
  return g;
}

void Gradients::insert(std::uint64_t leaf_id, detail::TensorRef grad) { grads_[leaf_id] = std::move(grad); }

}  // namespace burn

namespace burn::detail {

TensorRef require_grad(const TensorRef& t, bool require) {
  if (!require) return detach(t);
  if (!t->device.is_autodiff())
    throw Error("require_grad", fmt::format("the tensor is on {} without autodiff; create it on an autodiff device "
                                            "(Device::autodiff()) or call .autodiff() on the tensor first",
                                            t->device.to_string()));
  if (!is_float(t->spec.dtype))
    throw Error("require_grad", fmt::format("only float tensors have gradients, got {}", dtype_name(t->spec.dtype)));
  if (t->node && t->node->kind == autodiff::NodeKind::Leaf) return t;
  auto leaf = std::make_shared<autodiff::Node>();
  leaf->id = autodiff::next_node_id();
  leaf->kind = autodiff::NodeKind::Leaf;
  leaf->output_specs.push_back(t->spec);
  leaf->strategy = t->device.gradient_checkpointing_strategy();
  return std::make_shared<const TensorImpl>(TensorImpl{t->spec, t->device, t->primitive, std::move(leaf), 0});
}

bool is_require_grad(const TensorRef& t) noexcept { return t->node && t->node->kind == autodiff::NodeKind::Leaf; }

std::optional<std::uint64_t> leaf_id(const TensorRef& t) noexcept {
  if (!is_require_grad(t)) return std::nullopt;
  return t->node->id;
}

TensorRef detach(const TensorRef& t) { return autodiff::untracked(t); }

std::optional<TensorRef> grad(const TensorRef& t, const Gradients& grads) {
  if (!t->node) return std::nullopt;
  auto g = grads.get(t->node->id);
  if (!g) return std::nullopt;
  // Gradients are plain values on the tensor's device, without autodiff.
  return with_context(*g, t->device.without_autodiff());
}

std::optional<TensorRef> grad_remove(const TensorRef& t, Gradients& grads) {
  if (!t->node) return std::nullopt;
  auto g = grads.remove(t->node->id);
  if (!g) return std::nullopt;
  return with_context(*g, t->device.without_autodiff());
}

}  // namespace burn::detail
