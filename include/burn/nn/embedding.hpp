// Embedding: a lookup table of n_embedding vectors of size d_model
// (Burn's Embedding; PyTorch's nn.Embedding, same weight layout).
//
//   auto emb = burn::nn::EmbeddingConfig{10000, 512}.init(device);
//   burn::Tensor<3> y = emb.forward(tokens);   // tokens [batch, seq] (Int) -> [batch, seq, 512]
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>

namespace burn::nn {

struct Embedding {
  module::Param<Tensor<2>> weight;  // [n_embedding, d_model]
  BURN_MODULE(weight)

  /// indices [batch, seq] -> [batch, seq, d_model]; the gradient reaches only
  /// the looked-up rows (summed over repeats). An index outside
  /// [0, n_embedding) is a burn::Error.
  Tensor<3> forward(const Tensor<2, Int>& indices) const;
};

struct EmbeddingConfig {
  std::size_t n_embedding = 0;
  std::size_t d_model = 0;
  /// Burn's and PyTorch's default: standard normal.
  Initializer initializer = Initializer::normal(0.0, 1.0);
  EmbeddingConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }
  /// Throws burn::Error("[EmbeddingConfig] ...") for a zero size.
  Embedding init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
