// Command batching and queue errors: work is recorded and submitted in
// batches, reads wait for it, and failures on the queue surface as
// burn::ExecutionError at sync (or at the read that syncs).
#include "vk_test.hpp"

namespace burn::vulkan::testing {
// Defined in the library (src/backends/vulkan/factory.cpp): the next queue
// submission of `device` fails as if the device were lost.
void fail_next_submit(const Device& device);
}  // namespace burn::vulkan::testing

namespace {

using burn::Device;
using burn::Tensor;
using burn::vktest::vk;

TEST(VulkanExecution, LongChainsAreBatched) {
  const Device d = vk();
  auto x = Tensor<1>::zeros({1000}, d);
  for (int i = 0; i < 300; ++i) x = x + 1.0f;  // more than one batch of commands
  d.flush();
  const auto v = x.to_data().to_vec<float>();
  EXPECT_EQ(v.front(), 300.0f);
  EXPECT_EQ(v.back(), 300.0f);
  d.sync();
}

TEST(VulkanExecution, SubmitFailureSurfacesAtSync) {
  const Device d = vk();
  auto x = Tensor<1>::ones({16}, d) * 3.0f;
  burn::vulkan::testing::fail_next_submit(d);
  d.flush();  // the failure is kept, not thrown here
  try {
    d.sync();
    ADD_FAILURE() << "sync should raise the queue failure";
  } catch (const burn::ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("VK_ERROR_DEVICE_LOST"), std::string::npos) << e.what();
  }
  d.sync();  // reported once
  // The device keeps working for new work.
  EXPECT_EQ((Tensor<1>::ones({4}, d) * 2.0f).to_data().to_vec<float>(), (std::vector<float>{2, 2, 2, 2}));
}

TEST(VulkanExecution, IntegerDivisionByZeroIsAnExecutionError) {
  const Device d = vk();
  auto a = Tensor<1, burn::Int>::from_data(burn::TensorData(std::vector<std::int64_t>{6, 7, 8}), d);
  auto b = Tensor<1, burn::Int>::from_data(burn::TensorData(std::vector<std::int64_t>{2, 0, 4}), d);
  auto q = a / b;  // recorded; the shader flags the zero divisor
  try {
    d.sync();
    ADD_FAILURE() << "sync should raise the division by zero";
  } catch (const burn::ExecutionError& e) {
    EXPECT_EQ(e.op(), "div");
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos) << e.what();
  }
  // A read syncs too; remainder by zero has its own message.
  burn::testing::expect_op_error([&] { (void)a.remainder(b).to_data(); }, "remainder", "remainder by zero");
  EXPECT_EQ((a / 2).to_data().to_vec<std::int64_t>(), (std::vector<std::int64_t>{3, 3, 4}));
}

TEST(VulkanExecution, ReadsSeeEarlierWrites) {
  const Device d = vk();
  // Interleaved uploads, kernels and reads in one batch keep program order.
  auto a = Tensor<1>::from_floats({1, 2, 3}, d);
  auto b = a * 2.0f;
  auto c = Tensor<1>::from_floats({10, 20, 30}, d) + b;
  EXPECT_EQ(c.to_data().to_vec<float>(), (std::vector<float>{12, 24, 36}));
  EXPECT_EQ(b.to_data().to_vec<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(VulkanExecution, EmptyTensors) {
  const Device d = vk();
  auto e = Tensor<2>::zeros({0, 3}, d) + 1.0f;
  EXPECT_EQ(e.to_data().num_elements(), 0u);
  EXPECT_EQ(e.shape(), burn::Shape({0, 3}));
}

TEST(VulkanExecution, ProfileMeasuresDeviceWork) {
  const Device d = vk();
  auto x = Tensor<1>::ones({1 << 16}, d);
  auto [y, duration] = d.profile([&] { return (x * 2.0f).exp(); });
  EXPECT_GT(duration.resolve().get()->duration().count(), 0);
  EXPECT_NEAR(y.to_data().to_vec<float>()[5], std::exp(2.0f), 1e-5);
}

}  // namespace
