// Quantized tensors: each scheme's round trip within its error bound on every
// device, the checks on bad schemes, and int8 matmul against integer sums.
#include <burn/quant.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "burn_test.hpp"
#include "int8_kernel_scope.hpp"

namespace {

using namespace burn;
using burn::quant::QuantScheme;
using burn::testing::all_devices;
using burn::testing::Int8KernelScope;

/// Runs `f`, expecting a burn::Error whose message contains `needle`.
template <class F>
void expect_quant_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

std::vector<float> random_floats(std::size_t n, unsigned seed, float spread) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, spread);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

/// Which scale group element `flat` of a [rows, cols] tensor falls in.
std::size_t group_of(const QuantScheme& s, std::size_t flat, std::size_t cols) {
  switch (s.level) {
    case quant::QuantLevel::Tensor: return 0;
    case quant::QuantLevel::Channel: return s.axis == 0 ? flat / cols : flat % cols;
    case quant::QuantLevel::Block: return flat / s.block_size;
  }
  return 0;
}

std::vector<QuantScheme> schemes() {
  return {QuantScheme::int8_per_tensor(),   QuantScheme::int8_per_channel(0),
          QuantScheme::int8_per_channel(1), QuantScheme::int8_block(8),
          QuantScheme::int4_block(16),      QuantScheme{quant::QuantBits::Int4, quant::QuantLevel::Channel, 1, 0}};
}

TEST(Quantize, RoundTripsWithinEachSchemesBoundOnEveryDevice) {
  const std::size_t rows = 6, cols = 8;
  auto values = random_floats(rows * cols, 11, 3.0f);
  values[5] = 0.0f;
  for (const Device& device : all_devices()) {
    auto x = Tensor<2>::from_data(TensorData(values, Shape{rows, cols}), device);
    for (const QuantScheme& scheme : schemes()) {
      SCOPED_TRACE(device.to_string() + " " + scheme.to_string());
      auto q = quant::quantize(x, scheme);
      ASSERT_EQ(q.values().dtype(), DType::I8);
      EXPECT_EQ(q.shape(), (Shape{rows, cols}));
      const auto ints = q.values().to_data().to_vec<std::int8_t>();
      const auto scales = q.scales().to_data().to_vec<float>();
      const auto back = q.dequantize().to_data().to_vec<float>();
      // Each group's scale is its max |x| over qmax, computed here independently.
      std::vector<float> amax(scales.size(), 0.0f);
      for (std::size_t i = 0; i < values.size(); ++i) {
        const std::size_t g = group_of(scheme, i, cols);
        ASSERT_LT(g, amax.size());
        amax[g] = std::max(amax[g], std::abs(values[i]));
      }
      for (std::size_t g = 0; g < scales.size(); ++g)
        EXPECT_NEAR(scales[g], amax[g] / static_cast<float>(scheme.qmax()), 1e-6f * amax[g]) << "group " << g;
      for (std::size_t i = 0; i < values.size(); ++i) {
        const float s = scales[group_of(scheme, i, cols)];
        EXPECT_LE(std::abs(int{ints[i]}), scheme.qmax());
        EXPECT_LE(std::abs(values[i] - back[i]), s / 2 + 1e-6f * std::abs(values[i])) << "element " << i;
        EXPECT_FLOAT_EQ(back[i], s * static_cast<float>(ints[i]));
      }
    }
  }
}

TEST(Quantize, ZerosStayZeroAndScalesStayPositive) {
  auto x = Tensor<2>::zeros({2, 4}, Device::flex());
  auto q = quant::quantize(x, QuantScheme::int8_per_channel(0));
  for (auto v : q.values().to_data().to_vec<std::int8_t>()) EXPECT_EQ(v, 0);
  for (auto s : q.scales().to_data().to_vec<float>()) EXPECT_GT(s, 0.0f);
  for (auto v : q.dequantize().to_data().to_vec<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Quantize, ThreeDimensionalChannelAxisKeepsTheLayout) {
  const auto values = random_floats(2 * 3 * 4, 5, 1.0f);
  auto x = Tensor<3>::from_data(TensorData(values, Shape{2, 3, 4}), Device::flex());
  auto q = quant::quantize(x, QuantScheme::int8_per_channel(1));
  ASSERT_EQ(q.scales().shape(), (Shape{3}));
  const auto scales = q.scales().to_data().to_vec<float>();
  const auto back = q.dequantize().to_data().to_vec<float>();
  for (std::size_t c = 0; c < 3; ++c) {
    float amax = 0.0f;
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t k = 0; k < 4; ++k) amax = std::max(amax, std::abs(values[(b * 3 + c) * 4 + k]));
    EXPECT_NEAR(scales[c], amax / 127.0f, 1e-6f * amax);
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t k = 0; k < 4; ++k) {
        const std::size_t i = (b * 3 + c) * 4 + k;
        EXPECT_LE(std::abs(values[i] - back[i]), scales[c] / 2 + 1e-7f);
      }
  }
}

