#include <fmt/format.h>

#include <burn/activation.hpp>
#include <burn/nn/attention.hpp>
#include <cmath>
#include <limits>

namespace burn::nn {

namespace {

constexpr const char* kAttentionOp = "MultiHeadAttention";

/// The most negative finite value of a float dtype: masked scores become it, so
/// exp(score - row max) underflows to exactly 0 whenever the row has an unmasked key.
double lowest_finite(DType dtype) {
  switch (dtype) {
    case DType::F64: return std::numeric_limits<double>::lowest();
    case DType::F16: return -65504.0;
    case DType::BF16: return -3.3895313892515355e38;  // bits 0xff7f
    default: return static_cast<double>(std::numeric_limits<float>::lowest());
  }
}

/// [batch, seq, d_model] -> [batch, n_heads, seq, d_k].
Tensor<4> split_heads(const Tensor<3>& x, std::size_t n_heads) {
  const auto [batch, seq, d_model] = x.dims();
  return x.reshape(std::array<std::size_t, 4>{batch, seq, n_heads, d_model / n_heads}).swap_dims(1, 2);
}

void check_input(const Tensor<3>& t, const char* name, std::size_t d_model) {
  if (t.dims()[2] != d_model)
    throw Error(kAttentionOp, fmt::format("the {} has {} features in its last dim, but the layer's d_model is {}; pass "
                                          "[batch, seq, {}]",
                                          name, t.dims()[2], d_model, d_model));
}

}  // namespace

MhaOutput MultiHeadAttention::forward(const MhaInput& input) const {
  const std::size_t d = d_model();
  // A hand-assembled module (not from the config) may carry an impossible head count.
  if (n_heads == 0 || d % n_heads != 0)
    throw Error(kAttentionOp, fmt::format("d_model {} is not divisible by n_heads {}", d, n_heads));
  check_input(input.query, "query", d);
  check_input(input.key, "key", d);
  check_input(input.value, "value", d);
  const std::size_t batch = input.query.dims()[0], seq_q = input.query.dims()[1];
  const std::size_t batch_k = input.key.dims()[0], seq_k = input.key.dims()[1];
  if (batch_k != batch || input.value.dims()[0] != batch)
    throw Error(kAttentionOp, fmt::format("query, key and value have batch sizes {}, {} and {}; they must be equal",
                                          batch, batch_k, input.value.dims()[0]));
  if (input.value.dims()[1] != seq_k)
    throw Error(kAttentionOp, fmt::format("key and value have sequence lengths {} and {}; they must be equal", seq_k,
                                          input.value.dims()[1]));
  if (input.pad_mask && input.pad_mask->shape() != Shape{batch, seq_k})
    throw Error(kAttentionOp, fmt::format("the padding mask has shape {}; expected [batch, seq_k] = [{}, {}]",
                                          input.pad_mask->shape().to_string(), batch, seq_k));
  if (input.attn_mask && input.attn_mask->shape() != Shape{batch, seq_q, seq_k})
    throw Error(kAttentionOp,
                fmt::format("the attention mask has shape {}; expected [batch, seq_q, seq_k] = [{}, {}, {}]",
                            input.attn_mask->shape().to_string(), batch, seq_q, seq_k));

  const Tensor<4> q = split_heads(query.forward(input.query), n_heads);
  const Tensor<4> k = split_heads(key.forward(input.key), n_heads);
  const Tensor<4> v = split_heads(value.forward(input.value), n_heads);

  const std::size_t head_dim = d / n_heads;  // d divides evenly (checked by the config)
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  Tensor<4> scores = q.matmul(k.transpose()) * scale;  // [batch, n_heads, seq_q, seq_k]
  const double masked = lowest_finite(scores.dtype());
  // Masks broadcast over heads (and over queries for padding).
  if (input.pad_mask)
    scores = scores.mask_fill(input.pad_mask->reshape(std::array<std::size_t, 4>{batch, 1, 1, seq_k}), masked);
  if (input.attn_mask)
    scores = scores.mask_fill(input.attn_mask->reshape(std::array<std::size_t, 4>{batch, 1, seq_q, seq_k}), masked);

  Tensor<4> weights = activation::softmax(scores, 3);
  const Tensor<4> context = dropout.forward(weights).matmul(v);  // [batch, n_heads, seq_q, d_k]
  const Tensor<3> merged = context.swap_dims(1, 2).reshape(std::array<std::size_t, 3>{batch, seq_q, d});
  return MhaOutput{output.forward(merged), std::move(weights)};
}

MultiHeadAttention MultiHeadAttentionConfig::init(const TensorCreationOptions& options) const {
  constexpr const char* op = "MultiHeadAttentionConfig";
  if (d_model == 0 || n_heads == 0)
    throw Error(op, fmt::format("d_model and n_heads must be positive, got {} and {}", d_model, n_heads));
  if (d_model % n_heads != 0)
    throw Error(op, fmt::format("d_model {} is not divisible by n_heads {}; each head needs d_model / n_heads "
                                "features",
                                d_model, n_heads));
  if (!(dropout >= 0.0 && dropout <= 1.0)) throw Error(op, fmt::format("dropout must be in [0, 1], got {}", dropout));
  const LinearConfig projection = LinearConfig{d_model, d_model}.with_initializer(initializer);
  return MultiHeadAttention{projection.init(options), projection.init(options),      projection.init(options),
                            projection.init(options), DropoutConfig{dropout}.init(), n_heads};
}

}  // namespace burn::nn
