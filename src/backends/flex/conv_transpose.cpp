// Transposed convolution (the gradient of conv with respect to its input):
// oneDNN's deconvolution for f32 / bf16 (f16 through f32); f64, and output
// padding larger than padding (which oneDNN would need as negative right
// padding), use the scatter loop below.
#include <algorithm>

#include "backends/flex/blocked_layout.hpp"
#include "backends/flex/conv_common.hpp"
#include "backends/flex/parallel.hpp"
#include "backends/flex/window.hpp"

namespace burn::flex {
namespace {

using dnn::ConvTensors;
using host::CpuTensor;

/// oneDNN's deconvolution. x may be opaque (a convolution's output, or the
/// copy an earlier kernel kept); with `blocked_output` the result stays in
/// the layout the primitive writes, as a convolution's does (conv.cpp).
bool dnnl_deconv(const Context& ctx, const ConvTensors& t, CpuTensor& y, const ir::ConvTranspose& op,
                 dnnl::memory::data_type dt, bool blocked_output) {
  const std::size_t n = std::max<std::size_t>(op.stride.size(), 1);
  for (std::size_t i = 0; i < op.stride.size(); ++i)
    if (op.padding_out[i] > op.padding[i]) return false;
  const auto xs = dnn::unit_spatial(t.x->shape, n), ys = dnn::unit_spatial(y.shape, n);
  const auto ks = dnn::unit_spatial(t.w->shape, n);
  const std::size_t g = op.groups, icg = xs[1] / g, ocg = ys[1] / g;
  std::size_t k_vol = 1;
  for (std::size_t i = 2; i < ks.size(); ++i) k_vol *= ks[i];
  // Our weight is [IC, OC/G, k...]; oneDNN's logical order is [G,] OC/G, IC/G, k...
  std::vector<std::size_t> w_dims;
  std::vector<std::int64_t> w_strides;
  if (g > 1) w_dims.push_back(g), w_strides.push_back(static_cast<std::int64_t>(icg * ocg * k_vol));
  w_dims.push_back(ocg), w_strides.push_back(static_cast<std::int64_t>(k_vol));
  w_dims.push_back(icg), w_strides.push_back(static_cast<std::int64_t>(ocg * k_vol));
  const auto k_strides = host::contiguous_strides(std::vector<std::size_t>(ks.begin() + 2, ks.end()));
  w_dims.insert(w_dims.end(), ks.begin() + 2, ks.end());
  w_strides.insert(w_strides.end(), k_strides.begin(), k_strides.end());
  try {
    const auto x_md = dnn::plain_desc(xs, dt), y_md = dnn::plain_desc(ys, dt);
    const dnnl::memory::desc w_md(dnn::to_dims(w_dims), dt, dnnl::memory::dims(w_strides.begin(), w_strides.end()));
    const auto any_w = dnnl::memory::desc(dnn::to_dims(w_dims), dt, dnnl::memory::format_tag::any);
    auto geo = dnn::conv_geometry(op.stride, op.padding, op.dilation, n);
    auto pad_r = geo.pad;
    for (std::size_t i = 0; i < op.stride.size(); ++i) pad_r[i] -= static_cast<dnnl::memory::dim>(op.padding_out[i]);
    using fwd = dnnl::deconvolution_forward;
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto algo = dnnl::algorithm::deconvolution_direct;
    const auto b_md = dnn::plain_desc({ys[1]}, dt);
    const auto x_any = dnn::any_layout(x_md), y_any = dnn::any_layout(y_md);
    auto desc = t.bias ? fwd::desc(prop, algo, x_any, any_w, b_md, y_any, geo.strides, geo.dilates, geo.pad, pad_r)
                       : fwd::desc(prop, algo, x_any, any_w, y_any, geo.strides, geo.dilates, geo.pad, pad_r);
    const fwd::primitive_desc pd(desc, dnn::engine());
    if (dnn::slow_half(pd, dt)) return false;
    // As the input gradient of a convolution, x is the output gradient,
    // which the weight gradient reads next in the same blocked layout: the
    // reordered copy is kept on the input for it.
    const dnn::BlockedInput src = dnn::laid_out(ctx, *t.x, x_md, pd.src_desc(), t.input.get());
    const dnn::BlockedOutput blocked(ctx, blocked_output ? pd.dst_desc() : y_md, y_md);
    std::vector<dnn::PlainArg> args{{DNNL_ARG_SRC, src.md, src.bytes.get()},
                                    {DNNL_ARG_WEIGHTS, w_md, t.w.get()},
                                    blocked.active()
                                        ? dnn::PlainArg{DNNL_ARG_DST, blocked.md(), &blocked.target(), true}
                                        : dnn::PlainArg{DNNL_ARG_DST, y_md, &y, true}};
    if (t.bias) args.push_back({DNNL_ARG_BIAS, b_md, t.bias.get()});
    dnn::execute_with_layouts(ctx, fwd(pd), pd, args);
    if (blocked.active()) blocked.finish(ctx, y);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

/// Scatter form: each (batch, out channel) plane is owned by one thread,
/// which adds every input element of its group times the matching weight
/// at output position i * stride - padding + k * dilation.
template <class T>
void loop_deconv(const ConvTensors& t, CpuTensor& y, const ir::ConvTranspose& op) {
  using Acc = compute_t<T>;
  const auto& xs = t.x->shape;
  // The roles of input and output swap relative to a convolution: the
  // window geometry below maps input positions onto output positions.
  const dnn::Window3 win =
      dnn::make_window(ir::op_name(ir::Op(op)), std::span(xs).subspan(2), std::span(y.shape).subspan(2),
                       std::span(t.w->shape).subspan(2), op.stride, op.padding, op.dilation);
  const std::size_t batch = xs[0], c_in = xs[1], c_out = y.shape[1];
  const std::size_t icg = c_in / op.groups, ocg = c_out / op.groups;
  const std::size_t in_vol = win.in_volume(), out_vol = win.out_volume(), k_vol = win.k_volume();
  const T* x = t.x->data<T>();
  const T* w = t.w->data<T>();
  const T* b = t.bias ? t.bias->data<T>() : nullptr;
  T* out = y.data<T>();
  parallel_for(
      batch * c_out,
      [&](std::size_t begin, std::size_t end) {
        std::vector<Acc> acc(out_vol);
        for (std::size_t plane = begin; plane < end; ++plane) {
          const std::size_t ni = plane / c_out, oc = plane % c_out, g = oc / ocg, ocl = oc % ocg;
          std::fill(acc.begin(), acc.end(), b ? static_cast<Acc>(b[oc]) : Acc(0));
          for (std::size_t icl = 0; icl < icg; ++icl) {
            const std::size_t ic = g * icg + icl;
            const T* xp = x + (ni * c_in + ic) * in_vol;
            const T* wp = w + (ic * ocg + ocl) * k_vol;
            std::size_t tap = 0;
            for (std::size_t kd = 0; kd < win.k[0]; ++kd)
              for (std::size_t kh = 0; kh < win.k[1]; ++kh)
                for (std::size_t kw = 0; kw < win.k[2]; ++kw, ++tap) {
                  const auto first = [&](std::size_t a, std::size_t k) {
                    return static_cast<std::int64_t>(k * win.d[a]) - static_cast<std::int64_t>(win.p[a]);
                  };
                  const std::int64_t d0 = first(0, kd), h0 = first(1, kh), w0 = first(2, kw);
                  // Input positions i whose output first + i * stride is inside the output.
                  const auto [id_lo, id_hi] = dnn::valid_range(d0, win.s[0], win.out[0], win.in[0]);
                  const auto [ih_lo, ih_hi] = dnn::valid_range(h0, win.s[1], win.out[1], win.in[1]);
                  const auto [iw_lo, iw_hi] = dnn::valid_range(w0, win.s[2], win.out[2], win.in[2]);
                  const Acc wv = static_cast<Acc>(wp[tap]);
                  for (std::size_t id = id_lo; id < id_hi; ++id)
                    for (std::size_t ih = ih_lo; ih < ih_hi; ++ih) {
                      const auto od = static_cast<std::size_t>(d0 + static_cast<std::int64_t>(id * win.s[0]));
                      const auto oh = static_cast<std::size_t>(h0 + static_cast<std::int64_t>(ih * win.s[1]));
                      Acc* arow = acc.data() + (od * win.out[1] + oh) * win.out[2];
                      const T* xrow = xp + (id * win.in[1] + ih) * win.in[2];
                      for (std::size_t iw = iw_lo; iw < iw_hi; ++iw)
                        arow[w0 + static_cast<std::int64_t>(iw * win.s[2])] += wv * static_cast<Acc>(xrow[iw]);
                    }
                }
          }
          T* yp = out + plane * out_vol;
          for (std::size_t i = 0; i < out_vol; ++i) yp[i] = convert_element<T>(acc[i]);
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, in_vol * icg * k_vol)));
}

}  // namespace

Result kernel(const Context& ctx, const ir::ConvTranspose& op, Inputs in, Outputs out) {
  return dnn::run_conv(
      ctx, op, in, out,
      [&](const ConvTensors& t, CpuTensor& y, dnnl::memory::data_type dt) {
        return dnnl_deconv(ctx, t, y, op, dt, y.dtype == out[0].dtype);
      },
      [&]<class T>(const ConvTensors& t, CpuTensor& y) { loop_deconv<T>(t, y, op); });
}

}  // namespace burn::flex
