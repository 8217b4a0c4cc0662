// 2-D resizing of [N, C, H, W] with PyTorch's nearest, bilinear and bicubic
// source-coordinate rules (upsample_nearest2d, upsample_bilinear2d,
// upsample_bicubic2d with A = -0.75), computed in double.
#include <algorithm>
#include <array>
#include <cmath>

#include "backends/ndarray/module_util.hpp"

namespace burn::ndarray {
namespace {

// The continuous source coordinate of output index `dst` along one axis.
double source_coord(std::size_t dst, std::size_t in, std::size_t out, bool align_corners, bool cubic) {
  if (align_corners) {
    const double scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    return scale * static_cast<double>(dst);
  }
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double src = scale * (static_cast<double>(dst) + 0.5) - 0.5;
  // Bilinear clamps the half-pixel offset at the left border; bicubic keeps it
  // and clamps its taps instead.
  return !cubic && src < 0 ? 0.0 : src;
}

// Two taps and their weights along one axis (bilinear).
struct Linear {
  std::size_t i0, i1;
  double w0, w1;
};
Linear linear_taps(std::size_t dst, std::size_t in, std::size_t out, bool align_corners) {
  const double src = source_coord(dst, in, out, align_corners, false);
  const auto i0 = std::min(static_cast<std::size_t>(src), in - 1);
  const std::size_t i1 = i0 + 1 < in ? i0 + 1 : i0;
  const double frac = src - static_cast<double>(i0);
  return {i0, i1, 1.0 - frac, frac};
}

// Four clamped taps and their cubic-convolution weights along one axis.
struct Cubic {
  std::array<std::size_t, 4> idx;
  std::array<double, 4> w;
};
Cubic cubic_taps(std::size_t dst, std::size_t in, std::size_t out, bool align_corners) {
  constexpr double A = -0.75;
  // Keys' kernel for |x| <= 1 and for 1 < |x| < 2.
  const auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  const auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  const double src = source_coord(dst, in, out, align_corners, true);
  const double base = std::floor(src);
  const double t = src - base;
  Cubic c{};
  c.w = {far(t + 1), near(t), near(1 - t), far(2 - t)};
  for (std::size_t k = 0; k < 4; ++k) {
    const auto pos = static_cast<std::int64_t>(base) - 1 + static_cast<std::int64_t>(k);
    c.idx[k] = static_cast<std::size_t>(std::clamp<std::int64_t>(pos, 0, static_cast<std::int64_t>(in) - 1));
  }
  return c;
}

// floor(dst * in / out) in exact integer arithmetic, kept inside the input.
std::size_t nearest_index(std::size_t dst, std::size_t in, std::size_t out) { return std::min(dst * in / out, in - 1); }

}  // namespace

Result kernel(const Context& ctx, const ir::Interpolate& op, Inputs in, Outputs out) {
  const auto& xs = in[0].spec.shape.dims();
  const auto x = detail::read_doubles(in[0]);
  const std::size_t planes = xs[0] * xs[1], h_in = xs[2], w_in = xs[3];
  const std::size_t h_out = op.output_size[0], w_out = op.output_size[1];
  std::vector<double> y(planes * h_out * w_out, 0.0);
  for (std::size_t p = 0; p < planes; ++p) {
    const double* src = x.data() + p * h_in * w_in;
    double* dst = y.data() + p * h_out * w_out;
    const auto at = [&](std::size_t h, std::size_t w) { return src[h * w_in + w]; };
    for (std::size_t oh = 0; oh < h_out; ++oh)
      for (std::size_t ow = 0; ow < w_out; ++ow) {
        double v = 0.0;
        switch (op.mode) {
          case ir::InterpolateMode::Nearest:
            v = at(nearest_index(oh, h_in, h_out), nearest_index(ow, w_in, w_out));
            break;
          case ir::InterpolateMode::Bilinear: {
            const Linear a = linear_taps(oh, h_in, h_out, op.align_corners);
            const Linear b = linear_taps(ow, w_in, w_out, op.align_corners);
            v = a.w0 * (b.w0 * at(a.i0, b.i0) + b.w1 * at(a.i0, b.i1)) +
                a.w1 * (b.w0 * at(a.i1, b.i0) + b.w1 * at(a.i1, b.i1));
            break;
          }
          case ir::InterpolateMode::Bicubic: {
            const Cubic a = cubic_taps(oh, h_in, h_out, op.align_corners);
            const Cubic b = cubic_taps(ow, w_in, w_out, op.align_corners);
            // Interpolate each of the four rows along W, then the results along H.
            for (std::size_t i = 0; i < 4; ++i) {
              double row = 0.0;
              for (std::size_t j = 0; j < 4; ++j) row += b.w[j] * at(a.idx[i], b.idx[j]);
              v += a.w[i] * row;
            }
            break;
          }
        }
        dst[oh * w_out + ow] = v;
      }
  }
  return {detail::write_doubles(ctx, out[0], y)};
}

}  // namespace burn::ndarray
