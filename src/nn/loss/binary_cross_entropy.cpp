#include <fmt/format.h>

#include <burn/activation.hpp>
#include <burn/amp/autocast.hpp>
#include <burn/nn/loss/binary_cross_entropy.hpp>

#include "loss_checks.hpp"

namespace burn::nn::loss {

namespace {

constexpr const char* kBinaryCrossEntropy = "binary_cross_entropy";

/// The loss of every element; `t` holds the (smoothed) float targets.
template <std::size_t D>
Tensor<D> elementwise_loss(const Tensor<D>& x, const Tensor<D>& t, bool logits) {
  if (logits) return (1.0 - t) * x - activation::log_sigmoid(x);
  // Clamping the logs at -100 keeps p = 0 or 1 finite (PyTorch, Burn).
  return (t - 1.0) * (-x).log1p().clamp_min(-100.0) - t * x.log().clamp_min(-100.0);
}

}  // namespace

BinaryCrossEntropyLoss BinaryCrossEntropyLossConfig::init(const TensorCreationOptions& options) const {
  detail::check_smoothing(smoothing, "BinaryCrossEntropyLossConfig");
  detail::check_weights(weights, "BinaryCrossEntropyLossConfig");
  return BinaryCrossEntropyLoss{detail::weights_tensor(weights, options), smoothing, logits};
}

Tensor<1> BinaryCrossEntropyLoss::forward_impl(const burn::detail::TensorRef& preds_in,
                                               const burn::detail::TensorRef& targets) const {
  const burn::detail::TensorRef preds = amp::detail::float32_input(preds_in);  // f32 under autocast
  const Shape& shape = preds->spec.shape;
  if (!is_float(preds->spec.dtype)) throw Error(kBinaryCrossEntropy, "preds must be a float tensor");
  if (shape.num_elements() == 0)
    throw Error(kBinaryCrossEntropy, fmt::format("preds of shape {} are empty", shape.to_string()));
  const std::vector<std::int64_t> host = detail::host_ints(targets);
  for (std::size_t i = 0; i < host.size(); ++i)
    if (host[i] != 0 && host[i] != 1)
      throw Error(kBinaryCrossEntropy, fmt::format("targets must be 0 or 1, got {} at flat index {}", host[i], i));

  const std::size_t rank = shape.rank();
  const std::size_t classes = rank > 1 ? shape[rank - 1] : 2;
  if (weights && weights->num_elements() != classes)
    throw Error(
        kBinaryCrossEntropy,
        rank > 1 ? fmt::format("{} weights given for {} classes (the last dim of {})", weights->num_elements(), classes,
                               shape.to_string())
                 : fmt::format("rank-1 inputs take 2 weights (for targets 0 and 1), got {}", weights->num_elements()));

  const auto float_targets = [&](const burn::detail::TensorRef& t) {
    auto f = burn::detail::cast(burn::detail::to_kind(t, TensorKind::Float), preds->spec.dtype);
    if (smoothing)
      f = burn::detail::binary_scalar(ir::BinaryOp::Add,
                                      burn::detail::binary_scalar(ir::BinaryOp::Mul, f, 1.0 - *smoothing),
                                      *smoothing / static_cast<double>(classes));
    return f;
  };

  if (rank == 1) {
    const Tensor<1> x(preds);
    const Tensor<1, Int> t(targets);
    Tensor<1> loss = elementwise_loss(x, Tensor<1>(float_targets(targets)), logits);
    // Rank 1: each element is weighted by the weight of its own target.
    if (weights) loss = loss * detail::follow(*weights, preds).select(0, t);
    return loss.mean();
  }
  // Rank > 1: view as [rows, classes] so class weights broadcast along rows.
  const Shape flat{shape.num_elements() / classes, classes};
  const Tensor<2> x(burn::detail::reshape_exact(preds, flat));
  const Tensor<2> t(float_targets(burn::detail::reshape_exact(targets, flat)));
  Tensor<2> loss = elementwise_loss(x, t, logits);
  if (weights) loss = loss * detail::follow(*weights, preds).template reshape<2>({1, -1});
  return loss.mean();
}

}  // namespace burn::nn::loss
