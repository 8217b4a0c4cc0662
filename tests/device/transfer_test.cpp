// Tensor::to_device between the CPU backends: values, dtype and shape are
// kept exactly, for every dtype, and moving to the same device is free.
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <string>

namespace {

using burn::Device;
using burn::DType;
using burn::Tensor;

TEST(Transfer, EveryDTypeBetweenEveryPairOfDevices) {
  const std::vector<double> values{-2.5, 0.0, 1.0, 3.75, 100.0, -0.125};
  for (const Device& from : burn::testing::all_devices()) {
    for (const Device& to : burn::testing::all_devices()) {
      for (DType dtype : burn::testing::float_dtypes()) {
        SCOPED_TRACE(from.to_string() + " -> " + to.to_string() + " " + std::string(burn::dtype_name(dtype)));
        const auto t = burn::testing::float_tensor<2>(values, {2, 3}, from, dtype);
        const auto moved = t.to_device(to);
        EXPECT_EQ(moved.device(), to);
        EXPECT_EQ(moved.dtype(), dtype);
        EXPECT_EQ(moved.shape(), (burn::Shape{2, 3}));
        moved.to_data().assert_eq(t.to_data());
      }
      for (DType dtype : burn::testing::int_dtypes()) {
        SCOPED_TRACE(from.to_string() + " -> " + to.to_string() + " " + std::string(burn::dtype_name(dtype)));
        if (!from.supports_dtype(dtype)) continue;  // LibTorch has no u16/u32/u64
        const auto t = burn::testing::int_tensor<1>({0, 1, 2, 100, 7}, {5}, from, dtype);
        if (!to.supports_dtype(dtype)) {
          burn::testing::expect_error([&] { (void)t.to_device(to); }, "does not support dtype");
          continue;
        }
        const auto moved = t.to_device(to);
        EXPECT_EQ(moved.dtype(), dtype);
        moved.to_data().assert_eq(t.to_data());
      }
      const auto b = burn::testing::bool_tensor<1>({true, false, true}, {3}, from);
      b.to_device(to).to_data().assert_eq(b.to_data());
    }
  }
}

TEST(Transfer, ViewsAndEmptyTensors) {
  for (const Device& from : burn::testing::all_devices()) {
    for (const Device& to : burn::testing::all_devices()) {
      SCOPED_TRACE(from.to_string() + " -> " + to.to_string());
      // A non-contiguous view arrives in logical (row-major) order.
      const auto t = Tensor<2>::from_floats({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, from).transpose();
      t.to_device(to).to_data().assert_eq(burn::TensorData(std::vector<float>{1, 4, 2, 5, 3, 6}, {3, 2}));
      const auto empty = Tensor<3>::zeros({2, 0, 3}, from);
      const auto moved = empty.to_device(to);
      EXPECT_EQ(moved.shape(), (burn::Shape{2, 0, 3}));
      EXPECT_EQ(moved.to_data().num_elements(), 0u);
    }
  }
}

TEST(Transfer, SameDeviceSharesStorage) {
  for (const Device& d : burn::testing::all_devices()) {
    const auto t = Tensor<1>::from_floats({1.0, 2.0}, d);
    const auto same = t.to_device(d);
    EXPECT_EQ(same.ref()->primitive, t.ref()->primitive) << d << ": moving to the same device copies nothing";
  }
}

TEST(Transfer, ResultIsUsableOnTheDestination) {
  const auto devices = burn::testing::all_devices();
  const auto a = Tensor<1>::from_floats({1.0, 2.0, 3.0}, devices.front());
  for (const Device& to : devices) {
    const auto b = Tensor<1>::from_floats({10.0, 20.0, 30.0}, to);
    burn::testing::expect_values((a.to_device(to) + b).to_data(), {11, 22, 33}, burn::Shape{3});
  }
}

}  // namespace
