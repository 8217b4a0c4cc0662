// Average pooling (PyTorch's divisor rules) and adaptive average pooling.
// AvgPool runs on oneDNN for f32 / bf16 whenever oneDNN's divisor agrees
// with PyTorch's; everything else uses the loops below.
#include <algorithm>

#include "backends/flex/dnnl_engine.hpp"
#include "backends/flex/parallel.hpp"
#include "backends/flex/window.hpp"

namespace burn::flex {
namespace {

using host::CpuTensor;

/// Per axis and output position: the real input range [lo, hi) and the
/// window's extent clipped to the padded input (PyTorch's count_include_pad
/// divisor factor).
struct AxisRanges {
  std::vector<std::size_t> lo, hi, padded;
};

AxisRanges avg_ranges(const dnn::Window3& w, std::size_t a) {
  AxisRanges r;
  const auto in = static_cast<std::int64_t>(w.in[a]), pad = static_cast<std::int64_t>(w.p[a]);
  for (std::size_t o = 0; o < w.out[a]; ++o) {
    std::int64_t start = static_cast<std::int64_t>(o * w.s[a]) - pad;
    std::int64_t end = std::min(start + static_cast<std::int64_t>(w.k[a]), in + pad);
    r.padded.push_back(static_cast<std::size_t>(end - start));
    start = std::max<std::int64_t>(start, 0);
    end = std::min(end, in);
    r.lo.push_back(static_cast<std::size_t>(start));
    r.hi.push_back(static_cast<std::size_t>(std::max(end, start)));
  }
  return r;
}

AxisRanges adaptive_ranges(const dnn::Window3& w, std::size_t a) {
  AxisRanges r;
  for (std::size_t o = 0; o < w.out[a]; ++o) {
    r.lo.push_back(o * w.in[a] / w.out[a]);
    r.hi.push_back(((o + 1) * w.in[a] + w.out[a] - 1) / w.out[a]);
    r.padded.push_back(r.hi.back() - r.lo.back());
  }
  return r;
}

/// Mean of each window; `include_pad` selects the padded divisor. A window
/// without real elements averages to 0, as in PyTorch.
template <class T>
void window_mean(const CpuTensor& x, CpuTensor& y, const dnn::Window3& w, const AxisRanges (&r)[3], bool include_pad) {
  using C = compute_t<T>;
  const std::size_t planes = x.shape[0] * x.shape[1], in_vol = w.in_volume(), out_vol = w.out_volume();
  const T* src = x.data<T>();
  T* dst = y.data<T>();
  const std::size_t window = std::max(w.k_volume(), in_vol / std::max<std::size_t>(out_vol, 1));  // per output, roughly
  parallel_for(
      planes * w.out[0] * w.out[1],
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t row = begin; row < end; ++row) {
          const std::size_t oh = row % w.out[1], od = (row / w.out[1]) % w.out[0], plane = row / (w.out[0] * w.out[1]);
          const T* xp = src + plane * in_vol;
          T* yrow = dst + plane * out_vol + (od * w.out[1] + oh) * w.out[2];
          for (std::size_t ow = 0; ow < w.out[2]; ++ow) {
            const std::size_t real =
                (r[0].hi[od] - r[0].lo[od]) * (r[1].hi[oh] - r[1].lo[oh]) * (r[2].hi[ow] - r[2].lo[ow]);
            if (real == 0) {
              yrow[ow] = convert_element<T>(C(0));
              continue;
            }
            C sum = 0;
            for (std::size_t id = r[0].lo[od]; id < r[0].hi[od]; ++id)
              for (std::size_t ih = r[1].lo[oh]; ih < r[1].hi[oh]; ++ih) {
                const T* xr = xp + (id * w.in[1] + ih) * w.in[2];
                for (std::size_t iw = r[2].lo[ow]; iw < r[2].hi[ow]; ++iw) sum += static_cast<C>(xr[iw]);
              }
            const std::size_t divisor = include_pad ? r[0].padded[od] * r[1].padded[oh] * r[2].padded[ow] : real;
            yrow[ow] = convert_element<T>(sum / static_cast<C>(divisor));
          }
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, w.out[2] * window)));
}

