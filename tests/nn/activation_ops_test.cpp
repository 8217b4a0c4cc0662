// The softmax, log-softmax and gelu ops (their kernels on flex, ndarray and
// LibTorch, and the composites the other devices run) against their
// definitions in double, computed from the values the device holds; masked
// (-inf) and NaN rows; views and empty inputs; flex's kernels against the
// composites, and the fused cpu device against flex.
#include <burn/activation.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "layer_test_support.hpp"

namespace {

using namespace burn;
using burn::layer_test::values_of;
using burn::layer_test::wave_tensor;
using burn::testing::all_devices;
using burn::testing::expect_values;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Softmax (log = false) or log-softmax over rows of n, in double.
std::vector<double> softmax_reference(const std::vector<double>& x, std::size_t n, bool log) {
  std::vector<double> y(x.size());
  for (std::size_t start = 0; start < x.size(); start += n) {
    double max = -kInf;
    for (std::size_t i = 0; i < n; ++i) max = std::isnan(x[start + i]) ? kNaN : std::fmax(max, x[start + i]);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += std::exp(x[start + i] - max);
    for (std::size_t i = 0; i < n; ++i)
      y[start + i] = log ? x[start + i] - max - std::log(sum) : std::exp(x[start + i] - max) / sum;
  }
  return y;
}

std::vector<double> gelu_reference(std::vector<double> x, bool tanh) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  for (double& v : x)
    v = tanh ? 0.5 * v * (1 + std::tanh(k * (v + 0.044715 * v * v * v))) : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  return x;
}

Tolerance activation_tol(DType dtype) {
  switch (dtype) {
    case DType::F64: return Tolerance::rel_abs(1e-12, 1e-14);
    case DType::F32: return Tolerance::rel_abs(1e-5, 1e-7);
    // Devices that run the composites round every step to 8 or 11 bits.
    default: return Tolerance::rel_abs(4e-2, 1e-2);
  }
}

// Gelu's left tail is x * (1 + erf) / 2 with erf next to -1, where one ulp of
// erf is a large part of 1 + erf (as in PyTorch, which computes the same
// formula): absolute tolerances of a few ulp of 1 times |x|.
Tolerance gelu_tol(DType dtype) {
  switch (dtype) {
    case DType::F64: return Tolerance::rel_abs(1e-12, 1e-14);
    case DType::F32: return Tolerance::rel_abs(1e-5, 1e-6);
    default: return activation_tol(dtype);
  }
}

Tensor<3> softmax_of(const Tensor<3>& x, bool log) {
  return log ? activation::log_softmax(x, -1) : activation::softmax(x, -1);
}

Tensor<2> gelu_of(const Tensor<2>& x, bool tanh) { return tanh ? activation::gelu_tanh(x) : activation::gelu(x); }

// 37 classes: no vector width divides it, so every kernel's tail runs. The
// f32 and f64 logits span [-24, 24]; the 16-bit ones [-3, 3], where the
// composites' rounding of x - max stays within the tolerance.
TEST(SoftmaxOp, MatchesTheDefinitionOnEveryDeviceAndFloatDType) {
  constexpr std::size_t kN = 37;
  for (const auto& [device, dtype] : burn::testing::combos(burn::testing::float_dtypes())) {
    for (bool log : {false, true}) {
      SCOPED_TRACE(device.to_string() + " / " + std::string(dtype_name(dtype)) + (log ? " / log" : ""));
      const double scale = dtype == DType::F32 || dtype == DType::F64 ? 24.0 : 3.0;
      auto x = wave_tensor<3>({2, 3, kN}, 0.77, 0.3, scale, device, dtype);
      expect_values(softmax_of(x, log).to_data(), softmax_reference(values_of(x.to_data()), kN, log), Shape{2, 3, kN},
                    activation_tol(dtype));
    }
  }
}

