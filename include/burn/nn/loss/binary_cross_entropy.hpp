// Binary cross-entropy over independent 0/1 targets.
//
//   auto bce = burn::nn::loss::BinaryCrossEntropyLossConfig{}.with_logits(true).init(device);
//   burn::Tensor<1> loss = bce.forward(logits, targets);   // targets: Tensor<D, Int> of 0 and 1
//
// With logits the loss is computed as (1 - t) x - log_sigmoid(x), which never
// overflows. Without, preds are probabilities and each log is clamped at -100
// (as PyTorch and Burn do) so a prediction of exactly 0 or 1 stays finite.
#pragma once

#include <burn/nn/loss/reduction.hpp>
#include <optional>
#include <vector>

namespace burn::nn::loss {

struct BinaryCrossEntropyLoss {
  /// Rank > 1: one weight per class (the last dim). Rank 1: the weights of
  /// target 0 and target 1.
  std::optional<Tensor<1>> weights;
  std::optional<double> smoothing;
  bool logits = false;

  /// Mean loss over every element as shape [1]. Targets must be 0 or 1 and
  /// have the preds' shape; throws "[binary_cross_entropy] ..." otherwise.
  template <std::size_t D>
  Tensor<1> forward(const Tensor<D>& preds, const Tensor<D, Int>& targets) const {
    detail::check_same_shape(preds.ref(), targets.ref(), "binary_cross_entropy", "preds", "targets");
    return forward_impl(preds.ref(), targets.ref());
  }

 private:
  Tensor<1> forward_impl(const burn::detail::TensorRef& preds, const burn::detail::TensorRef& targets) const;
};

struct BinaryCrossEntropyLossConfig {
  std::optional<std::vector<double>> weights;
  /// Label smoothing alpha in [0, 1]: t -> t (1 - alpha) + alpha / classes
  /// (classes = the last dim, or 2 for rank-1 inputs), as Burn.
  std::optional<double> smoothing;
  /// Burn's default: preds are probabilities. Set true for raw scores.
  bool logits = false;

  BinaryCrossEntropyLossConfig with_weights(std::optional<std::vector<double>> w) const {
    auto c = *this;
    c.weights = std::move(w);
    return c;
  }
  BinaryCrossEntropyLossConfig with_smoothing(std::optional<double> s) const {
    auto c = *this;
    c.smoothing = s;
    return c;
  }
  BinaryCrossEntropyLossConfig with_logits(bool l) const {
    auto c = *this;
    c.logits = l;
    return c;
  }
  /// Creates the weights on `options`; throws burn::Error("[BinaryCrossEntropyLossConfig] ...")
  /// for smoothing outside [0, 1] or weights that are not positive and finite.
  BinaryCrossEntropyLoss init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn::loss
