// Gradients and the no-grad scope.
//
//   auto device = burn::Device::flex().autodiff();
//   auto x = burn::Tensor<1>::from_floats({1.0, 2.0, 3.0}, device).require_grad();
//   auto y = (x * x).sum();
//   burn::Gradients grads = y.backward();          // non-scalar outputs are seeded with ones
//   std::optional<burn::Tensor<1>> dx = x.grad(grads);   // 2 * x
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>

#include <burn/detail/tensor_ref.hpp>

namespace burn {

/// The gradients a backward pass produced, keyed by the leaf tensors that
/// required them. Read them with `tensor.grad(grads)`.
class Gradients {
 public:
  Gradients() = default;
  std::size_t size() const noexcept { return grads_.size(); }
  bool empty() const noexcept { return grads_.empty(); }

  // Internal: keyed by the leaf's autodiff node id.
  std::optional<detail::TensorRef> get(std::uint64_t leaf_id) const;
  std::optional<detail::TensorRef> remove(std::uint64_t leaf_id);
  void insert(std::uint64_t leaf_id, detail::TensorRef grad);

 private:
  std::unordered_map<std::uint64_t, detail::TensorRef> grads_;
};

/// While alive, operations on this thread record no autodiff graph.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

/// Whether operations on this thread are currently recorded (false inside a NoGradGuard).
bool is_grad_enabled() noexcept;

namespace detail {
/// Marks a float tensor on an autodiff device as a leaf that collects gradients.
TensorRef require_grad(const TensorRef& t, bool require);
bool is_require_grad(const TensorRef& t) noexcept;
/// Same values, no graph.
TensorRef detach(const TensorRef& t);
/// Called during a backward pass as soon as a leaf's gradient is complete
/// (no node left in the pass adds to it), in the order the pass finishes the
/// leaves: what lets gradient synchronisation start communicating while the
/// pass goes on. The gradient also lands in the returned Gradients.
using LeafGradientHook = std::function<void(std::uint64_t leaf_id, const TensorRef& grad)>;
/// Runs the backward pass from `t` (seeded with ones).
Gradients backward(const TensorRef& t, const LeafGradientHook& on_leaf = nullptr);
/// The id a leaf's gradient is keyed by (none for a tensor that is not a leaf).
std::optional<std::uint64_t> leaf_id(const TensorRef& t) noexcept;
std::optional<TensorRef> grad(const TensorRef& t, const Gradients& grads);
std::optional<TensorRef> grad_remove(const TensorRef& t, Gradients& grads);
}  // namespace detail

}  // namespace burn
