// burn-train's default model: a small CNN for 28x28 grey images.
//
//   conv 3x3 in->32 (same padding, no bias) - batch-norm - relu - max-pool 2x2
//   conv 3x3 32->64 (same padding, no bias) - batch-norm - relu - max-pool 2x2
//   flatten (64*7*7) - linear 3136->128 - relu - dropout 0.25 - linear 128->10
//
// The convolutions have no bias because the batch-norm right after them
// subtracts the channel mean, which would cancel it. bench/fashion_mnist_torch.py
// builds the same network in PyTorch for the side-by-side timing.
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/batch_norm.hpp>
#include <burn/nn/conv2d.hpp>
#include <burn/nn/dropout.hpp>
#include <burn/nn/linear.hpp>
#include <burn/nn/pool.hpp>
#include <cstddef>
#include <map>
#include <string>

namespace burn_train {

struct Model {
  burn::nn::Conv2d conv1;
  burn::nn::BatchNorm bn1;
  burn::nn::Conv2d conv2;
  burn::nn::BatchNorm bn2;
  burn::nn::MaxPool2d pool;
  burn::nn::Linear fc1;
  burn::nn::Dropout dropout;
  burn::nn::Linear fc2;
  BURN_MODULE(conv1, bn1, conv2, bn2, pool, fc1, dropout, fc2)

  /// images [batch, channels, 28, 28] -> logits [batch, num_classes].
  burn::Tensor<2> forward(const burn::Tensor<4>& images) const;
};

struct ModelConfig {
  std::size_t channels = 1;  ///< input channels (1 for MNIST-format grey images)
  std::size_t height = 28;
  std::size_t width = 28;
  std::size_t conv1_channels = 32;
  std::size_t conv2_channels = 64;
  std::size_t hidden = 128;
  std::size_t num_classes = 10;
  double dropout = 0.25;

  ModelConfig with_hidden(std::size_t h) const {
    auto c = *this;
    c.hidden = h;
    return c;
  }
  ModelConfig with_dropout(double p) const {
    auto c = *this;
    c.dropout = p;
    return c;
  }
  /// About how many bytes one image's activations take in a forward pass
  /// (f32, every layer's output): what a batch costs beyond the weights.
  std::size_t forward_bytes_per_image() const;
  /// Throws burn::Error("[ModelConfig] ...") for zero sizes or images smaller
  /// than the two 2x2 pools need (4x4).
  Model init(const burn::TensorCreationOptions& options) const;

  /// The fields as strings, stored with checkpoints so --resume can refuse a
  /// checkpoint of a different model with a clear message.
  std::map<std::string, std::string> to_map() const;
};

}  // namespace burn_train