TEST(Quantize, HostPassesMatchTheOperationsBitForBit) {
  // On cpu, flex and ndarray an f32 tensor is quantized by two passes of
  // host code; elsewhere (and as the reference here) by tensor operations.
  // Both must give the same bytes, ties included: a group whose max |x| is
  // exactly qmax has scale 1, so its x.5 values round half to even.
  auto values = random_floats(4 * 6 * 8, 23, 2.0f);
  const std::vector<float> ties{127.0f, 2.5f, -3.5f, 0.5f, -0.5f, 126.5f, -126.5f, 7.0f, 6.5f, -5.5f, 1.5f, 0.0f};
  std::copy(ties.begin(), ties.end(), values.begin());
  std::vector<QuantScheme> cases = schemes();
  cases.push_back(QuantScheme::int8_block(12));
  for (const Device& device : all_devices()) {
    if (device.type() != DeviceType::Cpu && device.type() != DeviceType::Flex && device.type() != DeviceType::NdArray)
      continue;
    const auto matrix = Tensor<2>::from_data(TensorData(values, Shape{24, 8}), device);
    const auto cube = Tensor<3>::from_data(TensorData(values, Shape{4, 6, 8}), device);
    for (const auto& ref : {matrix.ref(), cube.ref()}) {
      const Shape& shape = ref->spec.shape;
      for (const QuantScheme& scheme : cases) {
        SCOPED_TRACE(device.to_string() + " " + shape.to_string() + " " + scheme.to_string());
        if (scheme.level == quant::QuantLevel::Channel && scheme.axis >= shape.rank()) continue;
        const auto fast = quant::detail::quantize(ref, scheme);
        const auto ops = quant::detail::quantize_with_operations(ref, scheme);
        ASSERT_EQ(fast.values->spec, ops.values->spec);
        ASSERT_EQ(fast.scales->spec, ops.scales->spec);
        EXPECT_EQ(detail::to_data(fast.values).to_vec<std::int8_t>(),
                  detail::to_data(ops.values).to_vec<std::int8_t>());
        EXPECT_EQ(detail::to_data(fast.scales).to_vec<float>(), detail::to_data(ops.scales).to_vec<float>());
      }
    }
    // Long enough that the threads share one group's run (pieces of 2^16).
    const auto long_values = random_floats(3 * 65536 + 12, 29, 1.0f);
    const auto long_row = Tensor<1>::from_data(TensorData(long_values, Shape{long_values.size()}), device);
    for (const QuantScheme& scheme : {QuantScheme::int8_per_tensor(), QuantScheme::int8_block(12)}) {
      SCOPED_TRACE(device.to_string() + " long " + scheme.to_string());
      const auto fast = quant::detail::quantize(long_row.ref(), scheme);
      const auto ops = quant::detail::quantize_with_operations(long_row.ref(), scheme);
      EXPECT_EQ(detail::to_data(fast.values).to_vec<std::int8_t>(), detail::to_data(ops.values).to_vec<std::int8_t>());
      EXPECT_EQ(detail::to_data(fast.scales).to_vec<float>(), detail::to_data(ops.scales).to_vec<float>());
    }
    // The tie group itself, checked by hand: scale 1, halves to even.
    const auto q = quant::quantize(Tensor<1>::from_data(TensorData(ties, Shape{ties.size()}), device),
                                   QuantScheme::int8_per_tensor());
    EXPECT_EQ(q.scales().to_data().to_vec<float>(), std::vector<float>{1.0f});
    EXPECT_EQ(q.values().to_data().to_vec<std::int8_t>(),
              (std::vector<std::int8_t>{127, 2, -4, 0, 0, 126, -126, 7, 6, -6, 2, 0}));
  }
}

TEST(Quantize, NonFiniteValuesAreAClearErrorOnTheHost) {
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    std::vector<float> values{1.0f, -2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
    values[4] = bad;
    auto x = Tensor<2>::from_data(TensorData(values, Shape{2, 3}), Device::flex());
    expect_quant_error([&] { (void)quant::quantize(x, QuantScheme::int8_per_channel(0)); },
                       "scale group 1 of the [2, 3] tensor holds a NaN or infinite value");
  }
}

