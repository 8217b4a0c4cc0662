// The autodiff context a device carries and tensors inherit (docs/api.md,
// "Autodiff context"; Burn's "Backend and Device", "Autodiff and Execution").
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <string>

namespace {

using burn::Device;
using burn::GradientCheckpointingStrategy;
using burn::Tensor;

#if BURN_HAS_AUTODIFF

class AutodiffContext : public ::testing::TestWithParam<Device> {};

TEST_P(AutodiffContext, AutodiffAndBack) {
  const Device device = GetParam();
  EXPECT_FALSE(device.is_autodiff());
  EXPECT_EQ(device.gradient_checkpointing_strategy(), std::nullopt);

  const Device training = device.autodiff();
  EXPECT_TRUE(training.is_autodiff());
  EXPECT_EQ(training, device);
  EXPECT_EQ(training.gradient_checkpointing_strategy(), std::nullopt);

  const Device inference = training.without_autodiff();
  EXPECT_FALSE(inference.is_autodiff());
  EXPECT_EQ(inference, device);
  EXPECT_FALSE(training.inner().is_autodiff());
  EXPECT_EQ(training.inner(), inference);
  // The original value is not modified by the calls.
  EXPECT_TRUE(training.is_autodiff());
}

TEST_P(AutodiffContext, Idempotent) {
  const Device device = GetParam();
  EXPECT_TRUE(device.autodiff().autodiff().is_autodiff());
  EXPECT_FALSE(device.without_autodiff().is_autodiff());
  EXPECT_FALSE(device.autodiff().without_autodiff().without_autodiff().is_autodiff());
  EXPECT_FALSE(device.inner().inner().is_autodiff());
  // Repeating autodiff() keeps the checkpointing strategy.
  const Device ckpt = device.autodiff().gradient_checkpointing();
  EXPECT_EQ(ckpt.autodiff().gradient_checkpointing_strategy(), GradientCheckpointingStrategy::Balanced);
  EXPECT_TRUE(ckpt.autodiff().is_autodiff());
}

TEST_P(AutodiffContext, GradientCheckpointing) {
  const Device ckpt = GetParam().autodiff().gradient_checkpointing();
  EXPECT_TRUE(ckpt.is_autodiff());
  ASSERT_TRUE(ckpt.gradient_checkpointing_strategy().has_value());
  EXPECT_EQ(*ckpt.gradient_checkpointing_strategy(), GradientCheckpointingStrategy::Balanced);
  EXPECT_EQ(ckpt.gradient_checkpointing().gradient_checkpointing_strategy(), GradientCheckpointingStrategy::Balanced);
  // Leaving autodiff drops the strategy; re-entering does not bring it back.
  EXPECT_EQ(ckpt.without_autodiff().gradient_checkpointing_strategy(), std::nullopt);
  EXPECT_EQ(ckpt.inner().gradient_checkpointing_strategy(), std::nullopt);
  EXPECT_EQ(ckpt.without_autodiff().autodiff().gradient_checkpointing_strategy(), std::nullopt);
}

TEST_P(AutodiffContext, GradientCheckpointingNeedsAutodiff) {
  const Device device = GetParam();
  try {
    (void)device.gradient_checkpointing();
    ADD_FAILURE() << "gradient_checkpointing() without autodiff must throw";
  } catch (const burn::Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("[", 0), 0u) << m;
    EXPECT_NE(m.find("autodiff"), std::string::npos) << m;
  }
  EXPECT_THROW((void)device.autodiff().without_autodiff().gradient_checkpointing(), burn::Error);
}

TEST_P(AutodiffContext, TensorsInheritTheContext) {
  const Device device = GetParam();
  const auto plain = Tensor<2>::ones({2, 3}, device);
  EXPECT_FALSE(plain.is_autodiff());
  const auto tracked = Tensor<2>::ones({2, 3}, device.autodiff());
  EXPECT_TRUE(tracked.is_autodiff());
  EXPECT_TRUE(tracked.device().is_autodiff());
  // Equality with an autodiff device says nothing about the tensor's context.
  EXPECT_EQ(plain.device(), device.autodiff());
  EXPECT_TRUE((Tensor<1, burn::Int>::from_ints({1, 2}, device.autodiff()).is_autodiff()));
  EXPECT_TRUE(Tensor<1>::from_data(burn::TensorData(std::vector<float>{1}), device.autodiff()).is_autodiff());
  const auto ckpt = Tensor<1>::zeros({2}, device.autodiff().gradient_checkpointing());
  EXPECT_EQ(ckpt.device().gradient_checkpointing_strategy(), GradientCheckpointingStrategy::Balanced);
}

TEST_P(AutodiffContext, TensorsChangeTheirContextIndependently) {
  const Device device = GetParam();
  const auto plain = Tensor<2>::ones({2, 3}, device);
  const auto tracked = plain.autodiff();
  EXPECT_TRUE(tracked.is_autodiff());
  EXPECT_FALSE(plain.is_autodiff());
  EXPECT_FALSE(tracked.without_autodiff().is_autodiff());
  EXPECT_TRUE(tracked.autodiff().is_autodiff());
  EXPECT_EQ(tracked.device(), device);
  tracked.to_data().assert_eq(plain.to_data());
}

TEST_P(AutodiffContext, OperationsKeepTheContext) {
  const Device device = GetParam();
  const auto x = Tensor<1>::from_floats({1.0, 2.0}, device.autodiff());
  EXPECT_TRUE((x * 2.0f + 1.0f).is_autodiff());
  EXPECT_FALSE((x.without_autodiff() * 2.0f).is_autodiff());
}

TEST(AutodiffToDevice, KeepsTheSourceContext) {
  const auto devices = burn::testing::all_devices();
  for (const Device& from : devices) {
    for (const Device& to : devices) {
      SCOPED_TRACE(from.to_string() + " -> " + to.to_string());
      const auto tracked = Tensor<1>::from_floats({1.0, 2.0}, from.autodiff());
      const auto moved = tracked.to_device(to);
      EXPECT_EQ(moved.device(), to);
      EXPECT_TRUE(moved.is_autodiff()) << "destination defaults must not drop the tensor's autodiff";
      moved.to_data().assert_eq(tracked.to_data());

      const auto plain = Tensor<1>::from_floats({1.0, 2.0}, from);
      EXPECT_FALSE(plain.to_device(to.autodiff()).is_autodiff()) << "destination defaults must not add autodiff";

      const auto ckpt = Tensor<1>::zeros({1}, from.autodiff().gradient_checkpointing());
      EXPECT_EQ(ckpt.to_device(to).device().gradient_checkpointing_strategy(), GradientCheckpointingStrategy::Balanced);
      EXPECT_EQ(tracked.to_device(to.autodiff().gradient_checkpointing()).device().gradient_checkpointing_strategy(),
                std::nullopt);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDevices, AutodiffContext, ::testing::ValuesIn(burn::testing::all_devices()),
                         [](const ::testing::TestParamInfo<Device>& info) {
                           return std::string(info.param.type().name());
                         });

#endif  // BURN_HAS_AUTODIFF

}  // namespace
