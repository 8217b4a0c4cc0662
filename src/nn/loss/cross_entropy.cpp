#include <fmt/format.h>

#include <algorithm>
#include <burn/activation.hpp>
#include <burn/amp/autocast.hpp>
#include <burn/nn/loss/cross_entropy.hpp>
#include <cfloat>
#include <cmath>

#include "loss_checks.hpp"

namespace burn::nn::loss {

namespace {

constexpr const char* kCrossEntropy = "cross_entropy";

/// The smallest positive normal value of a float dtype.
double min_positive(DType d) {
  switch (d) {
    case DType::F64: return DBL_MIN;
    case DType::F16: return 6.103515625e-05;
    default: return FLT_MIN;  // f32, and bf16 shares f32's exponent range
  }
}

void check_logits(const Tensor<2>& logits) {
  const auto [batch, classes] = logits.dims();
  if (batch == 0 || classes == 0)
    throw Error(kCrossEntropy, fmt::format("logits of shape {} are empty; expected [batch, classes] with both positive",
                                           logits.shape().to_string()));
}

void check_weights_match(const std::optional<Tensor<1>>& weights, std::size_t classes) {
  if (weights && weights->num_elements() != classes)
    throw Error(kCrossEntropy, fmt::format("{} class weights given for {} classes", weights->num_elements(), classes));
}

}  // namespace

CrossEntropyLoss CrossEntropyLossConfig::init(const TensorCreationOptions& options) const {
  detail::check_smoothing(smoothing, "CrossEntropyLossConfig");
  detail::check_weights(weights, "CrossEntropyLossConfig");
  return CrossEntropyLoss{pad_tokens, detail::weights_tensor(weights, options), smoothing, logits};
}

Tensor<2> CrossEntropyLoss::log_probs(const Tensor<2>& input) const {
  if (logits) return activation::log_softmax(input, 1);
  return input.clamp_min(std::sqrt(min_positive(input.dtype()))).log();
}

Tensor<1> CrossEntropyLoss::forward(const Tensor<2>& logits_arg, const Tensor<1, Int>& targets) const {
  check_logits(logits_arg);
  const Tensor<2> logits_in(amp::detail::float32_input(logits_arg.ref()));  // f32 under autocast
  // Named copies: lambdas below use them (C++20 lets lambdas capture
  // structured bindings; clang 14, which the static checks use, does not).
  const auto dims = logits_in.dims();
  const std::size_t batch = dims[0], classes = dims[1];
  if (targets.num_elements() != batch)
    throw Error(kCrossEntropy,
                fmt::format("targets of shape {} do not match logits of shape {}: expected one class index per row",
                            targets.shape().to_string(), logits_in.shape().to_string()));
  check_weights_match(weights, classes);

  // Validate on the host: an index out of range would otherwise be a gather
  // error deep inside, or a silently wrong loss on backends that clamp.
  const std::vector<std::int64_t> host = detail::host_ints(targets.ref());
  std::vector<bool> is_pad(batch, false);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < batch; ++i) {
    if (pad_tokens && std::find(pad_tokens->begin(), pad_tokens->end(), host[i]) != pad_tokens->end()) {
      is_pad[i] = true;
      continue;
    }
    if (host[i] < 0 || host[i] >= static_cast<std::int64_t>(classes))
      throw Error(kCrossEntropy,
                  fmt::format("target {} at row {} is out of range for {} classes", host[i], i, classes));
    ++kept;
  }
  if (kept == 0) throw Error(kCrossEntropy, "every target is a pad token: the mean loss over no targets is undefined");

  const Tensor<2> logp = log_probs(logits_in);
  const Device& device = logp.device();
  const bool any_pad = kept < batch;
  // Pad rows get index 0 (always valid) and a row weight of zero.
  const Tensor<1, Int> safe =
      any_pad ? targets.mask_fill(Tensor<1, Bool>::from_data(TensorData(is_pad), targets.device()), 0) : targets;
  std::optional<Tensor<1>> keep;
  if (any_pad) {
    std::vector<double> k(batch);
    for (std::size_t i = 0; i < batch; ++i) k[i] = is_pad[i] ? 0.0 : 1.0;
    keep = Tensor<1>::from_data(TensorData(k), {device, logp.dtype()});
  }
  std::optional<Tensor<1>> w;
  if (weights) w = detail::follow(*weights, logp.ref());

  // Per-row loss l_i, and the row weights r_i (w[y_i] times not-pad).
  Tensor<1> row_loss = [&] {
    if (!smoothing) return -logp.gather(1, safe.reshape<2>({-1, 1})).reshape<1>({-1});
    const Tensor<2> onehot =
        Tensor<1, Int>::arange(0, static_cast<std::int64_t>(classes), {targets.device(), targets.dtype()})
            .reshape<2>({1, -1})
            .equal(safe.reshape<2>({-1, 1}).expand<2>({-1, static_cast<std::int64_t>(classes)}))
            .to_float()
            .cast(logp.dtype());
    Tensor<2> target = onehot * (1.0 - *smoothing) + *smoothing / static_cast<double>(classes);
    if (w) target = target * w->reshape<2>({1, -1});
    return -(logp * target).sum_dim(1).reshape<1>({-1});
  }();
  std::optional<Tensor<1>> row_weight = keep;
  if (w) {
    const Tensor<1> picked = w->select(0, safe);
    row_weight = keep ? picked * *keep : picked;
  }
  // Smoothing already weighs each class inside row_loss; the denominator is
  // still sum_i w[y_i] (PyTorch).
  const Tensor<1> numerator = [&] {
    if (smoothing) return keep ? (row_loss * *keep).sum() : row_loss.sum();
    return row_weight ? (row_loss * *row_weight).sum() : row_loss.sum();
  }();
  if (w) return numerator / row_weight->sum();
  return numerator / static_cast<double>(kept);
}

Tensor<1> CrossEntropyLoss::forward_probs(const Tensor<2>& logits_arg, const Tensor<2>& target_probs) const {
  check_logits(logits_arg);
  const Tensor<2> logits_in(amp::detail::float32_input(logits_arg.ref()));  // f32 under autocast
  detail::check_same_shape(logits_in.ref(), target_probs.ref(), kCrossEntropy, "logits", "target_probs");
  const auto [batch, classes] = logits_in.dims();
  check_weights_match(weights, classes);
  const Tensor<2> logp = log_probs(logits_in);
  Tensor<2> target = target_probs.dtype() == logp.dtype() ? target_probs : target_probs.cast(logp.dtype());
  if (smoothing) target = target * (1.0 - *smoothing) + *smoothing / static_cast<double>(classes);
  if (weights) target = target * detail::follow(*weights, logp.ref()).reshape<2>({1, -1});
  return -(logp * target).sum() / static_cast<double>(batch);
}

}  // namespace burn::nn::loss
