#include "quant/int8_conv.hpp"

#include <algorithm>
#include <cstring>

#include <omp.h>

namespace burn::quant::kernels {

std::size_t Int8Conv2dGeometry::out_height() const {
  return (height + 2 * padding[0] - dilation[0] * (kernel_h - 1) - 1) / stride[0] + 1;
}
std::size_t Int8Conv2dGeometry::out_width() const {
  return (width + 2 * padding[1] - dilation[1] * (kernel_w - 1) - 1) / stride[1] + 1;
}

std::vector<std::shared_ptr<const Int8Weights>> prepare_int8_conv_weights(const Int8Source& weights,
                                                                          const Int8Conv2dGeometry& g,
                                                                          const std::vector<float>& scales) {
  const std::size_t group_out = g.out_channels / g.groups;
  const std::size_t k = g.channels / g.groups * g.kernel_h * g.kernel_w;
  std::vector<std::shared_ptr<const Int8Weights>> out;
  for (std::size_t group = 0; group < g.groups; ++group) {
    // Column o of the GEMM operand is output channel group * group_out + o,
    // whose weights are k consecutive values of the [out, ...] layout.
    const auto columns = [weights, group, group_out, k] {
      const std::vector<std::int8_t> all = weights();
      std::vector<std::int8_t> c(k * group_out);
      for (std::size_t o = 0; o < group_out; ++o)
        for (std::size_t l = 0; l < k; ++l) c[l * group_out + o] = all[(group * group_out + o) * k + l];
      return c;
    };
    std::vector<float> column_scales(group_out, scales[0]);
    if (scales.size() > 1)
      for (std::size_t o = 0; o < group_out; ++o) column_scales[o] = scales[group * group_out + o];
    out.push_back(prepare_int8_weights(columns, k, group_out, column_scales));
  }
  return out;
}

namespace {

/// One kernel row (channel c, row ky) of every pixel of output row oy:
/// kernel_w bytes per pixel, `k` bytes apart in `cols`. KW is the kernel
/// width where it is known at compile time (the common 3), else 0.
template <std::size_t KW>
void unfold_line(const std::int8_t* line, const Int8Conv2dGeometry& g, std::size_t out_w, std::size_t k,
                 std::int8_t* dst) {
  const std::size_t kernel_w = KW != 0 ? KW : g.kernel_w;
  const std::size_t last_kx = (kernel_w - 1) * g.dilation[1];
  for (std::size_t ox = 0; ox < out_w; ++ox, dst += k) {
    // Padded coordinates are unsigned: one left of the image wraps to a huge
    // value and fails the bound check as one past the end does.
    const std::size_t ix0 = ox * g.stride[1] - g.padding[1];
    if (g.dilation[1] == 1 && ix0 < g.width && ix0 + last_kx < g.width) {
      std::memcpy(dst, line + ix0, kernel_w);  // a fixed-size copy where KW is known
      continue;
    }
    for (std::size_t kx = 0; kx < kernel_w; ++kx) {
      const std::size_t ix = ix0 + kx * g.dilation[1];
      dst[kx] = ix < g.width ? line[ix] : std::int8_t{0};
    }
  }
}

/// Row p = (oy, ox) of `cols` holds the input values under the kernel placed
/// at output pixel p, in the weights' (channel, ky, kx) order; 0 where the
/// kernel overhangs the padded border (0 is also the quantized zero).
void unfold(const std::int8_t* x, const Int8Conv2dGeometry& g, std::size_t channels, std::int8_t* cols) {
  const std::size_t out_h = g.out_height(), out_w = g.out_width();
  const std::size_t k = channels * g.kernel_h * g.kernel_w;
  const std::size_t plane = g.height * g.width;
  for (std::size_t oy = 0; oy < out_h; ++oy)
    for (std::size_t c = 0; c < channels; ++c)
      for (std::size_t ky = 0; ky < g.kernel_h; ++ky) {
        std::int8_t* dst = cols + oy * out_w * k + (c * g.kernel_h + ky) * g.kernel_w;
        const std::size_t iy = oy * g.stride[0] + ky * g.dilation[0] - g.padding[0];
        if (iy >= g.height) {
          for (std::size_t ox = 0; ox < out_w; ++ox) std::memset(dst + ox * k, 0, g.kernel_w);
          continue;
        }
        const std::int8_t* line = x + c * plane + iy * g.width;
        if (g.kernel_w == 3) unfold_line<3>(line, g, out_w, k, dst);
        else unfold_line<0>(line, g, out_w, k, dst);
      }
}

}  // namespace

void int8_conv2d(const std::int8_t* x, std::size_t images, float x_scale, const Int8Conv2dGeometry& g,
                 const std::vector<std::shared_ptr<const Int8Weights>>& weights, const float* bias, float* out) {
  const std::size_t out_h = g.out_height(), out_w = g.out_width(), pixels = out_h * out_w;
  const std::size_t group_in = g.channels / g.groups, group_out = g.out_channels / g.groups;
  const std::size_t k = group_in * g.kernel_h * g.kernel_w;
  const std::size_t image_in = g.channels * g.height * g.width, image_out = g.out_channels * pixels;
  // Whole images per thread when there are enough of them (the GEMM then
  // runs on the calling thread); otherwise one image at a time, the GEMM
  // splitting its tiles over the threads.
  const auto threads = static_cast<std::size_t>(int8_threads());
  const auto team = static_cast<int>(images >= threads ? threads : 1);
  const auto count = static_cast<std::ptrdiff_t>(images);
#pragma omp parallel num_threads(team)
  {
    std::vector<std::int8_t> cols(pixels * k);
#pragma omp for schedule(static)
    for (std::ptrdiff_t n = 0; n < count; ++n)
      for (std::size_t group = 0; group < g.groups; ++group) {
        const auto image = static_cast<std::size_t>(n);
        unfold(x + image * image_in + group * group_in * g.height * g.width, g, group_in, cols.data());
        const Int8Output channels{out + image * image_out + group * group_out * pixels, 1, pixels,
                                  bias ? bias + group * group_out : nullptr};
        int8_matmul(cols.data(), pixels, x_scale, *weights[group], channels);
      }
  }
}

}  // namespace burn::quant::kernels
