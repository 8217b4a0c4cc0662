// burn's AVX2 Winograd F(4x4, 3x3) convolution (src/backends/flex/winograd.hpp),
// called directly and checked against a convolution computed in double:
// edge tiles cut by the output size, padding on one axis only, several
// chunks of tiles with a partial register block, no bias. Then through
// Device::flex() at Float32Precision::High, where this CPU has AVX2 and
// oneDNN has no Winograd kernel of its own.
#include <burn_test.hpp>

#include <burn/module/ops.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/flex/layout_elementwise.hpp"
#include "backends/flex/packed_weights.hpp"
#include "backends/flex/winograd.hpp"
#include "backends/host/cpu_tensor.hpp"

#if BURN_HAS_FLEX

namespace {

using namespace burn;
namespace wg = flex::winograd;

std::vector<float> wave(std::size_t n, double scale, double phase) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(scale * std::sin(0.37 * static_cast<double>(i) + phase));
  return v;
}

/// Row-major [N, C, H, W] to nChw8c (C a multiple of 8) and back.
std::vector<float> blocked8_copy(const std::vector<float>& x, std::size_t n, std::size_t c, std::size_t hw,
                                 bool to_blocked) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t ch = 0; ch < c; ++ch)
      for (std::size_t s = 0; s < hw; ++s) {
        const std::size_t plain = (i * c + ch) * hw + s, blocked = ((i * (c / 8) + ch / 8) * hw + s) * 8 + ch % 8;
        if (to_blocked) {
          out[blocked] = x[plain];
        } else {
          out[plain] = x[blocked];
        }
      }
  return out;
}
std::vector<float> to_blocked8(const std::vector<float>& x, std::size_t n, std::size_t c, std::size_t hw) {
  return blocked8_copy(x, n, c, hw, true);
}
std::vector<float> from_blocked8(const std::vector<float>& x, std::size_t n, std::size_t c, std::size_t hw) {
  return blocked8_copy(x, n, c, hw, false);
}

/// The convolution in double, row-major in and out.
std::vector<double> reference(const wg::Problem& p, const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>* bias) {
  std::vector<double> y(p.batch * p.out_channels * p.out_h * p.out_w);
  for (std::size_t n = 0; n < p.batch; ++n)
    for (std::size_t oc = 0; oc < p.out_channels; ++oc)
      for (std::size_t oy = 0; oy < p.out_h; ++oy)
        for (std::size_t ox = 0; ox < p.out_w; ++ox) {
          double acc = bias ? (*bias)[oc] : 0.0;
          for (std::size_t ic = 0; ic < p.in_channels; ++ic)
            for (std::size_t ky = 0; ky < 3; ++ky)
              for (std::size_t kx = 0; kx < 3; ++kx) {
                const auto iy = static_cast<std::ptrdiff_t>(oy + ky) - static_cast<std::ptrdiff_t>(p.pad_top);
                const auto ix = static_cast<std::ptrdiff_t>(ox + kx) - static_cast<std::ptrdiff_t>(p.pad_left);
                if (iy < 0 || ix < 0 || iy >= static_cast<std::ptrdiff_t>(p.in_h) ||
                    ix >= static_cast<std::ptrdiff_t>(p.in_w))
                  continue;
                acc += static_cast<double>(w[((oc * p.in_channels + ic) * 3 + ky) * 3 + kx]) *
                       x[((n * p.in_channels + ic) * p.in_h + static_cast<std::size_t>(iy)) * p.in_w +
                         static_cast<std::size_t>(ix)];
              }
          y[((n * p.out_channels + oc) * p.out_h + oy) * p.out_w + ox] = acc;
        }
  return y;
}

/// The kernel's output for `p` against the double reference: the largest
/// error relative to the largest output.
double relative_error(const wg::Problem& p, bool with_bias) {
  const auto x = wave(p.batch * p.in_channels * p.in_h * p.in_w, 1.0, 0.3);
  const auto w = wave(p.out_channels * p.in_channels * 9, 0.1, 0.9);
  const auto bias = wave(p.out_channels, 0.5, 1.7);
  std::vector<float> u(wg::transformed_weight_floats(p.in_channels, p.out_channels));
  wg::transform_weights(w.data(), p.in_channels, p.out_channels, u.data());
  std::vector<float> y(p.batch * p.out_channels * p.out_h * p.out_w, std::nanf(""));
  std::vector<float> workspace(wg::workspace_floats(p));
  const auto xb = to_blocked8(x, p.batch, p.in_channels, p.in_h * p.in_w);
  wg::convolve(p, xb.data(), u.data(), with_bias ? bias.data() : nullptr, y.data(), workspace.data());
  const auto got = from_blocked8(y, p.batch, p.out_channels, p.out_h * p.out_w);
  const auto want = reference(p, x, w, with_bias ? &bias : nullptr);
  double largest = 0, err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    largest = std::max(largest, std::abs(want[i]));
    err = std::max(err, std::abs(want[i] - got[i]));  // a NaN (an output never written) fails below
    if (std::isnan(got[i])) return INFINITY;
  }
  return err / largest;
}

