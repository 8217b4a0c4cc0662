// The autodiff examples of Burn's documentation of Device (the book's chapter
// "Backend and Device" and the API reference of burn::tensor::Device), run as
// written, plus those of docs/api.md and include/burn/autodiff.hpp.
#include "ad_support.hpp"

#if BURN_HAS_AUTODIFF

namespace {

using burn::Device;
using burn::Gradients;
using burn::Tensor;
using burn::adtest::expect_grad;

// Device reference, Device::autodiff():
//   let device = Device::default().autodiff();
//   let x = Tensor::<1>::from_floats([1.0, 2.0, 3.0], &device).require_grad();
//   let gradients = x.backward();
TEST(AutodiffDocExamples, DefaultDeviceAutodiffBackward) {
  const Device device = Device().autodiff();
  const auto x = Tensor<1>::from_floats({1.0, 2.0, 3.0}, device).require_grad();
  const Gradients gradients = x.backward();
  expect_grad(x.grad(gradients), {3}, {1, 1, 1});
}

// Backend and Device, and the Device reference, gradient_checkpointing():
//   let device = Device::default().autodiff().gradient_checkpointing();
// The same example on a checkpointing device.
TEST(AutodiffDocExamples, DefaultDeviceWithCheckpointing) {
  const Device device = Device().autodiff().gradient_checkpointing();
  const auto x = Tensor<1>::from_floats({1.0, 2.0, 3.0}, device).require_grad();
  const Gradients gradients = x.backward();
  expect_grad(x.grad(gradients), {3}, {1, 1, 1});
}

// Backend and Device, "Autodiff and Execution": devices provide the autodiff default
// for new tensors; each tensor carries its own context.
//   let device = Device::wgpu(Default::default());
//   let training_device = device.autodiff();
TEST(AutodiffDocExamples, TrainingDeviceTensorsTrackGradients) {
  for (const Device& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const Device training_device = device.autodiff();
    const auto x = Tensor<1>::from_floats({1.0, 2.0, 3.0}, training_device).require_grad();
    const auto y = (x * x).sum();
    expect_grad(x.grad(y.backward()), {3}, {2, 4, 6});
    const Device inference_device = training_device.without_autodiff();
    EXPECT_FALSE(Tensor<1>::from_floats({1.0}, inference_device).is_autodiff());
  }
}

// docs/api.md, "Tensors":
//   auto x = Tensor<1>::from_floats({1.0, 2.0, 3.0}, device.autodiff()).require_grad();
//   auto y = (x * 2.0f + 1.0f).exp().sum();
//   burn::Gradients grads = y.backward();
//   std::optional<Tensor<1>> gx = x.grad(grads);
TEST(AutodiffDocExamples, ApiDocTensorExample) {
  for (const Device& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto x = Tensor<1>::from_floats({1.0, 2.0, 3.0}, device.autodiff()).require_grad();
    auto y = (x * 2.0f + 1.0f).exp().sum();
    burn::Gradients grads = y.backward();
    std::optional<Tensor<1>> gx = x.grad(grads);
    expect_grad(gx, {3}, {2 * std::exp(3.0), 2 * std::exp(5.0), 2 * std::exp(7.0)},
                burn::Tolerance::rel_abs(1e-5, 1e-5));
  }
}

// include/burn/autodiff.hpp:
//   auto device = burn::Device::flex().autodiff();
//   auto x = burn::Tensor<1>::from_floats({1.0, 2.0, 3.0}, device).require_grad();
//   auto y = (x * x).sum();
//   burn::Gradients grads = y.backward();
//   std::optional<burn::Tensor<1>> dx = x.grad(grads);   // 2 * x
#if BURN_HAS_FLEX
TEST(AutodiffDocExamples, HeaderExample) {
  auto device = burn::Device::flex().autodiff();
  auto x = burn::Tensor<1>::from_floats({1.0, 2.0, 3.0}, device).require_grad();
  auto y = (x * x).sum();
  burn::Gradients grads = y.backward();
  std::optional<burn::Tensor<1>> dx = x.grad(grads);
  expect_grad(dx, {3}, {2, 4, 6});
}
#endif

}  // namespace

#endif  // BURN_HAS_AUTODIFF
