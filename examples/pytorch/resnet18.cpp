// torchvision's ResNet-18 in burn, its weights loaded as PyTorch saves them.
//
//   build/full/examples/burn-example-resnet18 [--device flex|cpu|ndarray|vulkan|all] [--image 224]
//
// torch_reference.py builds torchvision.models.resnet18 with fixed random
// weights (nothing is downloaded), runs a few batches in training mode so
// the BatchNorm statistics are not their defaults, and saves its state dict
// with torch.save. burn loads model.pt into the model below, whose field
// names are torchvision's (conv1, bn1, layer1.0.conv1, layer2.0.downsample.0,
// fc, ...), and prints how far its logits are from PyTorch's on each device.
#include <array>
#include <cstdio>
#include <optional>
#include <vector>

#include <burn/burn.hpp>
#include <burn/nn/sequential.hpp>
#include <burn/record/module_record.hpp>

#include "torch_reference.hpp"

namespace {

using namespace burn;

nn::Conv2d conv(std::size_t in, std::size_t out, std::size_t kernel, std::size_t stride, std::size_t padding,
                const Device& device) {
  return nn::Conv2dConfig{{in, out}, {kernel, kernel}}
      .with_stride({stride, stride})
      .with_padding(nn::PaddingConfig2d::explicit_(padding, padding))
      .with_bias(false)
      .init(device);
}

struct BasicBlock {
  nn::Conv2d conv1;
  nn::BatchNorm bn1;
  nn::Conv2d conv2;
  nn::BatchNorm bn2;
  /// torchvision's nn.Sequential(conv1x1, BatchNorm2d) where the block changes shape.
  std::optional<nn::Sequential<nn::Conv2d, nn::BatchNorm>> downsample;
  BURN_MODULE(conv1, bn1, conv2, bn2, downsample)

  Tensor<4> forward(const Tensor<4>& x) const {
    const auto y = bn2.forward(conv2.forward(activation::relu(bn1.forward(conv1.forward(x)))));
    return activation::relu(y + (downsample ? downsample->forward(x) : x));
  }

  static BasicBlock init(std::size_t in, std::size_t out, std::size_t stride, const Device& device) {
    BasicBlock b{conv(in, out, 3, stride, 1, device), nn::BatchNormConfig{out}.init(device),
                 conv(out, out, 3, 1, 1, device), nn::BatchNormConfig{out}.init(device), std::nullopt};
    if (stride != 1 || in != out)
      b.downsample = nn::sequential(conv(in, out, 1, stride, 0, device), nn::BatchNormConfig{out}.init(device));
    return b;
  }
};

struct ResNet18 {
  nn::Conv2d conv1;
  nn::BatchNorm bn1;
  nn::MaxPool2d maxpool;
  std::vector<BasicBlock> layer1, layer2, layer3, layer4;
  nn::AdaptiveAvgPool2d avgpool;
  nn::Linear fc;
  BURN_MODULE(conv1, bn1, maxpool, layer1, layer2, layer3, layer4, avgpool, fc)

  Tensor<2> forward(const Tensor<4>& images) const {
    auto x = maxpool.forward(activation::relu(bn1.forward(conv1.forward(images))));
    for (const auto* layer : {&layer1, &layer2, &layer3, &layer4})
      for (const BasicBlock& block : *layer) x = block.forward(x);
    return fc.forward(avgpool.forward(x).flatten<2>(1, 3));
  }

  static ResNet18 init(std::size_t classes, const Device& device) {
    ResNet18 m{conv(3, 64, 7, 2, 3, device),
               nn::BatchNormConfig{64}.init(device),
               nn::MaxPool2dConfig::pytorch_defaults({3, 3})
                   .with_strides({2, 2})
                   .with_padding(nn::PaddingConfig2d::explicit_(1, 1))
                   .init(),
               {},
               {},
               {},
               {},
               nn::AdaptiveAvgPool2dConfig{{1, 1}}.init(),
               nn::LinearConfig{512, classes}.init(device)};
    std::size_t in = 64;
    for (auto [layer, width] : std::array<std::pair<std::vector<BasicBlock>*, std::size_t>, 4>{
             {{&m.layer1, 64}, {&m.layer2, 128}, {&m.layer3, 256}, {&m.layer4, 512}}}) {
      layer->push_back(BasicBlock::init(in, width, width == 64 ? 1 : 2, device));
      layer->push_back(BasicBlock::init(width, width, 1, device));
      in = width;
    }
    return m;
  }
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto options = example::parse_options(argc, argv, "[--device NAME|all] [--image PIXELS]");
    const example::Reference torch("resnet18", std::to_string(options.image));
    bool ok = true;
    for (const Device& device : options.devices) {
      const auto input = Tensor<4>::from_data(torch.input(), device);
      const auto model = record::load_module(ResNet18::init(1000, device), torch.weights());
      const auto logits = model.forward(input).to_data();
      ok = example::compare(device, logits, torch.output()) && ok;
      const auto from_safetensors = record::load_module(ResNet18::init(1000, device), torch.safetensors_weights());
      ok = example::same_logits(from_safetensors.forward(input).to_data(), logits) && ok;
    }
    return ok ? 0 : 1;
  } catch (const burn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
