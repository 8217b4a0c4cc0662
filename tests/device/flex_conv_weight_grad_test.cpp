// burn's AVX2 weight gradient of stride-1 convolutions
// (src/backends/flex/conv_weight_grad_avx2.hpp), called directly and
// checked against sums in double: first layers with 1-3 input channels,
// channel counts that leave partial tiles, padding wider than the kernel
// reaches, dilation, 1-D, and enough pixels for several chunks on several
// threads. Then through Device::flex()'s autodiff against Device::ndarray().
#include <burn_test.hpp>

#include <burn/module/ops.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/flex/conv_weight_grad_avx2.hpp"

#if BURN_HAS_FLEX && BURN_HAS_NDARRAY

namespace {

using namespace burn;
namespace wgrad = flex::weight_grad_avx2;

std::vector<float> signal(std::size_t n, double scale, double phase) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(scale * std::sin(0.37 * static_cast<double>(i) + phase));
  return v;
}

/// p with the output size stride 1 gives.
wgrad::Problem with_output(wgrad::Problem p) {
  p.out_h = p.in_h + 2 * p.pad_top - p.dilation_h * (p.kernel_h - 1);
  p.out_w = p.in_w + 2 * p.pad_left - p.dilation_w * (p.kernel_w - 1);
  return p;
}

/// The weight gradient in double, row-major [OC, IC, KH, KW].
std::vector<double> reference_weight_grad(const wgrad::Problem& p, const std::vector<float>& x,
                                          const std::vector<float>& g) {
  std::vector<double> dw(p.out_channels * p.in_channels * p.kernel_h * p.kernel_w);
  for (std::size_t oc = 0; oc < p.out_channels; ++oc)
    for (std::size_t ic = 0; ic < p.in_channels; ++ic)
      for (std::size_t kh = 0; kh < p.kernel_h; ++kh)
        for (std::size_t kw = 0; kw < p.kernel_w; ++kw) {
          double acc = 0;
          for (std::size_t n = 0; n < p.batch; ++n)
            for (std::size_t oh = 0; oh < p.out_h; ++oh)
              for (std::size_t ow = 0; ow < p.out_w; ++ow) {
                const auto ih =
                    static_cast<std::ptrdiff_t>(oh + kh * p.dilation_h) - static_cast<std::ptrdiff_t>(p.pad_top);
                const auto iw =
                    static_cast<std::ptrdiff_t>(ow + kw * p.dilation_w) - static_cast<std::ptrdiff_t>(p.pad_left);
                if (ih < 0 || iw < 0 || ih >= static_cast<std::ptrdiff_t>(p.in_h) ||
                    iw >= static_cast<std::ptrdiff_t>(p.in_w))
                  continue;
                acc += static_cast<double>(g[((n * p.out_channels + oc) * p.out_h + oh) * p.out_w + ow]) *
                       x[((n * p.in_channels + ic) * p.in_h + static_cast<std::size_t>(ih)) * p.in_w +
                         static_cast<std::size_t>(iw)];
              }
          dw[((oc * p.in_channels + ic) * p.kernel_h + kh) * p.kernel_w + kw] = acc;
        }
  return dw;
}

/// The kernel's dW for p against the reference: the largest error relative
/// to the largest |dW| (infinite where an entry is NaN: never written).
double weight_grad_error(const wgrad::Problem& p) {
  const auto x = signal(p.batch * p.in_channels * p.in_h * p.in_w, 1.0, 0.3);
  const auto g = signal(p.batch * p.out_channels * p.out_h * p.out_w, 0.5, 1.1);
  std::vector<float> dw(p.out_channels * p.in_channels * p.kernel_h * p.kernel_w, std::nanf(""));
  std::vector<float> workspace(wgrad::workspace_floats(p), std::nanf(""));
  wgrad::weight_grad(p, x.data(), g.data(), dw.data(), workspace.data());
  const auto want = reference_weight_grad(p, x, g);
  double largest = 0, err = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(dw[i])) return INFINITY;
    largest = std::max(largest, std::abs(want[i]));
    err = std::max(err, std::abs(want[i] - dw[i]));
  }
  return err / largest;
}

