// In-place execution: an operation consuming a tensor nobody else holds
// (a temporary, or std::move) may write its result into that tensor's
// storage. It must never be observable: shared handles, views of the same
// buffer and values autodiff keeps for backward are left intact.
#include <burn/activation.hpp>

#include "burn_test.hpp"

namespace {

using namespace burn;

std::uint64_t reserved(const Device& d) { return d.memory_pool_usage()->bytes_reserved; }

TEST(InPlace, ConsumedTemporariesReuseTheirStorageOnFlex) {
  const Device device = Device::flex();
  auto a = Tensor<1>::full({1u << 20}, 0.5, device);  // 4 MiB
  device.sync();
  device.memory_cleanup();
  const std::uint64_t before = reserved(device);
  a = std::move(a).exp();
  a = std::move(a) * 2.0f + 1.0f;
  a = (std::move(a) - 0.5f).log();
  device.sync();
  EXPECT_EQ(reserved(device), before) << "an in-place chain allocated new buffers";
  const double want = std::log(std::exp(0.5) * 2.0 + 1.0 - 0.5);
  burn::testing::expect_values(a.slice({{0, 2}}).to_data(), {want, want}, Shape{2});
}

TEST(InPlace, AConsumedMaskFillReusesItsStorageOnFlex) {
  // relu's backward fills its cotangent this way (autodiff takes it).
  const Device device = Device::flex();
  auto a = Tensor<1>::arange(0, 1 << 20, device);  // f32, 4 MiB
  const auto mask = a.lower_equal_elem(5.0);
  device.sync();
  device.memory_cleanup();
  const std::uint64_t before = reserved(device);
  a = std::move(a).mask_fill(mask, -1.0);
  device.sync();
  EXPECT_EQ(reserved(device), before) << "the fill allocated a new buffer";
  burn::testing::expect_values(a.slice({{4, 8}}).to_data(), {-1.0, -1.0, 6.0, 7.0}, Shape{4});
}

TEST(InPlace, ReluOfATemporaryReusesItsStorageOnFlex) {
  const Device device = Device::flex();
  auto a = Tensor<1>::arange(0, 1 << 20, device);  // f32, 4 MiB
  device.sync();
  device.memory_cleanup();
  const std::uint64_t before = reserved(device);
  a = burn::activation::relu(std::move(a) - 3.0f);  // the difference is a temporary
  device.sync();
  // The 1-byte mask is the only new buffer.
  EXPECT_LE(reserved(device), before + (1u << 20)) << "relu of a temporary allocated a new 4 MiB buffer";
  burn::testing::expect_values(a.slice({{0, 6}}).to_data(), {0.0, 0.0, 0.0, 0.0, 1.0, 2.0}, Shape{6});
}

TEST(InPlace, ReluKeepsANamedTensor) {
  for (const Device& device : burn::testing::all_devices()) {
    const auto x = Tensor<1>::from_floats({-1.0, 2.0, -3.0}, device);
    auto y = burn::activation::relu(x);                    // x is named: never overwritten
    auto z = burn::activation::relu(Tensor<1>(x) * 1.0f);  // a temporary copy's result may be
    burn::testing::expect_values(y.to_data(), {0.0, 2.0, 0.0}, Shape{3});
    burn::testing::expect_values(z.to_data(), {0.0, 2.0, 0.0}, Shape{3});
    burn::testing::expect_values(x.to_data(), {-1.0, 2.0, -3.0}, Shape{3});
  }
}

TEST(InPlace, TemporaryChainsGiveTheSameValuesOnEveryDevice) {
  for (const Device& device : burn::testing::all_devices()) {
    const auto x = Tensor<2>::from_floats({{1.0, -2.0}, {0.5, 4.0}}, device);
    const auto y = Tensor<2>::from_floats({{3.0, 1.0}, {-1.0, 2.0}}, device);
    const auto z = ((x * 2.0f + 1.0f) * (y - 1.0f) + x).tanh() / (y * y + 1.0f);
    std::vector<double> want;
    const double xs[] = {1.0, -2.0, 0.5, 4.0}, ys[] = {3.0, 1.0, -1.0, 2.0};
    for (int i = 0; i < 4; ++i) want.push_back(std::tanh((xs[i] * 2 + 1) * (ys[i] - 1) + xs[i]) / (ys[i] * ys[i] + 1));
    burn::testing::expect_values(z.to_data(), want, Shape{2, 2});
    EXPECT_EQ(x.to_data().convert<double>().to_vec<double>(), (std::vector<double>{1.0, -2.0, 0.5, 4.0}));
    EXPECT_EQ(y.to_data().convert<double>().to_vec<double>(), (std::vector<double>{3.0, 1.0, -1.0, 2.0}));
  }
}

TEST(InPlace, ASharedHandleIsNeverOverwritten) {
  for (const Device& device : burn::testing::all_devices()) {
    auto a = Tensor<1>::from_floats({1.0, 2.0, 3.0}, device);
    const auto copy = a;  // same storage, second handle
    a = std::move(a) + 10.0f;
    burn::testing::expect_values(a.to_data(), {11.0, 12.0, 13.0}, Shape{3});
    burn::testing::expect_values(copy.to_data(), {1.0, 2.0, 3.0}, Shape{3});
  }
}

TEST(InPlace, AViewOfTheBufferIsNeverOverwritten) {
  for (const Device& device : burn::testing::all_devices()) {
    auto a = Tensor<2>::from_floats({{1.0, 2.0}, {3.0, 4.0}}, device);
    const auto view = a.transpose();  // shares a's buffer
    const auto flat = a.reshape<1>({4});
    a = std::move(a).neg();
    burn::testing::expect_values(a.to_data(), {-1.0, -2.0, -3.0, -4.0}, Shape{2, 2});
    burn::testing::expect_values(view.to_data(), {1.0, 3.0, 2.0, 4.0}, Shape{2, 2});
    burn::testing::expect_values(flat.to_data(), {1.0, 2.0, 3.0, 4.0}, Shape{4});
  }
}

TEST(InPlace, BroadcastAndMixedDtypesStillAllocate) {
  for (const Device& device : burn::testing::all_devices()) {
    // The small operand cannot hold the broadcast result; the comparison has another dtype.
    auto row = Tensor<2>::from_floats({{1.0, 2.0}}, device);
    auto grid = Tensor<2>::from_floats({{1.0}, {2.0}}, device);
    const auto sum = std::move(row) + std::move(grid);
    burn::testing::expect_values(sum.to_data(), {2.0, 3.0, 3.0, 4.0}, Shape{2, 2});
    auto t = Tensor<1>::from_floats({1.0, 5.0}, device);
    const auto mask = t.greater_elem(2.0);
    burn::testing::expect_values(mask.to_data(), {0.0, 1.0}, Shape{2});
  }
}

#if BURN_HAS_AUTODIFF
TEST(InPlace, ValuesKeptForBackwardAreNeverOverwritten) {
  for (const Device& plain : burn::testing::all_devices()) {
    const Device device = plain.autodiff();
    const auto x = Tensor<1>::from_floats({0.5, 1.5}, device).require_grad();
    // (x * x) is a temporary the mul's backward needs; exp consumes it.
    const auto y = (x * x).exp().sum();
    auto grads = y.backward();
    const double e0 = std::exp(0.25), e1 = std::exp(2.25);
    burn::testing::expect_values(x.grad(grads)->to_data(), {2 * 0.5 * e0, 2 * 1.5 * e1}, Shape{2});
  }
}
#endif

}  // namespace