/// oneDNN average pooling. Its right padding is whatever makes the last
/// window fit; with count_include_pad oneDNN divides by the full kernel, which
/// matches PyTorch only while no window reaches past the padded input.
bool dnnl_avg_pool(const CpuTensor& x, CpuTensor& y, const ir::AvgPool& op, dnnl::memory::data_type dt) {
  const std::size_t n = op.kernel.size();
  if (n == 0) return false;
  dnnl::memory::dims strides, kernel, pad_l, pad_r;
  for (std::size_t i = 0; i < n; ++i) {
    const auto in = static_cast<std::int64_t>(x.shape[i + 2]), out = static_cast<std::int64_t>(y.shape[i + 2]);
    const auto k = static_cast<std::int64_t>(op.kernel[i]), s = static_cast<std::int64_t>(op.stride[i]);
    const auto p = static_cast<std::int64_t>(op.padding[i]);
    const std::int64_t right = std::max<std::int64_t>((out - 1) * s + k - in - p, 0);
    if (op.count_include_pad && right > p) return false;
    if ((in + p + right - k) / s + 1 != out) return false;
    strides.push_back(s), kernel.push_back(k), pad_l.push_back(p), pad_r.push_back(right);
  }
  try {
    const auto x_md = dnn::plain_desc(x.shape, dt), y_md = dnn::plain_desc(y.shape, dt);
    const auto algo = op.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                           : dnnl::algorithm::pooling_avg_exclude_padding;
    using fwd = dnnl::pooling_forward;
    const fwd::primitive_desc pd(
        fwd::desc(dnnl::prop_kind::forward_inference, algo, x_md, y_md, strides, kernel, pad_l, pad_r), dnn::engine());
    dnn::execute(fwd(pd), {{DNNL_ARG_SRC, dnn::wrap(x_md, x)}, {DNNL_ARG_DST, dnn::wrap(y_md, y)}});
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

Result kernel(const Context& ctx, const ir::AvgPool& op, Inputs in, Outputs out) {
  const std::string_view name = ir::op_name(ir::Op(op));
  auto x = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive));
  auto y = ctx.output(out[0]);
  const dnn::Window3 w = dnn::make_window(name, std::span(x->shape).subspan(2), std::span(y->shape).subspan(2),
                                          op.kernel, op.stride, op.padding, {});
  if (y->num_elements() == 0) return {y};
  if (x->num_elements() != 0 && (x->dtype == DType::F32 || x->dtype == DType::BF16) &&
      dnnl_avg_pool(*x, *y, op, *dnn::float_type(x->dtype)))
    return {y};
  const AxisRanges r[3] = {avg_ranges(w, 0), avg_ranges(w, 1), avg_ranges(w, 2)};
  visit_float_dtype(name, x->dtype, [&]<class T>() { window_mean<T>(*x, *y, w, r, op.count_include_pad); });
  return {y};
}

Result kernel(const Context& ctx, const ir::AdaptiveAvgPool& op, Inputs in, Outputs out) {
  const std::string_view name = ir::op_name(ir::Op(op));
  auto x = host::contiguous(ctx.alloc, host::as_cpu_ptr(in[0].primitive));
  auto y = ctx.output(out[0]);
  const dnn::Window3 w =
      dnn::make_window(name, std::span(x->shape).subspan(2), std::span(y->shape).subspan(2), {}, {}, {}, {});
  if (y->num_elements() == 0) return {y};
  const AxisRanges r[3] = {adaptive_ranges(w, 0), adaptive_ranges(w, 1), adaptive_ranges(w, 2)};
  visit_float_dtype(name, x->dtype, [&]<class T>() { window_mean<T>(*x, *y, w, r, false); });
  return {y};
}

}  // namespace burn::flex
