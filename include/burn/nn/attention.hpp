// Multi-head attention (Vaswani et al.), as Burn's MultiHeadAttention.
//
//   auto mha = burn::nn::MultiHeadAttentionConfig{512, 8}.with_dropout(0.1).init(device);
//   auto out = mha.forward(burn::nn::MhaInput::self_attention(x).mask_pad(padding));
//   out.context;   // [batch, seq_q, d_model]
//   out.weights;   // [batch, n_heads, seq_q, seq_k], softmax over seq_k
//
// Each head sees d_model / n_heads features: softmax(q k^T / sqrt(d_k)) v,
// heads concatenated and projected by `output`.
//
// Masks (true = masked out): a padding mask [batch, seq_k] hides padded keys
// from every query; an attention mask [batch, seq_q, seq_k] hides single
// query/key pairs (e.g. a causal mask). Masked scores are set to the lowest
// finite value of the dtype rather than -inf: after softmax's max
// subtraction they underflow to exact zeros in every float dtype (f16
// included), and a row whose keys are all masked gets uniform weights instead
// of NaN (Burn's behaviour; PyTorch returns NaN there).
//
// Dropout is applied to the attention weights before they weight the values
// (PyTorch's placement); MhaOutput::weights are the weights before dropout.
//
// PyTorch mapping: nn.MultiheadAttention's in_proj_weight [3 d, d] is
// [Wq; Wk; Wv] in torch's [out, in] layout, so query.weight = Wq^T,
// key.weight = Wk^T, value.weight = Wv^T, in_proj_bias = [bq; bk; bv], and
// output.weight = out_proj.weight^T.
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/dropout.hpp>
#include <burn/nn/initializer.hpp>
#include <burn/nn/linear.hpp>
#include <cstddef>
#include <optional>

namespace burn::nn {

/// The inputs of one attention call; build with self_attention() or cross().
struct MhaInput {
  Tensor<3> query;                           // [batch, seq_q, d_model]
  Tensor<3> key;                             // [batch, seq_k, d_model]
  Tensor<3> value;                           // [batch, seq_k, d_model]
  std::optional<Tensor<2, Bool>> pad_mask;   // [batch, seq_k], true = padding
  std::optional<Tensor<3, Bool>> attn_mask;  // [batch, seq_q, seq_k], true = masked out

  MhaInput(Tensor<3> q, Tensor<3> k, Tensor<3> v) : query(std::move(q)), key(std::move(k)), value(std::move(v)) {}

  /// Queries, keys and values all from `x`.
  static MhaInput self_attention(const Tensor<3>& x) { return MhaInput(x, x, x); }
  /// Queries from one sequence, keys and values from another.
  static MhaInput cross(Tensor<3> query, Tensor<3> key, Tensor<3> value) {
    return MhaInput(std::move(query), std::move(key), std::move(value));
  }
  /// Hides padded keys: mask [batch, seq_k], true where the key is padding.
  MhaInput mask_pad(Tensor<2, Bool> mask) const {
    auto c = *this;
    c.pad_mask = std::move(mask);
    return c;
  }
  /// Hides query/key pairs: mask [batch, seq_q, seq_k], true where masked out.
  MhaInput mask_attn(Tensor<3, Bool> mask) const {
    auto c = *this;
    c.attn_mask = std::move(mask);
    return c;
  }
};

struct MhaOutput {
  Tensor<3> context;  // [batch, seq_q, d_model]
  Tensor<4> weights;  // [batch, n_heads, seq_q, seq_k]
};

struct MultiHeadAttention {
  Linear query;   // [d_model, d_model]
  Linear key;     // [d_model, d_model]
  Linear value;   // [d_model, d_model]
  Linear output;  // [d_model, d_model]
  Dropout dropout;
  std::size_t n_heads = 1;
  BURN_MODULE(query, key, value, output, dropout)

  std::size_t d_model() const { return query.weight->dims()[0]; }

  /// Throws burn::Error("[MultiHeadAttention] ...") for inputs or masks of the wrong shape.
  MhaOutput forward(const MhaInput& input) const;
};

struct MultiHeadAttentionConfig {
  std::size_t d_model = 0;
  std::size_t n_heads = 0;
  double dropout = 0.1;
  /// Burn's default for the four projections (bound 1/sqrt(d_model), weights and biases).
  Initializer initializer = Initializer::kaiming_uniform();

  MultiHeadAttentionConfig with_dropout(double p) const {
    auto c = *this;
    c.dropout = p;
    return c;
  }
  MultiHeadAttentionConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }
  /// nn.MultiheadAttention(embed_dim, num_heads)'s defaults: no dropout
  /// (Burn's default is 0.1).
  static MultiHeadAttentionConfig pytorch_defaults(std::size_t d_model, std::size_t n_heads) {
    MultiHeadAttentionConfig c;
    c.d_model = d_model;
    c.n_heads = n_heads;
    return c.with_dropout(0.0);
  }
  /// Throws burn::Error("[MultiHeadAttentionConfig] ...") for zero sizes, d_model not
  /// divisible by n_heads, or dropout outside [0, 1].
  MultiHeadAttention init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
