#include <fmt/format.h>

#include <burn/optim/gradients_params.hpp>

namespace burn::optim {

std::optional<burn::detail::TensorRef> GradientsParams::get_ref(const module::ParamId& id) const {
  auto it = grads_.find(id);
  if (it == grads_.end()) return std::nullopt;
  return it->second;
}

std::optional<burn::detail::TensorRef> GradientsParams::remove_ref(const module::ParamId& id) {
  auto it = grads_.find(id);
  if (it == grads_.end()) return std::nullopt;
  auto g = std::move(it->second);
  grads_.erase(it);
  return g;
}

void GradientsParams::insert_ref(const module::ParamId& id, burn::detail::TensorRef grad) {
  if (!grad || !is_float(grad->spec.dtype))
    throw Error("GradientsParams", fmt::format("the gradient of parameter {} must be a float tensor", id.to_string()));
  grads_[id] = std::move(grad);
}

void GradientsParams::take(const module::ParamBase& p, Gradients& grads) {
  if (!p.is_trainable()) return;
  if (auto g = burn::detail::grad_remove(p.ref(), grads)) grads_[p.id()] = std::move(*g);
}

}  // namespace burn::optim
