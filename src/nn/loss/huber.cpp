#include <fmt/format.h>

#include <burn/nn/loss/huber.hpp>
#include <cmath>

namespace burn::nn::loss {

HuberLoss HuberLossConfig::init() const {
  // PyTorch rejects delta <= 0 too: with delta 0 every residual is "outside"
  // and the loss is identically zero.
  if (!(delta > 0.0) || !std::isfinite(delta))
    throw Error("HuberLossConfig", fmt::format("delta must be positive and finite, got {}", delta));
  return HuberLoss{delta};
}

}  // namespace burn::nn::loss
