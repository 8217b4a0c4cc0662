// A small program on Device::cpu() (the fusion device) for the ctest
// op_profile_on_fusion_device, which runs it with BURN_PROFILE_OPS=1: the
// table printed at exit must show the fused group and the convolution as
// the queue ran them (a profile that synced after every op would show the
// program unfused, with no fused group).
#include <burn/burn.hpp>
#include <burn/module/ops.hpp>

#include <iostream>

int main() {
  using burn::Tensor;
  try {
    const burn::Device device = burn::Device::cpu();
    device.seed(7);
    const auto x = Tensor<4>::random({2, 3, 8, 8}, burn::Distribution::uniform(-1, 1), device);
    const auto w = Tensor<4>::random({4, 3, 3, 3}, burn::Distribution::uniform(-1, 1), device);
    const auto a = Tensor<2>::random({64, 64}, burn::Distribution::uniform(-1, 1), device);
    double total = 0;
    for (int i = 0; i < 3; ++i) {
      const auto y = burn::module::conv2d(x, w, std::nullopt, burn::module::ConvOptions<2>({1, 1}, {1, 1}, {1, 1}));
      const auto b = ((a * 2.0 + 1.0).exp() - a).sum();
      total += y.sum().into_scalar<double>() + b.into_scalar<double>();
    }
    std::cout << "checksum " << total << "\n";
  } catch (const burn::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
