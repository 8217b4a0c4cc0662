// The weight gradient of a convolution. f32 / bf16 run oneDNN's
// backward-weights primitive in its blocked layouts (f16 through f32),
// reading x and the output gradient in the layout a convolution left them
// in; f64 and cases oneDNN declines use the direct loop below. Where oneDNN
// runs its AVX2 kernels (no AVX-512), a stride-1 f32 gradient whose operands
// are both row-major runs burn's own kernel (conv_weight_grad_avx2.hpp)
// instead.
#include <algorithm>

#include "backends/flex/blocked_layout.hpp"
#include "backends/flex/conv_common.hpp"
#include "backends/flex/conv_weight_grad_avx2.hpp"
#include "backends/flex/parallel.hpp"
#include "backends/flex/strided.hpp"
#include "backends/flex/window.hpp"

namespace burn::flex {
namespace {

using host::CpuTensor;

/// oneDNN's backward-weights primitive. x and g may be opaque (a
/// convolution's output); g's blocked copy, which the input gradient's
/// transposed convolution kept on it (conv_transpose.cpp), is read and
/// dropped: a convolution's backward reads g in no third kernel.
bool dnnl_weight_grad(const Context& ctx, const host::CpuTensorPtr& x_in, const host::CpuTensorPtr& g_in, CpuTensor& dw,
                      const ir::ConvWeightGrad& op, dnnl::memory::data_type dt) {
  const std::size_t n = std::max<std::size_t>(op.stride.size(), 1);
  const auto xs = dnn::unit_spatial(x_in->shape, n), gs = dnn::unit_spatial(g_in->shape, n);
  const auto ws = dnn::conv_weight_dims(dw.shape, n, op.groups);
  try {
    const auto x_md = dnn::plain_desc(xs, dt), g_md = dnn::plain_desc(gs, dt), w_md = dnn::plain_desc(ws, dt);
    const auto x_any = dnn::any_layout(x_md), g_any = dnn::any_layout(g_md), w_any = dnn::any_layout(w_md);
    const auto geo = dnn::conv_geometry(op.stride, op.padding, op.dilation, n);
    const auto algo = dnnl::algorithm::convolution_direct;
    // oneDNN builds backward primitives from the matching forward one (its "hint").
    const dnnl::convolution_forward::primitive_desc hint(
        {dnnl::prop_kind::forward_training, algo, x_any, w_any, g_any, geo.strides, geo.dilates, geo.pad, geo.pad},
        dnn::engine());
    using bwd = dnnl::convolution_backward_weights;
    const bwd::primitive_desc pd({algo, x_any, w_any, g_any, geo.strides, geo.dilates, geo.pad, geo.pad}, dnn::engine(),
                                 hint);
    if (dnn::slow_half(pd, dt)) return false;
    const dnn::BlockedInput x = dnn::laid_out(ctx, *dnn::conv_operand(ctx, x_in), x_md, pd.src_desc());
    const dnn::BlockedInput g = dnn::laid_out(ctx, *dnn::conv_operand(ctx, g_in, true), g_md, pd.diff_dst_desc());
    const std::vector<dnn::PlainArg> args{{DNNL_ARG_SRC, x.md, x.bytes.get()},
                                          {DNNL_ARG_DIFF_DST, g.md, g.bytes.get()},
                                          {DNNL_ARG_DIFF_WEIGHTS, w_md, &dw, true}};
    dnn::execute_with_layouts(ctx, bwd(pd), pd, args);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

/// burn's AVX2 kernel, where it takes the problem: f32, 1-D or 2-D, stride
/// 1, one group, x and g row-major (an opaque operand is oneDNN's: it reads
/// the blocked layout as it is), on a CPU where oneDNN's own kernel is its
/// AVX2 one (its AVX-512 kernels were not measured against this one).
/// Measured on a 2-core Zen 3 against oneDNN 2.6's AVX2 kernel with the
/// reorders of x and g it needs: a first layer
/// (64 x 1 x 28 x 28, 32 channels) 0.53 against 2.07 ms, 3x3 layers of
/// 32-256 channels 1.1-1.25x faster, a 7x7 image with 512 channels level.
/// With fewer than 16 output channels most of its 16-channel tiles would be
/// padding, so those stay with oneDNN unless its own padding of the input
/// channels to 8 wastes more.
bool avx2_weight_grad(const Context& ctx, const host::CpuTensorPtr& x_in, const host::CpuTensorPtr& g_in, CpuTensor& dw,
                      const ir::ConvWeightGrad& op) {
  namespace wg = weight_grad_avx2;
  if (dw.dtype != DType::F32 || x_in->dtype != DType::F32 || g_in->dtype != DType::F32) return false;
  if (op.groups != 1 || op.stride.empty() || op.stride.size() > 2 || x_in->is_opaque() || g_in->is_opaque())
    return false;
  if (std::any_of(op.stride.begin(), op.stride.end(), [](std::size_t s) { return s != 1; })) return false;
  if (!wg::available() || !dnn::isa_below_avx512()) return false;
  const bool two_d = op.stride.size() == 2;
  const auto& xs = x_in->shape;
  const auto& gs = g_in->shape;
  wg::Problem p;
  p.batch = xs[0];
  p.in_channels = xs[1];
  p.out_channels = gs[1];
  p.in_h = two_d ? xs[2] : 1;
  p.in_w = xs.back();
  p.out_h = two_d ? gs[2] : 1;
  p.out_w = gs.back();
  p.kernel_h = two_d ? op.kernel[0] : 1;
  p.kernel_w = op.kernel.back();
  p.pad_top = two_d ? op.padding[0] : 0;
  p.pad_left = op.padding.back();
  p.dilation_h = two_d ? op.dilation[0] : 1;
  p.dilation_w = op.dilation.back();
  if (!wg::takes(p) || (p.out_channels < 16 && p.in_channels >= 8)) return false;
  // The transposed convolution of the input gradient may have kept a
  // blocked copy of g for oneDNN's kernel here: it is not read, so freed.
  (void)g_in->take_kept_copy();
  const auto x = make_contiguous(ctx, x_in), g = make_contiguous(ctx, g_in);
  const auto workspace = ctx.output({Shape{wg::workspace_floats(p)}, DType::F32});
  wg::weight_grad(p, x->data<float>(), g->data<float>(), dw.data<float>(), workspace->data<float>());
  return true;
}

/// Each (out channel, in channel) kernel is owned by one thread, which
/// accumulates every tap over the batch and the output rows the tap reaches.
template <class T>
void loop_weight_grad(const CpuTensor& x, const CpuTensor& g, CpuTensor& dw, const ir::ConvWeightGrad& op) {
  using Acc = compute_t<T>;
  const dnn::Window3 win =
      dnn::make_window(ir::op_name(ir::Op(op)), std::span(x.shape).subspan(2), std::span(g.shape).subspan(2), op.kernel,
                       op.stride, op.padding, op.dilation);
  const std::size_t batch = x.shape[0], c_in = x.shape[1], c_out = g.shape[1];
  const std::size_t icg = c_in / op.groups, ocg = c_out / op.groups;
  const std::size_t in_vol = win.in_volume(), out_vol = win.out_volume(), k_vol = win.k_volume();
  const T* xd = x.data<T>();
  const T* gd = g.data<T>();
  T* out = dw.data<T>();
  parallel_for(
      c_out * icg,
      [&](std::size_t begin, std::size_t end) {
        std::vector<Acc> acc(k_vol);
        for (std::size_t pair = begin; pair < end; ++pair) {
          const std::size_t oc = pair / icg, icl = pair % icg, ic = (oc / ocg) * icg + icl;
          std::fill(acc.begin(), acc.end(), Acc(0));
          for (std::size_t ni = 0; ni < batch; ++ni) {
            const T* xp = xd + (ni * c_in + ic) * in_vol;
            const T* gp = gd + (ni * c_out + oc) * out_vol;
            dnn::for_each_tap(win, [&](std::size_t tap, std::size_t od, std::size_t oh, std::size_t id, std::size_t ih,
                                       std::size_t ow0, std::size_t ow1, std::int64_t iw0) {
              const T* grow = gp + (od * win.out[1] + oh) * win.out[2];
              const T* xrow = xp + (id * win.in[1] + ih) * win.in[2];
              const auto s = static_cast<std::int64_t>(win.s[2]);
              Acc sum = 0;
              for (std::size_t ow = ow0; ow < ow1; ++ow)
                sum += static_cast<Acc>(grow[ow]) * static_cast<Acc>(xrow[iw0 + static_cast<std::int64_t>(ow) * s]);
              acc[tap] += sum;
            });
          }
          for (std::size_t t = 0; t < k_vol; ++t) out[pair * k_vol + t] = convert_element<T>(acc[t]);
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, batch * out_vol * k_vol)));
}

}  // namespace

Result kernel(const Context& ctx, const ir::ConvWeightGrad& op, Inputs in, Outputs out) {
  auto dw = ctx.output(out[0]);
  const std::string_view name = ir::op_name(ir::Op(op));
  dnn::expect_at_most_3d(name, op.stride.size());
  if (dw->num_elements() == 0) return {dw};
  const auto x_in = host::as_cpu_ptr(in[0].primitive), g_in = host::as_cpu_ptr(in[1].primitive);
  const DType dtype = out[0].dtype;
  if (x_in->num_elements() == 0 || g_in->num_elements() == 0) {  // nothing to sum
    visit_float_dtype(name, dtype, [&]<class T>() { std::fill_n(dw->data<T>(), dw->num_elements(), T(0.0f)); });
    return {dw};
  }
  if (avx2_weight_grad(ctx, x_in, g_in, *dw, op)) return {dw};
  if (const auto dt = dnn::float_type(dtype)) {
    if (dnnl_weight_grad(ctx, x_in, g_in, *dw, op, *dt)) return {dw};
  }
  // Only oneDNN reads the opaque layouts.
  x_in->make_plain();
  g_in->make_plain();
  auto x = make_contiguous(ctx, x_in), g = make_contiguous(ctx, g_in);
  if (is_half(dtype)) {
    auto x32 = dnn::to_f32(ctx, *x), g32 = dnn::to_f32(ctx, *g);
    auto dw32 = ctx.output({out[0].shape, DType::F32});
    if (!avx2_weight_grad(ctx, x32, g32, *dw32, op) &&
        !dnnl_weight_grad(ctx, x32, g32, *dw32, op, dnnl::memory::data_type::f32))
      loop_weight_grad<float>(*x32, *g32, *dw32, op);
    dnn::narrow_from_f32(*dw32, *dw);
    return {dw};
  }
  visit_float_dtype(name, dtype, [&]<class T>() {
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) loop_weight_grad<T>(*x, *g, *dw, op);
  });
  return {dw};
}

}  // namespace burn::flex
