// Transformer encoder: a stack of self-attention + feed-forward layers.
//
//   auto encoder = burn::nn::TransformerEncoderConfig{512, 2048, 8, 6}.with_norm_first(true).init(device);
//   burn::Tensor<3> y = encoder.forward(burn::nn::TransformerEncoderInput{x}.mask_pad(padding));
//
// One layer, as PyTorch's nn.TransformerEncoderLayer (batch_first=True):
//   post-norm (default): x = norm_1(x + dropout(mha(x)));  x = norm_2(x + dropout(pwff(x)))
//   norm_first:          x = x + dropout(mha(norm_1(x)));  x = x + dropout(pwff(norm_2(x)))
// with pwff(x) = linear_outer(dropout(activation(linear_inner(x)))). norm_1
// belongs to the attention block and norm_2 to the feed-forward block (torch's
// norm1/norm2). There is no final norm after the stack (Burn's encoder; torch's
// `norm` argument is None by default).
//
// The activation is Burn's default, gelu (exact erf form); PyTorch's default
// is relu, available as Activation::relu().
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/activation.hpp>
#include <burn/nn/attention.hpp>
#include <burn/nn/dropout.hpp>
#include <burn/nn/initializer.hpp>
#include <burn/nn/layer_norm.hpp>
#include <burn/nn/linear.hpp>
#include <cstddef>
#include <optional>
#include <vector>

namespace burn::nn {

/// linear_outer(dropout(activation(linear_inner(x)))): d_model -> d_ff -> d_model.
struct PositionWiseFeedForward {
  Linear linear_inner;  // [d_model, d_ff]
  Linear linear_outer;  // [d_ff, d_model]
  Dropout dropout;
  Activation activation = Activation::gelu();
  BURN_MODULE(linear_inner, linear_outer, dropout)

  Tensor<3> forward(const Tensor<3>& x) const;
};

/// The encoder's input: the sequence and optional masks (see MhaInput).
struct TransformerEncoderInput {
  Tensor<3> tensor;                          // [batch, seq, d_model]
  std::optional<Tensor<2, Bool>> pad_mask;   // [batch, seq], true = padding
  std::optional<Tensor<3, Bool>> attn_mask;  // [batch, seq, seq], true = masked out

  explicit TransformerEncoderInput(Tensor<3> x) : tensor(std::move(x)) {}
  TransformerEncoderInput mask_pad(Tensor<2, Bool> mask) const {
    auto c = *this;
    c.pad_mask = std::move(mask);
    return c;
  }
  TransformerEncoderInput mask_attn(Tensor<3, Bool> mask) const {
    auto c = *this;
    c.attn_mask = std::move(mask);
    return c;
  }
};

struct TransformerEncoderLayer {
  MultiHeadAttention mha;
  PositionWiseFeedForward pwff;
  LayerNorm norm_1;  // the attention block's
  LayerNorm norm_2;  // the feed-forward block's
  Dropout dropout;   // on each block's output, before the residual sum
  bool norm_first = false;
  BURN_MODULE(mha, pwff, norm_1, norm_2, dropout)

  /// x [batch, seq, d_model] -> [batch, seq, d_model]; masks as in MhaInput.
  Tensor<3> forward(const Tensor<3>& x, const std::optional<Tensor<2, Bool>>& pad_mask = std::nullopt,
                    const std::optional<Tensor<3, Bool>>& attn_mask = std::nullopt) const;
};

struct TransformerEncoder {
  std::vector<TransformerEncoderLayer> layers;
  BURN_MODULE(layers)

  /// [batch, seq, d_model] -> [batch, seq, d_model]. Throws burn::Error("[TransformerEncoder] ...")
  /// when the input's last dim is not d_model, "[MultiHeadAttention] ..." for masks of the wrong shape.
  Tensor<3> forward(const TransformerEncoderInput& input) const;
};

struct TransformerEncoderConfig {
  std::size_t d_model = 0;
  std::size_t d_ff = 0;
  std::size_t n_heads = 0;
  std::size_t n_layers = 0;
  double dropout = 0.1;
  bool norm_first = false;
  Activation activation = Activation::gelu();
  double layer_norm_eps = 1e-5;
  /// For every Linear (attention projections and feed-forward); Burn's default.
  Initializer initializer = Initializer::kaiming_uniform();

  TransformerEncoderConfig with_dropout(double p) const {
    auto c = *this;
    c.dropout = p;
    return c;
  }
  TransformerEncoderConfig with_norm_first(bool b) const {
    auto c = *this;
    c.norm_first = b;
    return c;
  }
  TransformerEncoderConfig with_activation(Activation a) const {
    auto c = *this;
    c.activation = a;
    return c;
  }
  TransformerEncoderConfig with_layer_norm_eps(double e) const {
    auto c = *this;
    c.layer_norm_eps = e;
    return c;
  }
  TransformerEncoderConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }
  /// nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, nhead,
  /// dim_feedforward), num_layers)'s defaults: relu activation (Burn's is
  /// gelu), dropout 0.1, epsilon 1e-5, post-norm. Initial weights still
  /// follow `initializer` (see docs/pytorch.md); loaded weights replace them.
  static TransformerEncoderConfig pytorch_defaults(std::size_t d_model, std::size_t n_heads, std::size_t n_layers,
                                                   std::size_t d_ff = 2048) {
    TransformerEncoderConfig c;
    c.d_model = d_model;
    c.d_ff = d_ff;
    c.n_heads = n_heads;
    c.n_layers = n_layers;
    return c.with_activation(Activation::relu());
  }
  /// Throws burn::Error("[TransformerEncoderConfig] ...") for zero sizes, d_model not
  /// divisible by n_heads, dropout outside [0, 1] or a non-positive epsilon.
  TransformerEncoder init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