// Long rows: several pairwise-sum leaves and several chunks per row.
TEST(SoftmaxOp, LongRowsMatchTheDefinition) {
  constexpr std::size_t kN = 3001;
  for (const auto& device : all_devices()) {
    for (bool log : {false, true}) {
      SCOPED_TRACE(device.to_string() + (log ? " / log" : ""));
      auto x = wave_tensor<3>({1, 3, kN}, 0.013, 0.3, 9.0, device);
      expect_values(softmax_of(x, log).to_data(), softmax_reference(values_of(x.to_data()), kN, log), Shape{1, 3, kN},
                    Tolerance::rel_abs(2e-5, 1e-9));
    }
  }
}

// Attention masks fill with -inf: masked entries get exactly 0 (-inf after
// log), the rest share the mass. A row holding NaN is NaN throughout, as in
// PyTorch. Huge finite logits stay finite.
TEST(SoftmaxOp, MaskedNanAndHugeRows) {
  const std::vector<double> x{0.0, -kInf, 1.0, -kInf,  //
                              2.0, kNaN,  0.5, -1.0,   //
                              3e4, -3e4,  3e4, 0.0};
  for (const auto& device : all_devices()) {
    for (bool log : {false, true}) {
      SCOPED_TRACE(device.to_string() + (log ? " / log" : ""));
      const auto t = burn::testing::float_tensor<3>(x, Shape{1, 3, 4}, device, DType::F32);
      const auto want = softmax_reference(x, 4, log);
      expect_values(softmax_of(t, log).to_data(), want, Shape{1, 3, 4}, Tolerance::rel_abs(1e-5, 1e-7));
      const auto got = values_of(softmax_of(t, log).to_data());
      EXPECT_EQ(got[1], log ? -kInf : 0.0);
      EXPECT_EQ(got[3], log ? -kInf : 0.0);
    }
  }
}

TEST(GeluOp, MatchesTheDefinitionOnEveryDeviceAndFloatDType) {
  for (const auto& [device, dtype] : burn::testing::combos(burn::testing::float_dtypes())) {
    for (bool tanh : {false, true}) {
      SCOPED_TRACE(device.to_string() + " / " + std::string(dtype_name(dtype)) + (tanh ? " / tanh" : ""));
      // [-7, 7]: both tails (0 and x) and the curve between.
      auto x = wave_tensor<2>({3, 301}, 0.031, 0.3, 7.0, device, dtype);
      expect_values(gelu_of(x, tanh).to_data(), gelu_reference(values_of(x.to_data()), tanh), Shape{3, 301},
                    gelu_tol(dtype));
    }
  }
}

TEST(GeluOp, SpecialValues) {
  const std::vector<double> x{kInf, -kInf, kNaN, 0.0, -0.0, 40.0, -40.0};
  for (const auto& device : all_devices()) {
    for (bool tanh : {false, true}) {
      SCOPED_TRACE(device.to_string() + (tanh ? " / tanh" : ""));
      const auto got =
          values_of(gelu_of(burn::testing::float_tensor<2>(x, Shape{1, 7}, device, DType::F32), tanh).to_data());
      EXPECT_EQ(got[0], kInf);
      EXPECT_TRUE(std::isnan(got[1])) << got[1];  // -inf * Phi(-inf) = -inf * 0, as in PyTorch
      EXPECT_TRUE(std::isnan(got[2])) << got[2];
      EXPECT_EQ(got[3], 0.0);
      EXPECT_EQ(got[5], 40.0);
      EXPECT_EQ(got[6], 0.0);
    }
  }
}

