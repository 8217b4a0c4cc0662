// Activation functions, written once as composites of primitive ops
// (src/tensor/activation.cpp), so every backend and autodiff get them free.
// Softmax and log-softmax along the last dim, and gelu, run as one IR op on
// the devices that have a kernel for it.
#pragma once

#include <burn/tensor.hpp>

namespace burn::detail {
TensorRef relu(const TensorRef& t);
TensorRef relu(TensorRef&& t);
TensorRef leaky_relu(const TensorRef& t, double negative_slope);
TensorRef gelu(const TensorRef& t);
TensorRef gelu_tanh(const TensorRef& t);
TensorRef silu(const TensorRef& t);
TensorRef sigmoid(const TensorRef& t);
TensorRef log_sigmoid(const TensorRef& t);
TensorRef softplus(const TensorRef& t, double beta);
TensorRef softmax(const TensorRef& t, std::int64_t dim);
TensorRef log_softmax(const TensorRef& t, std::int64_t dim);
TensorRef hard_sigmoid(const TensorRef& t, double alpha, double beta);
TensorRef mish(const TensorRef& t);
}  // namespace burn::detail

namespace burn::activation {

/// max(x, 0)
template <std::size_t D>
Tensor<D> relu(const Tensor<D>& t) {
  return Tensor<D>(detail::relu(t.ref()));
}
/// Consuming form (a temporary or std::move): the result may take t's storage.
template <std::size_t D>
Tensor<D> relu(Tensor<D>&& t) {
  detail::TensorRef owned;
  {
    const Tensor<D> taken = std::move(t);  // t lets go; `owned` keeps the only handle
    owned = taken.ref();
  }
  return Tensor<D>(detail::relu(std::move(owned)));
}
/// x for x >= 0, slope * x otherwise.
template <std::size_t D>
Tensor<D> leaky_relu(const Tensor<D>& t, double negative_slope = 0.01) {
  return Tensor<D>(detail::leaky_relu(t.ref(), negative_slope));
}
/// x * Phi(x) with the exact (erf) CDF.
template <std::size_t D>
Tensor<D> gelu(const Tensor<D>& t) {
  return Tensor<D>(detail::gelu(t.ref()));
}
/// The tanh approximation of gelu.
template <std::size_t D>
Tensor<D> gelu_tanh(const Tensor<D>& t) {
  return Tensor<D>(detail::gelu_tanh(t.ref()));
}
/// x * sigmoid(x)
template <std::size_t D>
Tensor<D> silu(const Tensor<D>& t) {
  return Tensor<D>(detail::silu(t.ref()));
}
template <std::size_t D>
Tensor<D> sigmoid(const Tensor<D>& t) {
  return Tensor<D>(detail::sigmoid(t.ref()));
}
/// log(sigmoid(x)), computed without overflow.
template <std::size_t D>
Tensor<D> log_sigmoid(const Tensor<D>& t) {
  return Tensor<D>(detail::log_sigmoid(t.ref()));
}
/// log(1 + exp(beta x)) / beta, computed without overflow.
template <std::size_t D>
Tensor<D> softplus(const Tensor<D>& t, double beta = 1.0) {
  return Tensor<D>(detail::softplus(t.ref(), beta));
}
template <std::size_t D>
Tensor<D> softmax(const Tensor<D>& t, std::int64_t dim) {
  return Tensor<D>(detail::softmax(t.ref(), dim));
}
template <std::size_t D>
Tensor<D> log_softmax(const Tensor<D>& t, std::int64_t dim) {
  return Tensor<D>(detail::log_softmax(t.ref(), dim));
}
/// clamp(alpha * x + beta, 0, 1)
template <std::size_t D>
Tensor<D> hard_sigmoid(const Tensor<D>& t, double alpha = 0.2, double beta = 0.5) {
  return Tensor<D>(detail::hard_sigmoid(t.ref(), alpha, beta));
}
/// x * tanh(softplus(x))
template <std::size_t D>
Tensor<D> mish(const Tensor<D>& t) {
  return Tensor<D>(detail::mish(t.ref()));
}
template <std::size_t D>
Tensor<D> tanh(const Tensor<D>& t) {
  return t.tanh();
}

}  // namespace burn::activation
