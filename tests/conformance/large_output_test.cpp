// Outputs far larger than the caches (16 MiB and more): split across threads
// at unaligned elements on flex, over several dispatch groups on GPU-style
// backends. The values, the error reporting and every output width must
// match a plain loop on every device.
#include "burn_test.hpp"

namespace {

using namespace burn;

// Odd, so the threads' ranges start at unaligned elements; 4M+ floats = 16 MiB+.
constexpr std::int64_t kLarge = (std::int64_t{1} << 22) + 7;

TEST(LargeOutput, ElementwiseValuesAreExactEverywhere) {
  for (const Device& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto i = Tensor<1, Int>::arange(0, kLarge, {device, DType::I64});
    const auto a = i.to_float();                         // 0, 1, 2, ...
    const auto b = i.remainder(1000).to_float() * 2.0f;  // small integers: sums stay exact in f32
    const auto c = a + b;
    const auto got = c.to_data().convert<double>().to_vec<double>();
    ASSERT_EQ(got.size(), static_cast<std::size_t>(kLarge));
    std::size_t wrong = 0;
    for (std::int64_t k = 0; k < kLarge; ++k)
      if (got[k] != static_cast<double>(k) + 2.0 * static_cast<double>(k % 1000)) ++wrong;
    EXPECT_EQ(wrong, 0u) << "elements of a + b differ from the exact sums";
    // The inputs are untouched (the output is fresh memory, not in place).
    EXPECT_EQ(a.slice({{kLarge - 2, kLarge}}).to_data().convert<double>().to_vec<double>(),
              (std::vector<double>{static_cast<double>(kLarge - 2), static_cast<double>(kLarge - 1)}));
  }
}

TEST(LargeOutput, OneByteOutputsAndCountsAgree) {
  for (const Device& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    // 4 x kLarge bools = 16 MiB+ of one-byte elements.
    const auto x = Tensor<1, Int>::arange(0, 4 * kLarge, {device, DType::I32});
    const auto mask = x.remainder(3).equal_elem(0);
    // Counted in f32 (every partial sum is an integer below 2^24, so exact):
    // an i64 copy would exceed what one Vulkan buffer binding may hold on lavapipe.
    EXPECT_EQ(mask.to_float().sum().into_scalar<double>(), static_cast<double>((4 * kLarge + 2) / 3));
  }
}

TEST(LargeOutput, AnErrorInsideAStreamedChunkIsReported) {
  for (const Device& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto num = Tensor<1, Int>::arange(1, kLarge + 1, {device, DType::I32});
    // A single zero divisor near the end of the tensor.
    const auto den = (Tensor<1, Int>::arange(0, kLarge, {device, DType::I32}) - (kLarge - 3)).abs().clamp_max(1);
    burn::testing::expect_error([&] { (num / den).to_data(); }, "division by zero");
  }
}

}  // namespace
