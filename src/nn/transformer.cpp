#include <fmt/format.h>

#include <burn/activation.hpp>
#include <burn/nn/transformer.hpp>

namespace burn::nn {

Tensor<3> PositionWiseFeedForward::forward(const Tensor<3>& x) const {
  const Tensor<3> inner = linear_inner.forward(x);
  return linear_outer.forward(dropout.forward(activation.forward(inner)));
}

Tensor<3> TransformerEncoderLayer::forward(const Tensor<3>& x, const std::optional<Tensor<2, Bool>>& pad_mask,
                                           const std::optional<Tensor<3, Bool>>& attn_mask) const {
  auto attend = [&](const Tensor<3>& in) {
    MhaInput mha_input = MhaInput::self_attention(in);
    mha_input.pad_mask = pad_mask;
    mha_input.attn_mask = attn_mask;
    return dropout.forward(mha.forward(mha_input).context);
  };
  if (norm_first) {
    const Tensor<3> y = x + attend(norm_1.forward(x));
    return y + dropout.forward(pwff.forward(norm_2.forward(y)));
  }
  const Tensor<3> y = norm_1.forward(x + attend(x));
  return norm_2.forward(y + dropout.forward(pwff.forward(y)));
}

Tensor<3> TransformerEncoder::forward(const TransformerEncoderInput& input) const {
  if (!layers.empty()) {
    const std::size_t d_model = layers.front().mha.d_model();
    if (input.tensor.dims()[2] != d_model)
      throw Error("TransformerEncoder", fmt::format("the input has shape {}; expected [batch, seq, d_model] with "
                                                    "d_model = {}",
                                                    input.tensor.shape().to_string(), d_model));
  }
  Tensor<3> x = input.tensor;
  for (const auto& layer : layers) x = layer.forward(x, input.pad_mask, input.attn_mask);
  return x;
}

TransformerEncoder TransformerEncoderConfig::init(const TensorCreationOptions& options) const {
  constexpr const char* op = "TransformerEncoderConfig";
  if (d_model == 0 || d_ff == 0 || n_heads == 0 || n_layers == 0)
    throw Error(op, fmt::format("d_model, d_ff, n_heads and n_layers must be positive, got {}, {}, {} and {}", d_model,
                                d_ff, n_heads, n_layers));
  if (d_model % n_heads != 0)
    throw Error(op, fmt::format("d_model {} is not divisible by n_heads {}", d_model, n_heads));
  if (!(dropout >= 0.0 && dropout <= 1.0)) throw Error(op, fmt::format("dropout must be in [0, 1], got {}", dropout));
  if (!(layer_norm_eps > 0.0)) throw Error(op, fmt::format("layer_norm_eps must be positive, got {}", layer_norm_eps));

  const auto attention = MultiHeadAttentionConfig{d_model, n_heads, dropout, initializer};
  const auto norm = LayerNormConfig{d_model, layer_norm_eps};
  const auto drop = DropoutConfig{dropout};
  TransformerEncoder encoder;
  encoder.layers.reserve(n_layers);
  for (std::size_t i = 0; i < n_layers; ++i) {
    PositionWiseFeedForward pwff{LinearConfig{d_model, d_ff}.with_initializer(initializer).init(options),
                                 LinearConfig{d_ff, d_model}.with_initializer(initializer).init(options), drop.init(),
                                 activation};
    encoder.layers.push_back(TransformerEncoderLayer{attention.init(options), std::move(pwff), norm.init(options),
                                                     norm.init(options), drop.init(), norm_first});
  }
  return encoder;
}

}  // namespace burn::nn