// Winograd's rounding: measured 1-2e-5 of the largest output (the direct
// kernel's: about 1e-6), growing with the channel count.
constexpr double kWinogradError = 1e-4;

TEST(FlexWinograd, MatchesADoubleReferenceForEveryTileShape) {
  if (!wg::available()) GTEST_SKIP() << "this CPU lacks AVX2 or FMA, which the Winograd kernels need";
  struct Case {
    const char* what;
    wg::Problem p;
    bool bias;
  };
  const Case cases[] = {
      {"9x9 output: the last row and column of tiles cut to one pixel", {2, 8, 16, 9, 9, 9, 9, 1, 1}, true},
      {"no padding: 10x7 in, 8x5 out", {2, 16, 32, 10, 7, 8, 5, 0, 0}, false},
      {"padding on rows only: 6x9 in, 8x7 out", {3, 8, 16, 6, 9, 8, 7, 2, 0}, true},
      // 512 output channels: chunks of 28 tiles, so 50 tiles run as two
      // chunks, each ending in a block of 4 rows.
      {"two chunks with partial register blocks", {2, 8, 512, 20, 20, 20, 20, 1, 1}, true},
      {"64 channels in and out", {1, 64, 64, 12, 12, 12, 12, 1, 1}, true},
      // Two threads and 75 tiles: four chunks of 19, two per thread, each
      // thread running all three phases of its own in its own workspace.
      {"threads with chunks of their own", {3, 8, 512, 20, 20, 20, 20, 1, 1, 2}, true},
      {"threads sharing the phases of one chunk", {1, 64, 64, 12, 12, 12, 12, 1, 1, 2}, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_TRUE(wg::takes(c.p));
    const double err = relative_error(c.p, c.bias);
    EXPECT_LT(err, kWinogradError);
    EXPECT_GT(err, 0.0) << "exact to the last bit: not Winograd's rounding";
  }
}

TEST(FlexWinograd, AppliesTheFusedEpilogueToEachOutput) {
  if (!wg::available()) GTEST_SKIP() << "this CPU lacks AVX2 or FMA, which the Winograd kernels need";
  // The cpu device's epilogues: a per-channel affine map and relu, a
  // residual add (a tensor in the output's layout) and relu, and a scalar
  // subtraction and division.
  const wg::Problem p{2, 16, 32, 9, 11, 9, 11, 1, 1};
  const std::size_t hw = p.out_h * p.out_w, count = p.batch * p.out_channels * hw;
  const auto x = wave(p.batch * p.in_channels * p.in_h * p.in_w, 1.0, 0.3);
  const auto w = wave(p.out_channels * p.in_channels * 9, 0.1, 0.9);
  const auto scale = wave(p.out_channels, 1.0, 0.2), shift = wave(p.out_channels, 0.5, 2.2);
  const auto residual = wave(count, 1.0, 1.1);
  const auto residual_blocked = to_blocked8(residual, p.batch, p.out_channels, hw);
  const float half = 0.5f, four = 4.0f;
  using Step = wg::EpilogueStep;
  const std::vector<Step> steps{{Step::Op::Mul, Step::Operand::PerChannel, scale.data()},
                                {Step::Op::Add, Step::Operand::PerChannel, shift.data()},
                                {Step::Op::Relu, Step::Operand::None, nullptr},
                                {Step::Op::Add, Step::Operand::Full, residual_blocked.data()},
                                {Step::Op::Sub, Step::Operand::Scalar, &half},
                                {Step::Op::Div, Step::Operand::Scalar, &four},
                                {Step::Op::Relu, Step::Operand::None, nullptr}};
  std::vector<float> u(wg::transformed_weight_floats(p.in_channels, p.out_channels));
  wg::transform_weights(w.data(), p.in_channels, p.out_channels, u.data());
  std::vector<float> y(count, std::nanf("")), workspace(wg::workspace_floats(p));
  const auto xb = to_blocked8(x, p.batch, p.in_channels, p.in_h * p.in_w);
  wg::convolve(p, xb.data(), u.data(), nullptr, y.data(), workspace.data(), steps);
  const auto got = from_blocked8(y, p.batch, p.out_channels, hw);
  auto want = reference(p, x, w, nullptr);
  double largest = 0, err = 0;
  std::size_t zeros = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t c = (i / hw) % p.out_channels;
    double v = std::max(0.0, want[i] * scale[c] + shift[c]);
    v = std::max(0.0, (v + residual[i] - 0.5) / 4.0);
    zeros += v == 0.0;
    largest = std::max(largest, v);
    err = std::max(err, std::isnan(got[i]) ? INFINITY : std::abs(v - got[i]));
  }
  EXPECT_LT(err / largest, kWinogradError);
  EXPECT_GT(zeros, count / 10) << "the relu steps cut nothing: a weak check";
  EXPECT_LT(zeros, count - count / 10);
}

