// 2-D resizing of [N, C, H, W] with PyTorch's source-coordinate rules
// (upsample_nearest2d, upsample_bilinear2d, upsample_bicubic2d with
// A = -0.75 and clamped borders). Each output pixel is a separable weighted
// sum of 1, 2 or 4 input rows and columns whose indices and weights are
// computed once per output row / column.
#include <algorithm>
#include <array>
#include <cmath>

#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::flex {
namespace {

using host::CpuTensor;

template <class C>
struct Taps {
  std::size_t count = 1;  // taps per output position
  std::vector<std::array<std::size_t, 4>> index;
  std::vector<std::array<C, 4>> weight;
};

/// PyTorch's area_pixel_compute_source_index.
template <class C>
C source_index(std::size_t dst, std::size_t in, std::size_t out, bool align_corners, bool cubic) {
  if (align_corners) {
    const C scale = out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0);
    return scale * static_cast<C>(dst);
  }
  const C scale = static_cast<C>(in) / static_cast<C>(out);
  const C src = scale * (static_cast<C>(dst) + C(0.5)) - C(0.5);
  return (!cubic && src < C(0)) ? C(0) : src;
}

template <class C>
Taps<C> axis_taps(ir::InterpolateMode mode, std::size_t in, std::size_t out, bool align_corners) {
  Taps<C> t;
  t.index.resize(out);
  t.weight.resize(out);
  const auto last = static_cast<std::int64_t>(in) - 1;
  for (std::size_t o = 0; o < out; ++o) {
    auto& idx = t.index[o];
    auto& w = t.weight[o];
    switch (mode) {
      case ir::InterpolateMode::Nearest:
        t.count = 1;
        idx[0] = std::min(o * in / out, in - 1);
        w[0] = C(1);
        break;
      case ir::InterpolateMode::Bilinear: {
        t.count = 2;
        const C src = source_index<C>(o, in, out, align_corners, false);
        const auto i0 = static_cast<std::int64_t>(src);  // src >= 0, so this is floor
        const C l1 = std::clamp(src - static_cast<C>(i0), C(0), C(1));
        idx[0] = static_cast<std::size_t>(std::min(i0, last));
        idx[1] = static_cast<std::size_t>(std::min(i0 + (i0 < last ? 1 : 0), last));
        w[0] = C(1) - l1;
        w[1] = l1;
        break;
      }
      case ir::InterpolateMode::Bicubic: {
        t.count = 4;
        const C src = source_index<C>(o, in, out, align_corners, true);
        const C fl = std::floor(src);
        const auto i = static_cast<std::int64_t>(fl);
        const C x = src - fl;
        constexpr C A = C(-0.75);
        const auto near = [&](C d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };       // |d| <= 1
        const auto far = [&](C d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };  // 1 < |d| < 2
        w = {far(x + 1), near(x), near(1 - x), far(2 - x)};
        for (std::int64_t k = 0; k < 4; ++k)
          idx[k] = static_cast<std::size_t>(std::clamp<std::int64_t>(i - 1 + k, 0, last));
        break;
      }
    }
  }
  return t;
}

template <class T>
void resize(const CpuTensor& x, CpuTensor& y, const ir::Interpolate& op) {
  using C = compute_t<T>;
  const std::size_t planes = x.shape[0] * x.shape[1];
  const std::size_t h_in = x.shape[2], w_in = x.shape[3], h_out = y.shape[2], w_out = y.shape[3];
  const Taps<C> th = axis_taps<C>(op.mode, h_in, h_out, op.align_corners);
  const Taps<C> tw = axis_taps<C>(op.mode, w_in, w_out, op.align_corners);
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  parallel_for(
      planes * h_out,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t row = begin; row < end; ++row) {
          const std::size_t plane = row / h_out, oh = row % h_out;
          const T* xp = src + plane * h_in * w_in;
          T* yrow = dst + row * w_out;
          for (std::size_t ow = 0; ow < w_out; ++ow) {
            C v = 0;
            for (std::size_t i = 0; i < th.count; ++i) {
              const T* xr = xp + th.index[oh][i] * w_in;
              C across = 0;
              for (std::size_t j = 0; j < tw.count; ++j)
                across += tw.weight[ow][j] * static_cast<C>(xr[tw.index[ow][j]]);
              v += th.weight[oh][i] * across;
            }
            yrow[ow] = convert_element<T>(v);
          }
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, w_out * th.count * tw.count)));
}

}  // namespace

Result kernel(const Context& ctx, const ir::Interpolate& op, Inputs in, Outputs out) {
  auto x = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive));
  auto y = ctx.output(out[0]);
  if (y->num_elements() == 0) return {y};
  visit_float_dtype("interpolate", x->dtype, [&]<class T>() { resize<T>(*x, *y, op); });
  return {y};
}

}  // namespace burn::flex
