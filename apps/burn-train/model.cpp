#include "model.hpp"

#include <fmt/format.h>

#include <array>
#include <burn/activation.hpp>

namespace burn_train {

burn::Tensor<2> Model::forward(const burn::Tensor<4>& images) const {
  using burn::activation::relu;
  // On Device::cpu() each convolution takes the batch norm and relu after
  // it as post-ops; the pools queue behind them (docs/fusion.md, Planning).
  auto x = pool.forward(relu(bn1.forward(conv1.forward(images))));
  x = pool.forward(relu(bn2.forward(conv2.forward(x))));
  const auto [batch, c, h, w] = x.dims();
  auto flat = x.reshape(std::array<std::size_t, 2>{batch, c * h * w});
  return fc2.forward(dropout.forward(relu(fc1.forward(flat))));
}

Model ModelConfig::init(const burn::TensorCreationOptions& options) const {
  using namespace burn::nn;
  if (channels == 0 || conv1_channels == 0 || conv2_channels == 0 || hidden == 0 || num_classes == 0)
    throw burn::Error("ModelConfig", fmt::format("every size must be positive, got channels {}, conv1 {}, conv2 {}, "
                                                 "hidden {}, classes {}",
                                                 channels, conv1_channels, conv2_channels, hidden, num_classes));
  if (height < 4 || width < 4)
    throw burn::Error(
        "ModelConfig",
        fmt::format("images of {}x{} are too small for two 2x2 max-pools; they need at least 4x4", height, width));
  const auto conv = [&](std::size_t in, std::size_t out) {
    return Conv2dConfig{{in, out}, {3, 3}}.with_padding(PaddingConfig2d::same()).with_bias(false).init(options);
  };
  const std::size_t flat = conv2_channels * (height / 2 / 2) * (width / 2 / 2);
  return Model{
      .conv1 = conv(channels, conv1_channels),
      .bn1 = BatchNormConfig{conv1_channels}.init(options),
      .conv2 = conv(conv1_channels, conv2_channels),
      .bn2 = BatchNormConfig{conv2_channels}.init(options),
      .pool = MaxPool2dConfig{{2, 2}}.with_strides({2, 2}).init(),
      .fc1 = LinearConfig{flat, hidden}.init(options),
      .dropout = DropoutConfig{dropout}.init(),
      .fc2 = LinearConfig{hidden, num_classes}.init(options),
  };
}

std::size_t ModelConfig::forward_bytes_per_image() const {
  const std::size_t full = height * width, half = (height / 2) * (width / 2), quarter = (height / 4) * (width / 4);
  const std::size_t floats = channels * full              // the input
                             + 3 * conv1_channels * full  // conv, batch norm, relu
                             + conv1_channels * half      // pool
                             + 3 * conv2_channels * half  // conv, batch norm, relu
                             + conv2_channels * quarter   // pool (flattened)
                             + 3 * hidden + num_classes;  // fc1, relu, dropout; fc2
  return floats * sizeof(float);
}

std::map<std::string, std::string> ModelConfig::to_map() const {
  return {
      {"model.channels", std::to_string(channels)},
      {"model.height", std::to_string(height)},
      {"model.width", std::to_string(width)},
      {"model.conv1_channels", std::to_string(conv1_channels)},
      {"model.conv2_channels", std::to_string(conv2_channels)},
      {"model.hidden", std::to_string(hidden)},
      {"model.num_classes", std::to_string(num_classes)},
      {"model.dropout", fmt::format("{}", dropout)},
  };
}

}  // namespace burn_train
