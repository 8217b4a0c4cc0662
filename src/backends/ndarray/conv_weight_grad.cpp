// The weight gradient of convolution, straight from its definition:
//   dW[co, ci, tap] = sum_n sum_o grad[n, co, o] * x[n, group(co) * C_in/G + ci, o * s + tap * d - p].
#include "backends/ndarray/module_util.hpp"

namespace burn::ndarray {

Result kernel(const Context& ctx, const ir::ConvWeightGrad& op, Inputs in, Outputs out) {
  using detail::next_index;
  using detail::volume;
  using Index = std::vector<std::size_t>;
  const auto& xs = in[0].spec.shape.dims();
  const auto& gs = in[1].spec.shape.dims();
  const auto x = detail::read_doubles(in[0]);
  const auto g = detail::read_doubles(in[1]);
  const std::size_t batch = xs[0], c_in = xs[1], c_out = gs[1];
  const std::size_t cin_g = c_in / op.groups, cout_g = c_out / op.groups;
  const Index in_extent(xs.begin() + 2, xs.end()), out_extent(gs.begin() + 2, gs.end());
  const std::size_t in_vol = volume(in_extent), out_vol = volume(out_extent), k_vol = volume(op.kernel);
  const auto taps = detail::all_indices(op.kernel);

  std::vector<double> dw(c_out * cin_g * k_vol, 0.0);
  if (out_vol != 0 && in_vol != 0) {
    for (std::size_t co = 0; co < c_out; ++co)
      for (std::size_t ci = 0; ci < cin_g; ++ci)
        for (std::size_t t = 0; t < taps.size(); ++t) {
          double acc = 0.0;
          for (std::size_t n = 0; n < batch; ++n) {
            const double* xc = x.data() + (n * c_in + (co / cout_g) * cin_g + ci) * in_vol;
            const double* gc = g.data() + (n * c_out + co) * out_vol;
            Index o(out_extent.size(), 0);
            std::size_t o_flat = 0;
            do {
              // The input position this output position reads through tap t.
              std::size_t off = 0;
              bool inside = true;
              for (std::size_t d = 0; d < in_extent.size() && inside; ++d) {
                const auto pos = static_cast<std::int64_t>(o[d] * op.stride[d] + taps[t][d] * op.dilation[d]) -
                                 static_cast<std::int64_t>(op.padding[d]);
                inside = pos >= 0 && pos < static_cast<std::int64_t>(in_extent[d]);
                off = off * in_extent[d] + static_cast<std::size_t>(pos);
              }
              if (inside) acc += gc[o_flat] * xc[off];
              ++o_flat;
            } while (next_index(o, out_extent));
          }
          dw[(co * cin_g + ci) * k_vol + t] = acc;
        }
  }
  return {detail::write_doubles(ctx, out[0], dw)};
}

}  // namespace burn::ndarray
