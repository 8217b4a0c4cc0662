#include "loss_checks.hpp"

#include <fmt/format.h>

#include <cmath>

namespace burn::nn::loss::detail {

void check_smoothing(const std::optional<double>& alpha, std::string_view config) {
  if (alpha && !(*alpha >= 0.0 && *alpha <= 1.0))
    throw Error(config, fmt::format("label smoothing must be in [0, 1], got {}", *alpha));
}

void check_weights(const std::optional<std::vector<double>>& weights, std::string_view config) {
  if (!weights) return;
  if (weights->empty()) throw Error(config, "weights must hold one value per class, got none");
  for (std::size_t i = 0; i < weights->size(); ++i) {
    const double w = (*weights)[i];
    if (!(w > 0.0) || !std::isfinite(w))
      throw Error(config, fmt::format("weights must be positive and finite, got {} at index {}", w, i));
  }
}

std::optional<Tensor<1>> weights_tensor(const std::optional<std::vector<double>>& weights,
                                        const TensorCreationOptions& options) {
  if (!weights) return std::nullopt;
  return Tensor<1>::from_data(TensorData(*weights), options);
}

Tensor<1> follow(const Tensor<1>& t, const burn::detail::TensorRef& like) {
  Tensor<1> out = t;
  if (!(out.device() == like->device)) out = out.to_device(like->device);
  if (out.dtype() != like->spec.dtype) out = out.cast(like->spec.dtype);
  // A constant: taking the input's autodiff context only keeps results on it.
  return Tensor<1>(burn::detail::with_context(out.ref(), like->device));
}

std::vector<std::int64_t> host_ints(const burn::detail::TensorRef& t) {
  return burn::detail::to_data(t).convert(DType::I64).to_vec<std::int64_t>();
}

}  // namespace burn::nn::loss::detail