// Permuted (non-contiguous) inputs read in logical order; empty ones stay
// empty; a non-last softmax dim runs the composite on every device.
TEST(ActivationOps, ViewsEmptyInputsAndOtherDims) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    auto x = wave_tensor<3>({9, 3, 2}, 0.37, 0.9, 4.0, device).permute({2, 1, 0});  // [2, 3, 9]
    const auto xs = values_of(x.to_data());
    expect_values(activation::softmax(x, -1).to_data(), softmax_reference(xs, 9, false), Shape{2, 3, 9},
                  Tolerance::rel_abs(1e-5, 1e-7));
    expect_values(activation::gelu(x).to_data(), gelu_reference(xs, false), Shape{2, 3, 9}, gelu_tol(DType::F32));
    // Along dim 0, softmax of the transposed rows.
    auto rows = x.permute({2, 1, 0});  // [9, 3, 2] holding the rows along dim 0
    auto along0 = activation::log_softmax(rows, 0).permute({2, 1, 0});
    expect_values(along0.to_data(), softmax_reference(xs, 9, true), Shape{2, 3, 9}, Tolerance::rel_abs(1e-5, 1e-6));
    EXPECT_EQ(activation::softmax(Tensor<2>::zeros({0, 5}, device), -1).dims(), (std::array<std::size_t, 2>{0, 5}));
    EXPECT_EQ(activation::gelu(Tensor<2>::zeros({4, 0}, device)).dims(), (std::array<std::size_t, 2>{4, 0}));
  }
}

TEST(ActivationOps, RunAsOneKernelOnTheCpuBackendsWithTheCompositesBits) {
  for (const ir::Op& op :
       {ir::Op(ir::Softmax{}), ir::Op(ir::Softmax{true}), ir::Op(ir::Gelu{}), ir::Op(ir::Gelu{true})}) {
    EXPECT_TRUE(Device::flex().supports_op(op)) << ir::op_name(op);
#if BURN_HAS_NDARRAY
    EXPECT_TRUE(Device::ndarray().supports_op(op)) << ir::op_name(op);
#endif
#if BURN_HAS_CPU
    EXPECT_TRUE(Device::cpu().supports_op(op)) << ir::op_name(op);
#endif
  }
  // flex's softmax kernels take the composite's steps, roundings included:
  // the same bits in every float dtype, and rows longer than one chunk of
  // flex's reduction. Gelu's kernel gives the composite's bits in f32.
  const Device flex = Device::flex();
  for (DType dtype : burn::testing::float_dtypes()) {
    for (std::size_t n : {300u, 20000u}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " / " + std::to_string(n));
      auto x = wave_tensor<2>({3, n}, 0.61, 0.1, 6.0, flex, dtype);
      const auto shifted = x - x.max_dim(1);
      const auto e = shifted.exp();
      std::vector<std::pair<Tensor<2>, Tensor<2>>> cases{
          {activation::softmax(x, 1), e / e.sum_dim(1)},
          {activation::log_softmax(x, 1), shifted - e.sum_dim(1).log()},
      };
      if (dtype == DType::F32)
        cases.emplace_back(activation::gelu(x), x * ((x * (1.0 / std::numbers::sqrt2)).erf() + 1.0) * 0.5);
      for (const auto& [op, composite] : cases) {
        const auto a = op.to_data(), b = composite.to_data();
        ASSERT_EQ(a.bytes().size(), b.bytes().size());
        EXPECT_EQ(std::memcmp(a.bytes().data(), b.bytes().data(), a.bytes().size()), 0);
      }
    }
  }
#if BURN_HAS_CPU
  // Device::cpu() runs flex's softmax kernel and fuses gelu with the ops
  // around it through flex's row function: flex's bits.
  const Device cpu = Device::cpu();
  auto x = wave_tensor<2>({5, 300}, 0.61, 0.1, 6.0, flex);
  auto w = wave_tensor<1>({300}, 0.3, 0.2, 1.0, flex).unsqueeze<2>();
  auto on = [&](const Device& d) {
    auto xd = x.to_device(d), wd = w.to_device(d);
    return std::vector<TensorData>{activation::softmax(xd, 1).to_data(), activation::log_softmax(xd, -1).to_data(),
                                   activation::gelu(xd * wd + 0.5).to_data(),
                                   (activation::gelu_tanh(xd) * 2.0).to_data()};
  };
  const auto want = on(flex), got = on(cpu);
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].bytes().size(), want[i].bytes().size());
    EXPECT_EQ(std::memcmp(got[i].bytes().data(), want[i].bytes().data(), want[i].bytes().size()), 0) << i;
  }
#endif
}

}  // namespace