TEST(Quantize, BadSchemesAndInputsAreClearErrors) {
  auto x = Tensor<2>::ones({3, 5}, Device::flex());
  expect_quant_error([&] { (void)quant::quantize(x, QuantScheme::int8_per_channel(2)); },
                     "channel axis 2 is out of range");
  expect_quant_error([&] { (void)quant::quantize(x, QuantScheme::int8_block(4)); },
                     "block size 4 does not divide the 15 elements");
  auto ints = Tensor<2, Int>::ones({3, 5}, Device::flex());
  expect_quant_error([&] { (void)quant::detail::quantize(ints.ref(), QuantScheme{}); }, "expected a float tensor");
  auto q = quant::quantize(x, QuantScheme::int8_per_tensor());
  expect_quant_error(
      [&] { quant::QuantizedTensor<2>(q.values(), Tensor<1>::ones({3}, Device::flex()), QuantScheme{}); },
      "1 scales, got scales of shape [3]");
  expect_quant_error([&] { (void)QuantScheme::parse("int8-block0"); }, "not a quantization scheme");
  expect_quant_error([&] { (void)QuantScheme::parse("int16-tensor"); }, "not a quantization scheme");
}

TEST(Quantize, SchemeSpellingsRoundTrip) {
  for (const QuantScheme& s : schemes()) EXPECT_EQ(QuantScheme::parse(s.to_string()), s) << s.to_string();
  EXPECT_EQ(QuantScheme::int4_block(32).to_string(), "int4-block32");
  EXPECT_EQ(QuantScheme::int8_per_channel(1).to_string(), "int8-channel1");
}

TEST(Quantize, StorageBytesCountPackedInt4) {
  auto x = Tensor<2>::ones({4, 8}, Device::flex());
  EXPECT_EQ(quant::quantize(x, QuantScheme::int8_per_tensor()).storage_bytes(), 32u + 4u);
  EXPECT_EQ(quant::quantize(x, QuantScheme::int4_block(16)).storage_bytes(), 16u + 8u);
}

/// Makes the process use one int8 kernel while alive, then the default again.
/// An int8 per-tensor QuantizedTensor holding `values` with one scale.
quant::QuantizedTensor<2> int8_tensor(const std::vector<std::int8_t>& values, Shape shape, float scale,
                                      const Device& device) {
  return quant::QuantizedTensor<2>(Tensor<2, Int>::from_data(TensorData(values, std::move(shape)), {device, DType::I8}),
                                   Tensor<1>::from_data(TensorData(std::vector<float>{scale}, Shape{1}), device),
                                   QuantScheme::int8_per_tensor());
}

// The full int8 range on the left (past the 7-bit range of the kernels
// without VNNI), per-column scales on the right, against int64 sums: every
// device, and on the host every int8 kernel this CPU runs.
TEST(QuantizedMatmul, MatchesIntegerSumsOnEveryDeviceAndKernel) {
  const std::size_t m = 5, k = 300, n = 7;
  std::mt19937 gen(3);
  std::uniform_int_distribution<int> dist(-127, 127);
  std::vector<std::int8_t> a(m * k), b(k * n);
  for (auto& v : a) v = static_cast<std::int8_t>(dist(gen));
  for (auto& v : b) v = static_cast<std::int8_t>(dist(gen));
  a[0] = -127;
  a[1] = 127;
  std::vector<float> b_scales(n);
  for (std::size_t j = 0; j < n; ++j) b_scales[j] = 0.001f * static_cast<float>(j + 1);
  const float a_scale = 0.02f;
  const auto kernels = quant::detail::available_int8_kernels();
  ASSERT_FALSE(kernels.empty());
  for (const auto kernel : kernels)
    for (const Device& device : all_devices()) {
      Int8KernelScope use(kernel);
      SCOPED_TRACE(device.to_string() + " kernel " + std::to_string(static_cast<int>(kernel)));
      const auto qa = int8_tensor(a, Shape{m, k}, a_scale, device);
      quant::QuantizedTensor<2> qb(Tensor<2, Int>::from_data(TensorData(b, Shape{k, n}), {device, DType::I8}),
                                   Tensor<1>::from_data(TensorData(b_scales, Shape{n}), device),
                                   QuantScheme::int8_per_channel(1));
      const auto out = quant::quantized_matmul(qa, qb).to_data().to_vec<float>();
      ASSERT_EQ(out.size(), m * n);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          std::int64_t acc = 0;
          for (std::size_t l = 0; l < k; ++l) acc += std::int64_t{a[i * k + l]} * std::int64_t{b[l * n + j]};
          const double expected = static_cast<double>(acc) * a_scale * b_scales[j];
          EXPECT_NEAR(out[i * n + j], expected, 1e-5 * std::max(1.0, std::abs(expected))) << i << "," << j;
        }
    }
}

