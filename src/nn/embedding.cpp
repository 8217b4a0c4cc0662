#include <fmt/format.h>

#include <burn/module/ops.hpp>
#include <burn/nn/embedding.hpp>

namespace burn::nn {

Embedding EmbeddingConfig::init(const TensorCreationOptions& options) const {
  if (n_embedding == 0 || d_model == 0)
    throw Error("EmbeddingConfig",
                fmt::format("n_embedding and d_model must be positive, got {} and {}", n_embedding, d_model));
  return Embedding{module::Param(initializer.init<2>(Shape{n_embedding, d_model}, options, n_embedding, d_model))};
}

Tensor<3> Embedding::forward(const Tensor<2, Int>& indices) const { return module::embedding(weight.val(), indices); }

}  // namespace burn::nn
