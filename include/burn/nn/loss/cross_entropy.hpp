// Cross-entropy between class scores and targets, PyTorch's semantics.
//
//   auto ce = burn::nn::loss::CrossEntropyLossConfig{}.with_smoothing(0.1).init(device);
//   burn::Tensor<1> loss = ce.forward(logits, targets);        // logits [batch, classes], targets [batch] indices
//   burn::Tensor<1> soft = ce.forward_probs(logits, probs);    // probs [batch, classes]
//
// Logits go through a fused log_softmax, so large scores never overflow.
// With class indices the mean is weighted: sum_i w[y_i] l_i / sum_i w[y_i]
// over the targets that are not pad tokens (PyTorch's ignore_index; Burn
// divides by the whole batch instead, which shrinks the loss of padded
// batches). Label smoothing replaces the one-hot target with
// onehot (1 - alpha) + alpha / classes.
#pragma once

#include <burn/nn/loss/reduction.hpp>
#include <cstdint>
#include <optional>
#include <vector>

namespace burn::nn::loss {

struct CrossEntropyLoss {
  std::optional<std::vector<std::int64_t>> pad_tokens;
  std::optional<Tensor<1>> weights;
  std::optional<double> smoothing;
  bool logits = true;

  /// logits [batch, classes], targets [batch] class indices -> mean loss, shape [1].
  /// Throws "[cross_entropy] ..." for mismatched shapes, a target outside
  /// [0, classes) that is not a pad token, or a batch with nothing but pad tokens.
  Tensor<1> forward(const Tensor<2>& logits, const Tensor<1, Int>& targets) const;
  /// logits [batch, classes], target probabilities [batch, classes] -> the
  /// mean over the batch of -sum_c w_c p_c log q_c (pad tokens do not apply).
  Tensor<1> forward_probs(const Tensor<2>& logits, const Tensor<2>& target_probs) const;

 private:
  Tensor<2> log_probs(const Tensor<2>& input) const;
};

struct CrossEntropyLossConfig {
  /// Target values whose rows are left out of the loss (e.g. {-100} or a padding index).
  std::optional<std::vector<std::int64_t>> pad_tokens;
  /// One positive weight per class.
  std::optional<std::vector<double>> weights;
  /// Label smoothing alpha in [0, 1].
  std::optional<double> smoothing;
  /// Whether the input holds raw scores (true) or probabilities (false; their
  /// log is taken after clamping at sqrt of the dtype's smallest normal, as Burn).
  bool logits = true;

  CrossEntropyLossConfig with_pad_tokens(std::optional<std::vector<std::int64_t>> p) const {
    auto c = *this;
    c.pad_tokens = std::move(p);
    return c;
  }
  CrossEntropyLossConfig with_weights(std::optional<std::vector<double>> w) const {
    auto c = *this;
    c.weights = std::move(w);
    return c;
  }
  CrossEntropyLossConfig with_smoothing(std::optional<double> s) const {
    auto c = *this;
    c.smoothing = s;
    return c;
  }
  CrossEntropyLossConfig with_logits(bool l) const {
    auto c = *this;
    c.logits = l;
    return c;
  }
  /// Creates the weights on `options`; throws burn::Error("[CrossEntropyLossConfig] ...")
  /// for smoothing outside [0, 1] or weights that are not positive and finite.
  CrossEntropyLoss init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn::loss
