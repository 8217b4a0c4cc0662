// Matmul, convolution, pooling and scatter-add at sizes where one thread's loops would run
// past lavapipe's cap of 65,535 loop iterations per shader invocation (the
// driver then silently stops the loops: a [2, 200000] x [200000, 2] product
// of ones read 87,392). The kernels split such work into passes; these
// check exact values (or the reference device's) past the cap.
#include "vk_test.hpp"

#include <cstdint>
#include <vector>

namespace {

using burn::Device;
using burn::DType;
using burn::Shape;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;

constexpr std::size_t kLongK = 200000;

/// Small integers, so every partial sum is exact in f32 whatever the order.
double lhs_at(std::size_t i, std::size_t k) { return static_cast<double>(k % 7) - 3.0 + static_cast<double>(i); }
double rhs_at(std::size_t k, std::size_t j) { return static_cast<double>(k % 5) - 2.0 + static_cast<double>(j); }

/// [rows, K] (stored k-major, [K, rows], when `k_major`) of lhs_at / rhs_at.
std::vector<double> operand(std::size_t rows, bool lhs, bool k_major) {
  std::vector<double> v(rows * kLongK);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < kLongK; ++k)
      v[k_major ? k * rows + r : r * kLongK + k] = lhs ? lhs_at(r, k) : rhs_at(k, r);
  return v;
}

std::vector<double> expected_product(std::size_t m, std::size_t n) {
  std::vector<double> want(m * n);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      std::int64_t s = 0;
      for (std::size_t k = 0; k < kLongK; ++k)
        s += static_cast<std::int64_t>(lhs_at(i, k)) * static_cast<std::int64_t>(rhs_at(k, j));
      want[i * n + j] = static_cast<double>(s);
    }
  return want;
}

TEST(VulkanLongLoops, MatmulWithALongInnerDimIsExact) {
  const std::size_t m = 2, n = 3;
  const std::vector<double> want = expected_product(m, n);
  for (DType t : {DType::F32, DType::I32}) {
    SCOPED_TRACE(name_of(t));
    // Row-major operands (vector loads along k for the lhs) ...
    const auto a = values(operand(m, true, false), Shape{m, kLongK}, t, vk());
    const auto b = values(operand(n, false, true), Shape{kLongK, n}, t, vk());
    const auto got = burn::detail::to_data(run(ir::Matmul{}, {a, b}));
    got.assert_eq(burn::TensorData(want, Shape{m, n}).convert(t));
    // ... and transposed ones (the lhs read along m, the rhs along k).
    const auto at = values(operand(m, true, true), Shape{kLongK, m}, t, vk());
    const auto bt = values(operand(n, false, false), Shape{n, kLongK}, t, vk());
    const auto got_t = burn::detail::to_data(
        run(ir::Matmul{}, {burn::detail::swap_dims(at, 0, 1), burn::detail::swap_dims(bt, 0, 1)}));
    got_t.assert_eq(burn::TensorData(want, Shape{m, n}).convert(t));
  }
}

TEST(VulkanLongLoops, BatchedMatmulWithALongInnerDimIsExact) {
  // Three batch entries sharing one rhs: lhs entry e is lhs_at + e.
  const std::size_t m = 2, n = 2, batches = 3;
  std::vector<double> lhs;
  for (std::size_t e = 0; e < batches; ++e)
    for (double v : operand(m, true, false)) lhs.push_back(v + static_cast<double>(e));
  const auto a = values(lhs, Shape{batches, m, kLongK}, DType::F32, vk());
  const auto b = values(operand(n, false, true), Shape{1, kLongK, n}, DType::F32, vk());
  std::vector<double> want;
  const std::vector<double> base = expected_product(m, n);
  for (std::size_t e = 0; e < batches; ++e)
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double col = 0;  // sum over k of rhs_at(k, j)
        for (std::size_t k = 0; k < kLongK; ++k) col += rhs_at(k, j);
        want.push_back(base[i * n + j] + static_cast<double>(e) * col);
      }
  burn::detail::to_data(run(ir::Matmul{}, {a, b}))
      .assert_eq(burn::TensorData(want, Shape{batches, m, n}).convert(DType::F32));
}

TEST(VulkanLongLoops, HalfMatmulAccumulatesAcrossPassesInF32) {
  // 100,000 products of 1/64: 1562.5 in f32, rounded once to f16 (ties to
  // even: 1562). Rounding to f16 between passes would drift further.
  const std::size_t k = 100000;
  const auto a = values(std::vector<double>(2 * k, 1.0), Shape{2, k}, DType::F16, vk());
  const auto b = values(std::vector<double>(k * 2, 1.0 / 64), Shape{k, 2}, DType::F16, vk());
  const auto got = burn::detail::to_data(burn::detail::cast(run(ir::Matmul{}, {a, b}), DType::F32)).to_vec<float>();
  for (float v : got) EXPECT_EQ(v, 1562.0f);
}

