// Device::profile on vulkan:0 measures with timestamp queries (the device
// clock), not wall time between syncs: windows close without waiting, owed
// work falls in, nested windows lie inside each other, and a failed queue
// leaves a window without a measurement.
#include "vk_test.hpp"

#include <chrono>

namespace burn::vulkan::testing {
// Defined in the library (src/backends/vulkan/factory.cpp).
void fail_next_submit(const Device& device);
}  // namespace burn::vulkan::testing

namespace {

using burn::Device;
using burn::Tensor;
using burn::vktest::vk;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::chrono::nanoseconds ticks(const burn::ProfileDuration& d) {
  const auto t = d.resolve().get();
  EXPECT_TRUE(t.has_value());
  return t ? t->duration() : -1ns;
}

/// Work that takes lavapipe a few milliseconds.
Tensor<2> heavy(const Tensor<2>& a) { return a.matmul(a).matmul(a); }

TEST(VulkanProfile, RealWorkReadsPositiveAndWithinWallTime) {
  const Device d = vk();
  const auto a = Tensor<2>::ones({256, 256}, d);
  d.sync();
  const auto t0 = Clock::now();
  auto [y, duration] = d.profile([&] { return heavy(a); });
  d.sync();
  const auto wall = Clock::now() - t0;
  const auto device_time = ticks(duration);
  EXPECT_GT(device_time, 0ns);
  // Device time of the window's work fits in the wall time around it.
  EXPECT_LT(device_time, wall);
  EXPECT_EQ(y.to_data().to_vec<float>()[0], 256.0f * 256.0f * 256.0f / 256.0f);
  // Resolving again gives the same answer.
  EXPECT_EQ(ticks(duration), device_time);
}

TEST(VulkanProfile, ClosingDoesNotWaitAndResolvingRunsTheWork) {
  const Device d = vk();
  const auto a = Tensor<2>::ones({128, 128}, d);
  // No read inside or after the window: the closing timestamp still sits in
  // the open batch; resolve() submits it and waits.
  auto [y, duration] = d.profile([&] { return a * 3.0f; });
  EXPECT_GT(ticks(duration), 0ns);
  EXPECT_EQ(y.to_data().to_vec<float>()[7], 3.0f);
}

TEST(VulkanProfile, EmptyWindowsReadZeroAndTinyOnesNearZero) {
  const Device d = vk();
  const auto a = Tensor<1>::ones({16}, d);
  d.sync();
  auto [n, empty] = d.profile([] { return 7; });
  EXPECT_EQ(n, 7);
  EXPECT_EQ(ticks(empty), 0ns);
  // One tiny op after a sync: the window holds little more than its dispatch.
  auto [t, tiny] = d.profile([&] { return a + 1.0f; });
  const auto tiny_time = ticks(tiny);
  EXPECT_GE(tiny_time, 0ns);
  EXPECT_LT(tiny_time, 50ms);
  auto [big, heavy_d] = d.profile([&] { return heavy(Tensor<2>::ones({256, 256}, d)); });
  EXPECT_GT(ticks(heavy_d), tiny_time) << "more work reads as more device time";
}

TEST(VulkanProfile, OwedWorkFallsIn) {
  const Device d = vk();
  const auto a = Tensor<2>::ones({256, 256}, d);
  const auto small = Tensor<1>::ones({16}, d);
  d.sync();
  auto [s1, alone] = d.profile([&] { return small * 2.0f; });
  const auto alone_time = ticks(alone);
  // The heavy product is recorded before the window opens but has not run.
  const auto owed = heavy(a);
  auto [s2, with_owed] = d.profile([&] { return small * 2.0f; });
  const auto owed_time = ticks(with_owed);
  d.sync();
  auto [s3, heavy_alone] = d.profile([&] { return heavy(a); });
  EXPECT_GT(owed_time, alone_time);
  EXPECT_GT(owed_time, ticks(heavy_alone) / 2) << "the owed product's time is in the window";
  EXPECT_EQ(owed.to_data().to_vec<float>()[0], 65536.0f);
}

TEST(VulkanProfile, NestedWindowsLieInsideTheOuterOne) {
  const Device d = vk();
  const auto a = Tensor<2>::ones({192, 192}, d);
  d.sync();
  burn::ProfileDuration inner;
  auto [y, outer] = d.profile([&] {
    auto b = heavy(a);
    auto [c, in] = d.profile([&] { return heavy(b); });
    inner = in;
    return heavy(c);
  });
  const auto inner_time = ticks(inner), outer_time = ticks(outer);
  EXPECT_GT(inner_time, 0ns);
  EXPECT_LT(inner_time, outer_time);
}

TEST(VulkanProfile, ManyWindowsInOneBatch) {
  // Each window takes one query slot until its batch has run: far more
  // windows than slots, resolved at the end, all measure.
  const Device d = vk();
  const auto a = Tensor<1>::ones({64}, d);
  std::vector<burn::ProfileDuration> all;
  auto x = a;
  for (int i = 0; i < 3000; ++i) {
    auto [y, duration] = d.profile([&] { return x + 1.0f; });
    x = y;
    all.push_back(duration);
  }
  for (const auto& duration : all) EXPECT_GE(ticks(duration), 0ns);
  EXPECT_EQ(x.to_data().to_vec<float>()[0], 3001.0f);
}

TEST(VulkanProfile, AFailedQueueLeavesTheWindowUnmeasured) {
  const Device d = vk();
  const auto a = Tensor<1>::ones({64}, d);
  d.sync();
  auto [y, duration] = d.profile([&] { return a * 2.0f; });
  burn::vulkan::testing::fail_next_submit(d);
  try {
    (void)duration.resolve().get();
    ADD_FAILURE() << "a window whose work never ran has no measurement";
  } catch (const burn::ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("no measurement"), std::string::npos) << e.what();
  }
  EXPECT_THROW(d.sync(), burn::ExecutionError);
  // The device keeps working and measuring afterwards.
  auto [z, again] = d.profile([&] { return (a * 5.0f).to_data(); });
  EXPECT_GT(ticks(again), 0ns);
  EXPECT_EQ(z.to_vec<float>()[0], 5.0f);
}

}  // namespace