TEST(FlexWinograd, TakesOnlyWhatItComputes) {
  EXPECT_FALSE(wg::takes({1, 12, 16, 8, 8, 8, 8, 1, 1})) << "input channels not a multiple of 8";
  EXPECT_FALSE(wg::takes({1, 16, 24, 8, 8, 8, 8, 1, 1})) << "output channels not a multiple of 16";
  EXPECT_FALSE(wg::takes({1, 512, 512, 7, 7, 7, 7, 1, 1})) << "4 tiles: faster direct";
  EXPECT_TRUE(wg::takes({1, 256, 256, 14, 14, 14, 14, 1, 1}));
}

TEST(FlexWinograd, HighPrecisionConvolutionsUseItWhereOneDnnHasNone) {
  if (!wg::available()) GTEST_SKIP() << "this CPU lacks AVX2 or FMA, which the Winograd kernels need";
  const Device flex = Device::flex();
  const Shape xs{2, 32, 13, 13};
  const auto x = Tensor<4>::from_data(TensorData(wave(xs.num_elements(), 1.0, 0.1), xs), flex);
  const auto w1 = Tensor<4>::from_data(TensorData(wave(64 * 32 * 9, 0.1, 0.2), {64, 32, 3, 3}), flex);
  const auto w2 = Tensor<4>::from_data(TensorData(wave(64 * 64 * 9, 0.1, 0.7), {64, 64, 3, 3}), flex);
  const auto b = Tensor<1>::from_data(TensorData(wave(64, 0.3, 0.4), {64}), flex);
  const module::ConvOptions<2> pad1{{1, 1}, {1, 1}, {1, 1}};
  // Two convolutions: the first reads row-major data, the second the
  // first's output in whatever layout it was left.
  auto run = [&] {
    const auto h = module::conv2d(x, w1, b, pad1);
    return std::pair{h, module::conv2d(h, w2, std::nullopt, pad1)};
  };
  const auto [h_direct, y_direct] = run();
  // An AVX2 CPU without AVX-512: the direct kernels write nChw8c, and
  // oneDNN has no Winograd kernel (read before to_data makes them plain).
  const bool avx2_only =
      flex::dnn::activation_layout(host::as_cpu(h_direct.ref()->primitive)) == flex::dnn::ActivationLayout::Blocked8;
  flex.set_float32_precision(Float32Precision::High);
  flex::dnn::clear_packed_weights();
  const auto first = run();
  const auto [h, y] = run();  // the weights' second use: their transform is kept
  const std::size_t kept = flex::dnn::packed_weights_bytes();
  flex.set_float32_precision(Float32Precision::Highest);
  const Tolerance tol = Tolerance::rel_abs(kWinogradError, kWinogradError);
  for (const auto& [got, want] : {std::pair{h, h_direct}, std::pair{y, y_direct}, std::pair{first.second, y_direct}}) {
    const TensorData a = got.to_data(), e = want.to_data();
    a.assert_approx_eq(e, tol);
    // burn's Winograd ran: it rounds differently from the direct kernel.
    if (avx2_only) {
      EXPECT_NE(a.to_vec<float>(), e.to_vec<float>()) << "High computed bit for bit as Highest";
    }
  }
  if (avx2_only) {
    EXPECT_GE(kept, (32 + 64) * 64 * 36 * sizeof(float)) << "both transformed weight sets are kept";
  }
}

}  // namespace

#endif
