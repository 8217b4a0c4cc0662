// N-d convolution and transposed convolution (channels-first), computed in
// double with plain loops over every output (conv) or input (transposed conv)
// position and every kernel tap.
#include "backends/ndarray/module_util.hpp"

namespace burn::ndarray {
namespace {

using detail::all_indices;
using detail::next_index;
using detail::volume;
using Index = std::vector<std::size_t>;

// The row-major flat offset of position `base[d] + tap[d] * dilation[d] -
// padding[d]` inside `extent`, or false when it falls outside (in padding).
bool tap_offset(const Index& base, const std::vector<std::size_t>& stride, const Index& tap,
                const std::vector<std::size_t>& dilation, const std::vector<std::size_t>& padding, const Index& extent,
                std::size_t& offset) {
  offset = 0;
  for (std::size_t d = 0; d < extent.size(); ++d) {
    const auto pos =
        static_cast<std::int64_t>(base[d] * stride[d] + tap[d] * dilation[d]) - static_cast<std::int64_t>(padding[d]);
    if (pos < 0 || pos >= static_cast<std::int64_t>(extent[d])) return false;
    offset = offset * extent[d] + static_cast<std::size_t>(pos);
  }
  return true;
}

Index spatial(const std::vector<std::size_t>& shape) { return Index(shape.begin() + 2, shape.end()); }

std::vector<double> bias_or_zeros(bool has_bias, Inputs in, std::size_t channels) {
  return has_bias ? detail::read_doubles(in[2]) : std::vector<double>(channels, 0.0);
}

}  // namespace

Result kernel(const Context& ctx, const ir::Conv& op, Inputs in, Outputs out) {
  const auto& xs = in[0].spec.shape.dims();
  const auto& ws = in[1].spec.shape.dims();
  const auto& os = out[0].shape.dims();
  const auto x = detail::read_doubles(in[0]);
  const auto w = detail::read_doubles(in[1]);
  const std::size_t batch = xs[0], c_in = xs[1], c_out = os[1];
  const std::size_t cin_g = c_in / op.groups, cout_g = c_out / op.groups;
  const auto bias = bias_or_zeros(op.has_bias, in, c_out);
  const Index in_extent = spatial(xs), out_extent = spatial(os), kernel_extent = spatial(ws);
  const std::size_t in_vol = volume(in_extent), out_vol = volume(out_extent), k_vol = volume(kernel_extent);
  const auto taps = all_indices(kernel_extent);

  std::vector<double> y(volume(os), 0.0);
  if (!y.empty()) {
    for (std::size_t n = 0; n < batch; ++n)
      for (std::size_t co = 0; co < c_out; ++co) {
        const std::size_t g = co / cout_g;
        Index o(out_extent.size(), 0);
        std::size_t o_flat = 0;
        do {
          double acc = bias[co];
          for (std::size_t ci = 0; ci < cin_g; ++ci) {
            const double* xc = x.data() + (n * c_in + g * cin_g + ci) * in_vol;
            const double* wc = w.data() + (co * cin_g + ci) * k_vol;
            for (std::size_t t = 0; t < taps.size(); ++t) {
              std::size_t off = 0;
              if (tap_offset(o, op.stride, taps[t], op.dilation, op.padding, in_extent, off)) acc += xc[off] * wc[t];
            }
          }
          y[(n * c_out + co) * out_vol + o_flat++] = acc;
        } while (next_index(o, out_extent));
      }
  }
  return {detail::write_doubles(ctx, out[0], y)};
}

// The gradient-of-conv formulation: every input element scatters itself times
// the kernel into the output at stride spacing; `padding` crops the full
// result on both sides and `padding_out` adds positions at the end (holding
// the bias plus whatever taps land there).
Result kernel(const Context& ctx, const ir::ConvTranspose& op, Inputs in, Outputs out) {
  const auto& xs = in[0].spec.shape.dims();
  const auto& ws = in[1].spec.shape.dims();
  const auto& os = out[0].shape.dims();
  const auto x = detail::read_doubles(in[0]);
  const auto w = detail::read_doubles(in[1]);
  const std::size_t batch = xs[0], c_in = xs[1], c_out = os[1];
  const std::size_t cin_g = c_in / op.groups, cout_g = c_out / op.groups;
  const auto bias = bias_or_zeros(op.has_bias, in, c_out);
  const Index in_extent = spatial(xs), out_extent = spatial(os), kernel_extent = spatial(ws);
  const std::size_t in_vol = volume(in_extent), out_vol = volume(out_extent), k_vol = volume(kernel_extent);
  const auto taps = all_indices(kernel_extent);

  std::vector<double> y(volume(os), 0.0);
  for (std::size_t n = 0; n < batch; ++n)
    for (std::size_t co = 0; co < c_out; ++co)
      for (std::size_t i = 0; i < out_vol; ++i) y[(n * c_out + co) * out_vol + i] = bias[co];
  if (!y.empty() && in_vol > 0) {
    for (std::size_t n = 0; n < batch; ++n)
      for (std::size_t ci = 0; ci < c_in; ++ci) {
        const std::size_t g = ci / cin_g;
        const double* xc = x.data() + (n * c_in + ci) * in_vol;
        Index pos(in_extent.size(), 0);
        std::size_t i_flat = 0;
        do {
          const double xv = xc[i_flat++];
          for (std::size_t co = 0; co < cout_g; ++co) {
            const double* wc = w.data() + (ci * cout_g + co) * k_vol;
            double* yc = y.data() + (n * c_out + g * cout_g + co) * out_vol;
            for (std::size_t t = 0; t < taps.size(); ++t) {
              std::size_t off = 0;
              if (tap_offset(pos, op.stride, taps[t], op.dilation, op.padding, out_extent, off)) yc[off] += xv * wc[t];
            }
          }
        } while (next_index(pos, in_extent));
      }
  }
  return {detail::write_doubles(ctx, out[0], y)};
}

}  // namespace burn::ndarray