// Shapes that leave partial register blocks and panels (every row count
// from 1 to 11, so each block height of the AVX2 kernel's five and a
// remainder of each; columns not a multiple of 16, k not of 4), with 7-bit
// activations as layers give them.
TEST(QuantizedMatmul, OddShapesAgreeAcrossKernels) {
  const std::size_t k = 13, n = 19;
  std::mt19937 gen(9);
  std::uniform_int_distribution<int> dist(-63, 63);
  const Device device = Device::flex();
  for (std::size_t m = 1; m <= 11; ++m) {
    std::vector<std::int8_t> a(m * k), b(k * n);
    for (auto& v : a) v = static_cast<std::int8_t>(dist(gen));
    for (auto& v : b) v = static_cast<std::int8_t>(dist(gen) * 2);
    const auto qa = int8_tensor(a, Shape{m, k}, 0.5f, device);
    const auto qb = int8_tensor(b, Shape{k, n}, 0.25f, device);
    for (const auto kernel : quant::detail::available_int8_kernels()) {
      Int8KernelScope use(kernel);
      const auto out = quant::quantized_matmul(qa, qb).to_data().to_vec<float>();
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          std::int64_t acc = 0;
          for (std::size_t l = 0; l < k; ++l) acc += std::int64_t{a[i * k + l]} * std::int64_t{b[l * n + j]};
          EXPECT_EQ(out[i * n + j], static_cast<float>(acc) * 0.125f)
              << "rows " << m << ", kernel " << static_cast<int>(kernel) << ": " << i << "," << j;
        }
    }
  }
  expect_quant_error([] { quant::detail::use_int8_kernel(static_cast<quant::detail::Int8Kernel>(99)); },
                     "not available");
}

// The largest 16-bit partial sums the 7-bit kernels form: rows of ±63 against
// columns of ±127 with equal and alternating signs, so that every product
// has the largest magnitude and the pair sums add up instead of cancelling
// (the AVX2 kernel's largest, 2 * (63 + 64) * 127 with its zero point, from
// row 0 against column 0).
TEST(QuantizedMatmul, LargestProductsStayExact) {
  const std::size_t m = 4, k = 40, n = 17;
  std::vector<std::int8_t> a(m * k), b(k * n);
  for (std::size_t l = 0; l < k; ++l) {
    const auto alternating = static_cast<std::int8_t>(l % 2 == 0 ? 1 : -1);
    a[0 * k + l] = 63;
    a[1 * k + l] = -63;
    a[2 * k + l] = static_cast<std::int8_t>(63 * alternating);
    a[3 * k + l] = static_cast<std::int8_t>(l % 3 == 0 ? -63 : 63);
    for (std::size_t j = 0; j < n; ++j)
      b[l * n + j] = static_cast<std::int8_t>(j % 3 == 0 ? 127 : (j % 3 == 1 ? -127 : 127 * alternating));
  }
  const Device device = Device::flex();
  const auto qa = int8_tensor(a, Shape{m, k}, 1.0f, device);
  const auto qb = int8_tensor(b, Shape{k, n}, 1.0f, device);
  for (const auto kernel : quant::detail::available_int8_kernels()) {
    Int8KernelScope use(kernel);
    const auto out = quant::quantized_matmul(qa, qb).to_data().to_vec<float>();
    EXPECT_EQ(out[0], 320040.0f);  // 63 * 127 * 40: row 0 against column 0, the largest sum
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        std::int64_t acc = 0;
        for (std::size_t l = 0; l < k; ++l) acc += std::int64_t{a[i * k + l]} * std::int64_t{b[l * n + j]};
        EXPECT_EQ(out[i * n + j], static_cast<float>(acc)) << static_cast<int>(kernel) << ": " << i << "," << j;
      }
  }
}

TEST(QuantizedMatmul, RejectsSchemesItCannotCompute) {
  auto x = Tensor<2>::ones({2, 4}, Device::flex());
  auto w = Tensor<2>::ones({4, 3}, Device::flex());
  auto qa = quant::quantize(x, QuantScheme::int8_per_tensor());
  expect_quant_error([&] { (void)quant::quantized_matmul(qa, quant::quantize(w, QuantScheme::int8_per_channel(0))); },
                     "per channel along axis 1");
  expect_quant_error([&] { (void)quant::quantized_matmul(quant::quantize(x, QuantScheme::int8_per_channel(0)), qa); },
                     "left operand must be int8 per tensor");
  expect_quant_error([&] { (void)quant::quantized_matmul(qa, qa); }, "do not chain");
}

}  // namespace