TEST(FlexConvWeightGrad, MatchesADoubleReference) {
  if (!wgrad::available()) GTEST_SKIP() << "this CPU lacks AVX2 or FMA, which the kernel needs";
  struct Case {
    const char* what;
    wgrad::Problem p;  // output size derived
  };
  const Case cases[] = {
      {"a first layer: 1 input channel, 32 output channels, 3x3 pad 1", {2, 1, 32, 9, 11, 0, 0, 3, 3, 1, 1}},
      {"3 input channels (columns 27: tiles of 6 and one of 3), 20 output channels (a partial tile)",
       {3, 3, 20, 6, 17, 0, 0, 3, 3, 1, 1}},
      {"no padding, 5 output channels", {2, 5, 5, 7, 8, 0, 0, 3, 3, 0, 0}},
      {"5x5 with padding 2 and dilation 2 (rows and columns of zeros around the input)",
       {1, 3, 16, 9, 9, 0, 0, 5, 5, 2, 2, 2, 2}},
      {"padding wider than the kernel reaches", {1, 2, 16, 4, 5, 0, 0, 3, 3, 3, 3}},
      {"1x1, 8 in and 33 out (three channel groups, the last of one)", {2, 8, 33, 13, 8, 0, 0, 1, 1, 0, 0}},
      {"1-D, kernel 3, padding 1", {2, 4, 6, 1, 40, 0, 0, 1, 3, 0, 1}},
      // 4 x 23 x 19 = 1,748 pixels: seven chunks of 256 and a partial one,
      // split over the pool's threads (64 tiles of 16 x 6).
      {"several chunks and threads, rows crossing chunk ends", {4, 32, 64, 23, 19, 0, 0, 3, 3, 1, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const wgrad::Problem p = with_output(c.p);
    ASSERT_TRUE(wgrad::takes(p));
    // f32 sums of up to 1,748 products of values up to 1 in magnitude.
    EXPECT_LT(weight_grad_error(p), 1e-5);
  }
}

TEST(FlexConvWeightGrad, AnInfinityReachesOnlyTheTapsThatReadIt) {
  if (!wgrad::available()) GTEST_SKIP() << "this CPU lacks AVX2 or FMA, which the kernel needs";
  // x[0, 0, 0, 0] = inf. With padding 1 a 3x3 kernel reads it through taps
  // (kh, kw) <= (1, 1) only (output row 1 - kh, column 1 - kw), each times
  // a gradient of 1: those four taps are infinite, the other five finite.
  // Channels padded to a full tile of 16 multiply it by 0 (NaN) in lanes
  // that must never reach dW.
  const wgrad::Problem p = with_output({1, 1, 3, 5, 5, 0, 0, 3, 3, 1, 1});
  auto x = signal(25, 1.0, 0.3);
  x[0] = std::numeric_limits<float>::infinity();
  std::vector<float> g(3 * 25, 1.0f), dw(27), workspace(wgrad::workspace_floats(p));
  wgrad::weight_grad(p, x.data(), g.data(), dw.data(), workspace.data());
  for (std::size_t oc = 0; oc < 3; ++oc)
    for (std::size_t kh = 0; kh < 3; ++kh)
      for (std::size_t kw = 0; kw < 3; ++kw) {
        const float v = dw[oc * 9 + kh * 3 + kw];
        if (kh <= 1 && kw <= 1) {
          EXPECT_EQ(v, std::numeric_limits<float>::infinity()) << oc << " " << kh << " " << kw;
        } else {
          EXPECT_TRUE(std::isfinite(v)) << oc << " " << kh << " " << kw << ": " << v;
        }
      }
}

TEST(FlexConvWeightGrad, AutodiffOnFlexMatchesNdarray) {
  // Through the device: the stride-1 layers take burn's kernel on an AVX2
  // CPU (row-major x and g), the stride-2 one oneDNN's; every CPU checks the
  // gradients either way.
  struct Case {
    const char* what;
    Shape x, w;
    module::ConvOptions<2> options;
  };
  const Case cases[] = {
      {"first layer", {8, 1, 14, 14}, {32, 1, 3, 3}, {{1, 1}, {1, 1}, {1, 1}}},
      {"second layer", {8, 32, 7, 7}, {64, 32, 3, 3}, {{1, 1}, {1, 1}, {1, 1}}},
      {"dilated, no padding", {2, 16, 12, 10}, {24, 16, 3, 3}, {{1, 1}, {0, 0}, {2, 2}}},
      {"stride 2", {2, 16, 12, 10}, {24, 16, 3, 3}, {{2, 2}, {1, 1}, {1, 1}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto x_values = signal(c.x.num_elements(), 1.0, 0.4), w_values = signal(c.w.num_elements(), 0.2, 0.8);
    auto gradient = [&](const Device& device) {
      const Device ad = device.autodiff();
      const auto x = Tensor<4>::from_data(TensorData(x_values, c.x), ad);
      const auto w = Tensor<4>::from_data(TensorData(w_values, c.w), ad).require_grad();
      const auto y = module::conv2d(x, w, std::nullopt, c.options);
      // A loss whose gradient differs per output element.
      const auto weights = Tensor<4>::from_data(TensorData(signal(y.shape().num_elements(), 1.0, 2.0), y.shape()), ad);
      const auto grads = (y * weights).sum().backward();
      return w.grad(grads)->to_data();
    };
    // Two f32 sums of up to 1,568 products of magnitude up to 1, in
    // different orders.
    gradient(Device::flex()).assert_approx_eq(gradient(Device::ndarray()), Tolerance::rel_abs(1e-4, 5e-4));
  }
}

TEST(FlexConvWeightGrad, HalfPrecisionGradientsSumInF32) {
  // f16 and bf16 weight gradients on flex widen x and dy to f32 and take
  // the same kernel: against an f32 gradient on ndarray from the same
  // rounded values, only the result's final rounding differs.
  const Shape xs{8, 16, 9, 9}, ws{32, 16, 3, 3};
  const module::ConvOptions<2> pad1{{1, 1}, {1, 1}, {1, 1}};
  const auto x_values = signal(xs.num_elements(), 1.0, 0.4), w_values = signal(ws.num_elements(), 0.2, 0.8);
  for (const DType half : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(dtype_name(half));
    auto gradient = [&](const Device& device, DType dtype) {
      const Device ad = device.autodiff();
      const auto rounded = [&](const std::vector<float>& v, const Shape& shape) {
        return Tensor<4>::from_data(TensorData(v, shape), ad).cast(half).cast(dtype).detach();
      };
      const auto x = rounded(x_values, xs);
      const auto w = rounded(w_values, ws).require_grad();
      const auto y = module::conv2d(x, w, std::nullopt, pad1);
      const auto weights = rounded(signal(y.shape().num_elements(), 1.0, 2.0), y.shape());
      const auto grads = (y * weights).sum().backward();
      return w.grad(grads)->cast(DType::F32).to_data();
    };
    // |dW| reaches about 60: a unit in the last place of f16 is 0.03 there,
    // of bf16 0.25.
    const double ulp = half == DType::F16 ? 1.0 / 1024 : 1.0 / 128;
    gradient(Device::flex(), half)
        .assert_approx_eq(gradient(Device::ndarray(), DType::F32), Tolerance::rel_abs(ulp, ulp));
  }
}

}  // namespace

#endif
