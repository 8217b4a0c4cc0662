// The gradients of a module's parameters, keyed by ParamId: what an optimiser
// step consumes.
//
//   burn::Gradients grads = loss.backward();
//   auto grads_params = burn::optim::GradientsParams::from_grads(grads, model);
//   model = optim.step(lr, model, std::move(grads_params));
#pragma once

#include <burn/module/module.hpp>
#include <cstddef>
#include <map>
#include <optional>

namespace burn::optim {

class GradientsParams {
 public:
  GradientsParams() = default;

  /// Moves the gradient of every trainable parameter of `module` out of
  /// `grads` (frozen parameters and parameters no gradient reached are skipped).
  template <module::Module M>
  static GradientsParams from_grads(Gradients& grads, const M& module) {
    GradientsParams out;
    module::for_each_param(module, [&](const std::string&, const module::ParamBase& p) { out.take(p, grads); });
    return out;
  }

  std::size_t size() const noexcept { return grads_.size(); }
  bool empty() const noexcept { return grads_.empty(); }
  bool contains(const module::ParamId& id) const { return grads_.count(id) != 0; }

  std::optional<burn::detail::TensorRef> get_ref(const module::ParamId& id) const;
  std::optional<burn::detail::TensorRef> remove_ref(const module::ParamId& id);
  /// Adds or replaces the gradient of `id` (a float tensor).
  void insert_ref(const module::ParamId& id, burn::detail::TensorRef grad);

  template <std::size_t D>
  std::optional<Tensor<D>> get(const module::ParamId& id) const {
    auto g = get_ref(id);
    return g ? std::optional<Tensor<D>>(Tensor<D>(*g)) : std::nullopt;
  }
  template <std::size_t D>
  std::optional<Tensor<D>> remove(const module::ParamId& id) {
    auto g = remove_ref(id);
    return g ? std::optional<Tensor<D>>(Tensor<D>(*g)) : std::nullopt;
  }
  template <std::size_t D>
  void insert(const module::ParamId& id, const Tensor<D>& grad) {
    insert_ref(id, grad.ref());
  }

  /// Every gradient, ordered by id.
  const std::map<module::ParamId, burn::detail::TensorRef>& items() const noexcept { return grads_; }
  std::map<module::ParamId, burn::detail::TensorRef>& items() noexcept { return grads_; }

 private:
  void take(const module::ParamBase& p, Gradients& grads);
  std::map<module::ParamId, burn::detail::TensorRef> grads_;
};

}  // namespace burn::optim