TEST(VulkanLongLoops, WeightGradOfA1x1KernelOverA200x200Image) {
  // K = batch * output positions = 40,000 in one row of the GEMM.
  const std::size_t side = 200, vol = side * side;
  std::vector<double> x(vol), g(vol);
  std::int64_t want = 0;
  for (std::size_t p = 0; p < vol; ++p) {
    x[p] = static_cast<double>(p % 5) - 2.0;
    g[p] = static_cast<double>(p % 3) - 1.0;
    want += static_cast<std::int64_t>(x[p]) * static_cast<std::int64_t>(g[p]);
  }
  const auto xs = values(x, Shape{1, 1, side, side}, DType::F32, vk());
  const auto gs = values(g, Shape{1, 1, side, side}, DType::F32, vk());
  const auto got = burn::detail::to_data(run(ir::ConvWeightGrad{{1, 1}, {1, 1}, {0, 0}, {1, 1}, 1}, {xs, gs}));
  got.assert_eq(
      burn::TensorData(std::vector<double>{static_cast<double>(want)}, Shape{1, 1, 1, 1}).convert(DType::F32));
  // All ones: the count itself.
  const auto ones = values(std::vector<double>(vol, 1.0), Shape{1, 1, side, side}, DType::F32, vk());
  EXPECT_EQ(
      burn::detail::to_data(run(ir::ConvWeightGrad{{1, 1}, {1, 1}, {0, 0}, {1, 1}, 1}, {ones, ones})).to_vec<float>(),
      std::vector<float>{40000.0f});
}

/// Runs `op` on copies of `inputs` on vulkan:0 and on flex; the results agree
/// exactly (ints), within the dtype's tolerance (floats), or, for f32 sums of
/// `terms` products of magnitude at most 1 that may cancel, within the
/// rounding such sums accumulate in different orders (2e-7 per term; the
/// loop cap's errors are thousands of times larger).
void agree_with_flex(const std::string& what, const ir::Op& op, const std::vector<TensorRef>& inputs,
                     std::size_t output = 0, double terms = 0) {
  SCOPED_TRACE(what);
  std::vector<TensorRef> on_vk, on_flex;
  for (const auto& t : inputs) {
    on_vk.push_back(burn::detail::to_device(t, vk()));
    on_flex.push_back(burn::detail::to_device(t, Device::flex()));
  }
  const auto got = burn::detail::to_data(run(op, on_vk, output));
  const auto want = burn::detail::to_data(run(op, on_flex, output));
  if (terms == 0) return expect_same(got, want);
  got.assert_approx_eq(want, burn::Tolerance::rel_abs(0.005, 2e-7 * terms));
}

TEST(VulkanLongLoops, WeightGradOfAFashionMnistBatch) {
  // The first conv of a small CNN at batch 64: K = 64 * 28 * 28 = 50,176.
  const ir::ConvWeightGrad op{{3, 3}, {1, 1}, {1, 1}, {1, 1}, 1};
  agree_with_flex("3x3, 1 -> 8 channels", op,
                  {rand(Shape{64, 1, 28, 28}, DType::F32, 0, 1), rand(Shape{64, 8, 28, 28}, DType::F32, -1, 1)}, 0,
                  64 * 28 * 28);
  // And the second (16 -> 32 channels on 14x14): K = 12,544, M and N several tiles.
  agree_with_flex("3x3, 16 -> 32 channels", op,
                  {rand(Shape{64, 16, 14, 14}, DType::F32, 0, 1), rand(Shape{64, 32, 14, 14}, DType::F32, -1, 1)}, 0,
                  64 * 14 * 14);
}

