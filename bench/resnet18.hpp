// The ResNet-18 training step the CUDA benchmark times: torchvision's
// ResNet-18 (basic blocks [2, 2, 2, 2], widths 64-512, 1000 classes) built
// from burn's layers, one step of cross-entropy as -mean(gather(
// log_softmax(logits, 1), labels)), backward, and SGD with momentum 0.9
// (dampening 0, as PyTorch's) at lr 0.01. cuda_compare.py builds the same
// network in PyTorch.
#pragma once

#include <burn/activation.hpp>
#include <burn/burn.hpp>
#include <burn/module/module.hpp>
#include <burn/nn/batch_norm.hpp>
#include <burn/nn/conv2d.hpp>
#include <burn/nn/linear.hpp>
#include <burn/nn/pool.hpp>
#include <burn/optim/sgd.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace burn_bench {

struct ResNetShape {
  std::size_t batch = 32, image = 224, classes = 1000;
};
/// Small enough for a CPU: trying the harness without a GPU.
inline constexpr ResNetShape kSmallResNet{2, 64, 10};

struct BasicBlock {
  burn::nn::Conv2d conv1;
  burn::nn::BatchNorm bn1;
  burn::nn::Conv2d conv2;
  burn::nn::BatchNorm bn2;
  /// A 1x1 convolution and batch norm where the block changes shape.
  std::optional<burn::nn::Conv2d> down_conv;
  std::optional<burn::nn::BatchNorm> down_bn;
  BURN_MODULE(conv1, bn1, conv2, bn2, down_conv, down_bn)

  burn::Tensor<4> forward(const burn::Tensor<4>& x) const {
    using burn::activation::relu;
    auto y = bn2.forward(conv2.forward(relu(bn1.forward(conv1.forward(x)))));
    const auto shortcut = down_conv ? down_bn->forward(down_conv->forward(x)) : x;
    return relu(y + shortcut);
  }
};

struct ResNet18 {
  burn::nn::Conv2d stem;
  burn::nn::BatchNorm stem_bn;
  burn::nn::MaxPool2d pool;
  std::vector<BasicBlock> blocks;
  burn::nn::AdaptiveAvgPool2d head_pool;
  burn::nn::Linear fc;
  BURN_MODULE(stem, stem_bn, pool, blocks, head_pool, fc)

  burn::Tensor<2> forward(const burn::Tensor<4>& images) const {
    auto x = pool.forward(burn::activation::relu(stem_bn.forward(stem.forward(images))));
    for (const BasicBlock& b : blocks) x = b.forward(x);
    x = head_pool.forward(x);
    const auto [n, c, h, w] = x.dims();
    return fc.forward(x.reshape(std::array<std::size_t, 2>{n, c * h * w}));
  }

  static ResNet18 init(std::size_t classes, const burn::TensorCreationOptions& options) {
    using namespace burn::nn;
    const auto conv = [&](std::size_t in, std::size_t out, std::size_t kernel, std::size_t stride,
                          std::size_t padding) {
      return Conv2dConfig{{in, out}, {kernel, kernel}}
          .with_stride({stride, stride})
          .with_padding(PaddingConfig2d::explicit_(padding, padding))
          .with_bias(false)
          .init(options);
    };
    const auto bn = [&](std::size_t c) { return BatchNormConfig{c}.init(options); };
    ResNet18 m{conv(3, 64, 7, 2, 3),
               bn(64),
               MaxPool2dConfig{{3, 3}}.with_strides({2, 2}).with_padding(PaddingConfig2d::explicit_(1, 1)).init(),
               {},
               AdaptiveAvgPool2dConfig{{1, 1}}.init(),
               LinearConfig{512, classes}.init(options)};
    std::size_t in = 64;
    for (const std::size_t width : {64, 128, 256, 512}) {
      for (int b = 0; b < 2; ++b) {
        const std::size_t stride = (b == 0 && width != 64) ? 2 : 1;
        BasicBlock block{conv(in, width, 3, stride, 1), bn(width), conv(width, width, 3, 1, 1), bn(width), {}, {}};
        if (stride != 1 || in != width) {
          block.down_conv = conv(in, width, 1, stride, 0);
          block.down_bn = bn(width);
        }
        m.blocks.push_back(std::move(block));
        in = width;
      }
    }
    return m;
  }
};

/// Floating-point operations of one training step: the forward's 1.82 G
/// multiply-adds per 224x224 image (scaling with the pixel count), two
/// operations each, and the backward twice the forward.
inline double resnet18_train_flop(const ResNetShape& s) {
  const double pixels = static_cast<double>(s.image * s.image) / (224.0 * 224.0);
  return 3.0 * 2.0 * 1.82e9 * pixels * static_cast<double>(s.batch);
}

class ResNetStep {
 public:
  /// Parameters and inputs are drawn on `device` (seed it first), which
  /// gets autodiff.
  explicit ResNetStep(const burn::Device& device, ResNetShape shape = {}) : device_(device.autodiff()), shape_(shape) {
    device_.sync();
  }

  /// One step, ending with a sync so queued work is counted.
  void step() {
    auto logits = model_.forward(images_);
    auto loss = burn::activation::log_softmax(logits, 1).gather(1, labels_).mean().neg();
    auto grads = loss.backward();
    model_ = optimizer_.step(0.01, std::move(model_), burn::optim::GradientsParams::from_grads(grads, model_));
    device_.sync();
  }

 private:
  burn::Tensor<2, burn::Int> labels() const {
    std::vector<std::int64_t> v(shape_.batch);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>((i * 7) % shape_.classes);
    return burn::Tensor<2, burn::Int>::from_data(burn::TensorData(v, {shape_.batch, 1}), device_);
  }

  // Declaration order is draw order: the same values on every device.
  burn::Device device_;
  ResNetShape shape_;
  ResNet18 model_ = ResNet18::init(shape_.classes, burn::TensorCreationOptions(device_));
  burn::optim::Optimizer optimizer_ =
      burn::optim::SgdConfig{}.with_momentum(burn::optim::MomentumConfig{0.9, 0.0, false}).init();
  burn::Tensor<4> images_ = burn::Tensor<4>::random({shape_.batch, 3, shape_.image, shape_.image},
                                                    burn::Distribution::normal(0.0, 1.0), device_)
                                .detach();
  burn::Tensor<2, burn::Int> labels_ = labels();
};

}  // namespace burn_bench
