#include <burn/burn.hpp>
#include <gtest/gtest.h>

TEST(Smoke, OnesOnNdarray) {
  auto t = burn::Tensor<2>::ones({2, 3}, burn::Device::ndarray());
  t.to_data().assert_eq(burn::TensorData(std::vector<float>(6, 1.0f), burn::Shape{2, 3}));
}