TEST(VulkanLongLoops, ThreeDimensionalWeightGradWithALongInnerDim) {
  // Scalar loads and a 3-D tap decode in every step: the costliest loop body.
  agree_with_flex("3x3x3 over 2 x 40^3", ir::ConvWeightGrad{{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1},
                  {rand(Shape{2, 1, 40, 40, 40}, DType::F32, 0, 1), rand(Shape{2, 2, 40, 40, 40}, DType::F32, -1, 1)},
                  0, 2 * 40 * 40 * 40);
}

TEST(VulkanLongLoops, ConvAndTransposedConvOverManyChannels) {
  // K = input channels * taps = 3,000 * 9 = 27,000.
  agree_with_flex("conv", ir::Conv{{1, 1}, {1, 1}, {1, 1}, 1, true},
                  {rand(Shape{1, 3000, 5, 5}, DType::F32, 0, 1), rand(Shape{2, 3000, 3, 3}, DType::F32, -1, 1),
                   rand(Shape{2}, DType::F32, -1, 1)},
                  0, 3000 * 9);
  agree_with_flex("conv_transpose", ir::ConvTranspose{{1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, true},
                  {rand(Shape{1, 3000, 5, 5}, DType::F32, 0, 1), rand(Shape{3000, 2, 3, 3}, DType::F32, -1, 1),
                   rand(Shape{2}, DType::F32, -1, 1)},
                  0, 3000 * 9);
}

TEST(VulkanLongLoops, GlobalAveragePoolOver300x300) {
  const std::size_t side = 300;
  const auto ones = values(std::vector<double>(2 * side * side, 1.0), Shape{2, 1, side, side}, DType::F32, vk());
  EXPECT_EQ(burn::detail::to_data(run(ir::AdaptiveAvgPool{{1, 1}}, {ones})).to_vec<float>(),
            (std::vector<float>{1, 1}));
  agree_with_flex("adaptive 1x1", ir::AdaptiveAvgPool{{1, 1}}, {rand(Shape{1, 2, side, side}, DType::F32, 0, 1)});
  agree_with_flex("adaptive 2x3", ir::AdaptiveAvgPool{{2, 3}}, {rand(Shape{1, 1, side, side}, DType::F32, 0, 1)});
  agree_with_flex("avg_pool 1-D", ir::AvgPool{{100000}, {100000}, {0}, true, false},
                  {rand(Shape{1, 2, 100000}, DType::F32, 0, 1)});
}

TEST(VulkanLongLoops, LargeWindowMaxPoolFindsTheLastMaximum) {
  // A rising ramp: each window's maximum is its last element.
  const std::size_t side = 300;
  std::vector<double> ramp(side * side);
  for (std::size_t p = 0; p < ramp.size(); ++p) ramp[p] = static_cast<double>(p);
  for (DType t : {DType::F32, DType::I32}) {
    SCOPED_TRACE(name_of(t));
    const auto x = values(ramp, Shape{1, 1, side, side}, t, vk());
    const ir::MaxPool op{{side, side}, {side, side}, {0, 0}, {1, 1}, false, true, DType::I64};
    burn::detail::to_data(run(op, {x}, 0))
        .assert_eq(burn::TensorData(std::vector<double>{89999.0}, Shape{1, 1, 1, 1}).convert(t));
    burn::detail::to_data(run(op, {x}, 1))
        .assert_eq(burn::TensorData(std::vector<double>{89999.0}, Shape{1, 1, 1, 1}).convert(DType::I64));
  }
  // Overlapping 250x250 windows with a stride of 25, against flex.
  agree_with_flex("250x250 windows", ir::MaxPool{{250, 250}, {25, 25}, {0, 0}, {1, 1}, false, true, DType::I64},
                  {rand(Shape{1, 1, side, side}, DType::F32, -1, 1)}, 1);
}

TEST(VulkanLongLoops, ScatterAddOfLongRunsOfOneIndex) {
  // 200,000 values into 3 slots, 199,990 of them into slot 1 (a histogram,
  // an embedding's padding token): one thread adds each slot's run.
  const std::size_t n = 200000;
  std::vector<double> idx(n, 1.0), vals(n);
  double want[3] = {0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 20000 == 7) idx[i] = i % 40000 == 7 ? 0.0 : 2.0;
    vals[i] = static_cast<double>(i % 9) - 4.0;
    want[static_cast<std::size_t>(idx[i])] += vals[i];
  }
  const auto t = values({10, 20, 30}, Shape{3}, DType::I32, vk());
  const auto got = run(ir::Scatter{0, ir::IndexReduce::Add},
                       {t, values(idx, Shape{n}, DType::I64, vk()), values(vals, Shape{n}, DType::I32, vk())});
  burn::detail::to_data(got).assert_eq(
      burn::TensorData(std::vector<double>{10 + want[0], 20 + want[1], 30 + want[2]}, Shape{3}).convert(DType::I32));
  // select_assign: rows of a [3, 2] table, as an embedding's gradient.
  std::vector<double> rows(2 * n);
  for (std::size_t i = 0; i < n; ++i) rows[2 * i] = vals[i], rows[2 * i + 1] = 1.0;
  const auto table = values(std::vector<double>(6, 0.0), Shape{3, 2}, DType::F32, vk());
  const auto grad = run(ir::SelectAssign{0, ir::IndexReduce::Add},
                        {table, values(idx, Shape{n}, DType::I64, vk()), values(rows, Shape{n, 2}, DType::F32, vk())});
  const double count1 = static_cast<double>(n) - 10.0;
  burn::detail::to_data(grad).assert_eq(
      burn::TensorData(std::vector<double>{want[0], 5, want[1], count1, want[2], 5}, Shape{3, 2}).convert(DType::F32));
}

}  // namespace
