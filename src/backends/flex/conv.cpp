// Convolution (1-3 spatial dims, groups, dilation, symmetric padding).
// f32 and bf16 run on oneDNN; f16 runs there through f32; f64 (and any case
// oneDNN rejects) uses the direct loop below. With the device's float32
// precision at High, 3x3 stride-1 f32 convolutions take oneDNN's Winograd
// kernel where it has one (AVX-512; twice as fast, with a looser error
// bound), and burn's own AVX2 one (winograd.hpp) where it has none.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "backends/flex/blocked_layout.hpp"
#include "backends/flex/conv_common.hpp"
#include "backends/flex/matmul_post_ops.hpp"
#include "backends/flex/packed_weights.hpp"
#include "backends/flex/parallel.hpp"
#include "backends/flex/strided.hpp"
#include "backends/flex/window.hpp"
#include "backends/flex/winograd.hpp"

namespace burn::flex {
namespace {

using dnn::ConvTensors;
using host::CpuTensor;

/// Whether oneDNN's Winograd convolution computes `op`: 2-D, 3x3, stride 1,
/// no dilation, one group (weights [OC, IC, 3, 3] as oneDNN sees them).
bool takes_winograd(const ir::Conv& op, const std::vector<std::size_t>& weight_dims) {
  if (op.stride.size() != 2 || op.groups != 1 || weight_dims.size() != 4) return false;
  for (std::size_t i = 0; i < 2; ++i)
    if (op.stride[i] != 1 || op.dilation[i] != 1 || weight_dims[2 + i] != 3) return false;
  return true;
}

/// Whether oneDNN has a Winograd convolution on this CPU (2.6: AVX-512 only).
bool onednn_has_winograd() {
  static const bool has = [] {
    using tag = dnnl::memory::format_tag;
    const auto f32 = dnnl::memory::data_type::f32;
    const dnnl::memory::desc x({1, 16, 8, 8}, f32, tag::any), w({16, 16, 3, 3}, f32, tag::any);
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd,
                                            x, w, x, {1, 1}, {1, 1}, {1, 1});
    return dnn::try_create<dnnl::convolution_forward::primitive_desc>(d, dnn::engine()).has_value();
  }();
  return has;
}

/// The problem of a 2-D convolution for burn's AVX2 Winograd.
winograd::Problem winograd_problem(const ir::Conv& op, const std::vector<std::size_t>& x_shape,
                                   const std::vector<std::size_t>& y_shape) {
  return {x_shape[0], x_shape[1], y_shape[1],    x_shape[2],    x_shape[3],
          y_shape[2], y_shape[3], op.padding[0], op.padding[1], pool_size()};
}

/// Whether burn's AVX2 Winograd computes `op` (f32 assumed): the device's
/// precision High, a CPU with AVX2 and without oneDNN's Winograd, and a
/// problem the kernels take.
bool takes_own_winograd(const Context& ctx, const ir::Conv& op, const std::vector<std::size_t>& weight_dims,
                        const std::vector<std::size_t>& x_shape, const std::vector<std::size_t>& y_shape) {
  return ctx.fast_f32() && x_shape.size() == 4 && takes_winograd(op, weight_dims) && winograd::available() &&
         winograd::takes(winograd_problem(op, x_shape, y_shape)) && !onednn_has_winograd();
}

/// Identifies Winograd-transformed weights in the weight cache.
constexpr std::uint32_t kWinogradWeights = 1;

/// nChw8c: the layout burn's Winograd reads and writes.
dnnl::memory::desc blocked8(const dnnl::memory::desc& md) {
  return {md.dims(), dnnl::memory::data_type::f32, dnnl::memory::format_tag::nChw8c};
}

/// The operand of post-op `i` among `post_args` (its slot is
/// DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1); nullptr when absent.
const dnn::PlainArg* post_op_operand(std::span<const dnn::PlainArg> post_args, int i) {
  const int slot = DNNL_ARG_ATTR_MULTIPLE_POST_OP(i) | DNNL_ARG_SRC_1;
  const auto arg =
      std::find_if(post_args.begin(), post_args.end(), [&](const dnn::PlainArg& a) { return a.arg == slot; });
  return arg == post_args.end() ? nullptr : &*arg;
}

/// The post-ops of `attr` (the cpu device's fused epilogue) as steps of
/// burn's Winograd, with their operands from `post_args` and `sum` (a sum
/// post-op's residual, read as a full operand in the output's layout, its
/// bytes kept alive in `keep`); false where a step is not one it applies
/// (the convolution then runs without them).
bool epilogue_steps(const dnnl::primitive_attr& attr, std::span<const dnn::PlainArg> post_args, const SumOperand* sum,
                    const dnnl::memory::desc& y8, std::vector<winograd::EpilogueStep>& steps,
                    std::vector<std::shared_ptr<host::Buffer>>& keep) {
  using Step = winograd::EpilogueStep;
  const dnnl::post_ops post = attr.get_post_ops();
  const auto channels = y8.dims()[1];
  for (int i = 0; i < post.len(); ++i) {
    if (post.kind(i) == dnnl::primitive::kind::sum) {
      float scale = 0;
      post.get_params_sum(i, scale);
      const auto view = sum ? sum->tensor->opaque_view() : host::CpuTensor::OpaqueView{};
      const auto* layout = dynamic_cast<const dnn::BlockedLayout*>(view.layout.get());
      if (!layout || layout->md() != y8 || (scale != 1.0f && scale != -1.0f)) return false;
      keep.push_back(view.buffer);
      steps.push_back({scale > 0 ? Step::Op::Add : Step::Op::Sub, Step::Operand::Full,
                       reinterpret_cast<const float*>(view.buffer->data())});
      continue;
    }
    if (post.kind(i) == dnnl::primitive::kind::eltwise) {
      float scale = 0, alpha = 0, beta = 0;
      dnnl::algorithm alg{};
      post.get_params_eltwise(i, scale, alg, alpha, beta);
      if (alg != dnnl::algorithm::eltwise_relu || alpha != 0.0f || scale != 1.0f) return false;
      steps.push_back({Step::Op::Relu, Step::Operand::None, nullptr});
      continue;
    }
    if (post.kind(i) != dnnl::primitive::kind::binary) return false;
    dnnl::algorithm alg{};
    dnnl::memory::desc md;
    post.get_params_binary(i, alg, md);
    Step step;
    switch (alg) {
      case dnnl::algorithm::binary_add: step.op = Step::Op::Add; break;
      case dnnl::algorithm::binary_sub: step.op = Step::Op::Sub; break;
      case dnnl::algorithm::binary_mul: step.op = Step::Op::Mul; break;
      case dnnl::algorithm::binary_div: step.op = Step::Op::Div; break;
      default: return false;
    }
    const dnn::PlainArg* arg = post_op_operand(post_args, i);
    if (!arg || md.data_type() != dnnl::memory::data_type::f32) return false;
    const auto dims = md.dims();
    const auto ones = [&](std::size_t from) {
      return std::all_of(dims.begin() + static_cast<std::ptrdiff_t>(from), dims.end(), [](auto d) { return d == 1; });
    };
    if (md == y8) {
      step.operand = Step::Operand::Full;
    } else if (dims.size() == 4 && ones(0)) {
      step.operand = Step::Operand::Scalar;
    } else if (dims.size() == 4 && dims[0] == 1 && dims[1] == channels && ones(2) &&
               md.data.format_desc.blocking.strides[1] == 1) {
      step.operand = Step::Operand::PerChannel;
    } else {
      return false;
    }
    step.data = reinterpret_cast<const float*>(arg->tensor->base());
    steps.push_back(step);
  }
  return true;
}

/// burn's AVX2 Winograd convolution (winograd.hpp): x read in nChw8c
/// (reordered there unless a previous convolution left it so), y left in it.
void own_winograd(const Context& ctx, const ConvTensors& t, CpuTensor& y, const ir::Conv& op,
                  const dnnl::memory::desc& x_md, const CpuTensor& x_bytes, const dnnl::memory::desc& w_md,
                  const dnnl::memory::desc& y_md, std::span<const winograd::EpilogueStep> epilogue) {
  const winograd::Problem p = winograd_problem(op, t.x->shape, y.shape);
  const dnnl::memory::desc x8 = blocked8(x_md), y8 = blocked8(y_md);
  host::CpuTensorPtr x_reordered;
  const float* x = reinterpret_cast<const float*>(x_bytes.base());
  if (x_md != x8) {
    x_reordered = ctx.output({Shape{x8.get_size()}, DType::U8});
    dnnl::memory from = dnn::wrap(x_md, x_bytes), to = dnn::wrap(x8, *x_reordered);
    dnn::reorder(from, to);
    x = x_reordered->data<float>();
  }
  const std::size_t u_floats = winograd::transformed_weight_floats(p.in_channels, p.out_channels);
  const auto u = dnn::transformed_weights(
      ctx, *t.w, w_md, kWinogradWeights, u_floats * sizeof(float), [&](const CpuTensor& w, std::byte* out) {
        winograd::transform_weights(w.data<float>(), p.in_channels, p.out_channels, reinterpret_cast<float*>(out));
      });
  const auto workspace = ctx.output({Shape{winograd::workspace_floats(p)}, DType::F32});
  const dnn::BlockedOutput blocked(ctx, y8, y_md);
  winograd::convolve(p, x, u->data<float>(), t.bias ? t.bias->data<float>() : nullptr,
                     reinterpret_cast<float*>(blocked.target().base()), workspace->data<float>(), epilogue);
  blocked.finish(ctx, y);
}

/// The output a convolution's sum post-op accumulates onto when it can be
/// the residual itself: nobody else can observe the residual and it is
/// already in the blocked layout `dst_md` the convolution writes. nullopt
/// otherwise (the residual is then copied into a fresh output).
std::optional<dnn::BlockedOutput> adopt_residual(const SumOperand& sum, const dnnl::memory::desc& dst_md,
                                                 const dnnl::memory::desc& y_md) {
  if (!sum.reusable || dst_md == y_md) return std::nullopt;
  const auto view = sum.tensor->opaque_view();
  const auto* layout = dynamic_cast<const dnn::BlockedLayout*>(view.layout.get());
  // Two references, the tensor's and the view's: no other tensor (a
  // reshaped view) shares the bytes.
  if (!layout || layout->md() != dst_md || view.buffer.use_count() != 2) return std::nullopt;
  return dnn::BlockedOutput(dst_md, view.buffer);
}

/// Copies the residual (plain, or in any blocked layout) into `dst`, which
/// the convolution then writes in `dst_md` with the sum post-op.
void load_residual(const Context& ctx, const SumOperand& sum, const std::vector<std::size_t>& dims,
                   const dnnl::memory::desc& dst_md, const CpuTensor& dst) {
  const CpuTensor& r = *sum.tensor;
  const auto plain = dnn::plain_desc(dims, dnnl::memory::data_type::f32);
  host::CpuTensorPtr source;
  dnnl::memory::desc source_md = plain;
  if (auto blocked = dnn::blocked_input(r, plain)) {
    source = std::move(blocked->bytes);
    source_md = blocked->md;
  } else {
    source = r.is_contiguous() ? r.view(r.shape, r.strides, r.offset) : contiguous_copy(ctx, r);
  }
  dnnl::memory from = dnn::wrap(source_md, *source), to = dnn::wrap(dst_md, dst);
  dnn::reorder(from, to);
}

/// oneDNN's convolution. The input may be in the blocked layout a previous
/// convolution left (read as is); with `blocked_output` the result stays in
/// the layout the primitive writes (y becomes opaque, see blocked_layout.hpp)
/// instead of being reordered to row-major — only for a kernel's final
/// output, never for a tensor the kernel itself reads afterwards.
bool dnnl_conv(const Context& ctx, const ConvTensors& t, CpuTensor& y, const ir::Conv& op, dnnl::memory::data_type dt,
               bool blocked_output, const dnnl::primitive_attr* attr = nullptr,
               std::span<const dnn::PlainArg> post_args = {}, SumOperand* sum = nullptr) {
  // Set once the residual's own buffer is the output: from then on a
  // failure cannot fall back to the separate ops, which would read it.
  bool residual_taken = false;
  const std::size_t n = std::max<std::size_t>(op.stride.size(), 1);
  const auto xs = dnn::unit_spatial(t.x->shape, n), ys = dnn::unit_spatial(y.shape, n);
  const auto ws = dnn::conv_weight_dims(t.w->shape, n, op.groups);
  try {
    const auto y_md = dnn::plain_desc(ys, dt), w_md = dnn::plain_desc(ws, dt);
    const auto x_plain = dnn::plain_desc(xs, dt);
    const auto x_blocked = dnn::blocked_input(*t.x, x_plain);
    const auto& x_md = x_blocked ? x_blocked->md : x_plain;
    const auto g = dnn::conv_geometry(op.stride, op.padding, op.dilation, n);
    using fwd = dnnl::convolution_forward;
    const auto prop = dnnl::prop_kind::forward_inference;
    // A plain f32 source with fewer channels than a vector holds (a
    // network's first layer: 1-3 image channels) is described as it is:
    // oneDNN's first-layer kernels read it so and write channel-blocked
    // output. Left to choose, oneDNN picks a channels-last kernel, the
    // source is transposed into that layout first, and a consumer that needs
    // plain data (batch norm in training) transposes the output back, which
    // costs more than from channel blocks: Fashion-MNIST's first layer (64 x
    // 1 x 28 x 28 -> 32 channels) took 0.45 ms this way against 1.06 ms, a
    // ResNet-18 stem at batch 32 26.8 ms against 29.2 ms with its output
    // left blocked (oneDNN 2.6, AVX-512). Where no such kernel takes it (a
    // general-purpose implementation is all there is), oneDNN chooses.
    const bool first_layer = !x_blocked && op.groups == 1 && dt == dnnl::memory::data_type::f32 && xs[1] < 16;
    const auto w_any = dnn::any_layout(w_md), y_any = dnn::any_layout(y_md);
    const auto b_md = dnn::plain_desc({y.shape[1]}, dt);
    auto make_desc_from = [&](const dnnl::memory::desc& x_src, dnnl::algorithm algo) {
      return t.bias ? fwd::desc(prop, algo, x_src, w_any, b_md, y_any, g.strides, g.dilates, g.pad, g.pad)
                    : fwd::desc(prop, algo, x_src, w_any, y_any, g.strides, g.dilates, g.pad, g.pad);
    };
    auto make_desc = [&](dnnl::algorithm algo) { return make_desc_from(dnn::any_layout(x_md), algo); };
    // The scratchpad comes from the caching allocator: left to oneDNN it is
    // malloc'ed and freed on every call, and Winograd's (tens of MB at batch
    // 32) then cost fresh pages each time, doubling the convolution's time.
    dnnl::primitive_attr with_scratchpad = attr ? *attr : dnnl::primitive_attr();
    with_scratchpad.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto make_pd = [&](const fwd::desc& desc) { return dnn::cached_primitive<fwd>(desc, with_scratchpad); };
    const auto desc = make_desc(dnnl::algorithm::convolution_direct);
    if (blocked_output && dt == dnnl::memory::data_type::f32 && takes_own_winograd(ctx, op, ws, t.x->shape, y.shape)) {
      // An epilogue it cannot apply: the caller runs it op by op after the
      // convolution, which still goes through this Winograd.
      std::vector<winograd::EpilogueStep> steps;
      std::vector<std::shared_ptr<host::Buffer>> keep;
      if (attr && !epilogue_steps(*attr, post_args, sum, blocked8(y_md), steps, keep)) return false;
      own_winograd(ctx, t, y, op, x_md, x_blocked ? *x_blocked->bytes : *t.x, w_md, y_md, steps);
      return true;
    }
    // On a CPU without oneDNN's Winograd, asking for it on every call would
    // only fail again: the answer is known once per process. Without a
    // Winograd kernel for this shape (nullptr), the direct one.
    std::shared_ptr<const dnn::CachedPrimitive<fwd>> chosen;
    if (ctx.fast_f32() && dt == dnnl::memory::data_type::f32 && takes_winograd(op, ws) && onednn_has_winograd())
      chosen = make_pd(make_desc(dnnl::algorithm::convolution_winograd));
    if (!chosen && first_layer) {
      chosen = make_pd(make_desc_from(x_md, dnnl::algorithm::convolution_direct));
      if (chosen && dnn::is_fallback(chosen->pd)) chosen = nullptr;
    }
    if (!chosen) chosen = make_pd(desc);
    if (!chosen) return false;  // no implementation: the loop below
    const fwd::primitive_desc& pd = chosen->pd;
    if (dnn::slow_half(pd, dt)) return false;
    // Post-ops a fast kernel cannot apply (a residual operand in another
    // layout than the output's) send oneDNN to its gemm or reference
    // convolution, 4-8x slower than the direct kernel plus separate
    // elementwise passes: the caller runs the ops one by one instead.
    if (attr && dnn::is_fallback(pd) && !dnn::is_fallback(fwd::primitive_desc(desc, dnn::engine()))) return false;
    const dnnl::memory::desc dst_md = blocked_output ? pd.dst_desc() : y_md;
    std::optional<dnn::BlockedOutput> adopted = sum ? adopt_residual(*sum, dst_md, y_md) : std::nullopt;
    residual_taken = adopted.has_value();
    if (sum) sum->taken = residual_taken;
    const dnn::BlockedOutput blocked = adopted ? std::move(*adopted) : dnn::BlockedOutput(ctx, dst_md, y_md);
    if (sum && !adopted) load_residual(ctx, *sum, ys, dst_md, blocked.active() ? blocked.target() : y);
    std::vector<dnn::PlainArg> args{{DNNL_ARG_SRC, x_md, x_blocked ? x_blocked->bytes.get() : t.x.get()},
                                    {DNNL_ARG_WEIGHTS, w_md, t.w.get()},
                                    blocked.active()
                                        ? dnn::PlainArg{DNNL_ARG_DST, blocked.md(), &blocked.target(), true}
                                        : dnn::PlainArg{DNNL_ARG_DST, y_md, &y, true}};
    if (t.bias) args.push_back({DNNL_ARG_BIAS, b_md, t.bias.get()});
    args.insert(args.end(), post_args.begin(), post_args.end());
    host::CpuTensorPtr scratchpad;
    if (const auto md = pd.scratchpad_desc(); md.get_size() > 0) {
      scratchpad = ctx.output({Shape{md.get_size()}, DType::U8});
      args.push_back({DNNL_ARG_SCRATCHPAD, md, scratchpad.get()});
    }
    dnn::execute_with_layouts(ctx, chosen->prim, pd, args);
    if (blocked.active()) blocked.finish(ctx, y);
    return true;
  } catch (const dnnl::error& e) {
    if (residual_taken) throw Error(ir::op_name(ir::Op(op)), fmt::format("oneDNN failed: {}", e.what()));
    return false;
  }
}

/// Direct convolution: each (batch, out channel) plane is owned by one
/// thread and accumulated one weight at a time over contiguous output rows.
template <class T>
void loop_conv(const ConvTensors& t, CpuTensor& y, const ir::Conv& op) {
  using Acc = compute_t<T>;
  const auto& xs = t.x->shape;
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
          const std::size_t ni = plane / c_out, oc = plane % c_out, g = oc / ocg;
          std::fill(acc.begin(), acc.end(), b ? static_cast<Acc>(b[oc]) : Acc(0));
          for (std::size_t icl = 0; icl < icg; ++icl) {
            const T* xp = x + (ni * c_in + g * icg + icl) * in_vol;
            const T* wp = w + (oc * icg + icl) * k_vol;
            dnn::for_each_tap(win, [&](std::size_t tap, std::size_t od, std::size_t oh, std::size_t id, std::size_t ih,
                                       std::size_t ow0, std::size_t ow1, std::int64_t iw0) {
              const Acc wv = static_cast<Acc>(wp[tap]);
              Acc* arow = acc.data() + (od * win.out[1] + oh) * win.out[2];
              const T* xrow = xp + (id * win.in[1] + ih) * win.in[2];
              const std::int64_t s = static_cast<std::int64_t>(win.s[2]);
              for (std::size_t ow = ow0; ow < ow1; ++ow)
                arow[ow] += wv * static_cast<Acc>(xrow[iw0 + static_cast<std::int64_t>(ow) * s]);
            });
          }
          T* yp = out + plane * out_vol;
          for (std::size_t i = 0; i < out_vol; ++i) yp[i] = convert_element<T>(acc[i]);
        }
      },
      std::max<std::size_t>(1, kGrainSize / std::max<std::size_t>(1, out_vol * icg * k_vol)));
}

/// The values of a binary post-op's operand per output channel: one per
/// channel ([1, C, 1...], any channel stride) or one for all; empty for
/// any other operand.
std::vector<float> per_channel_values(const dnnl::memory::desc& md, const dnn::PlainArg& arg, std::size_t channels) {
  if (md.data_type() != dnnl::memory::data_type::f32 || md.data.format_kind != dnnl_blocked) return {};
  const auto dims = md.dims();
  if (dims.size() < 2) return {};
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (d != 1 && dims[d] != 1) return {};
  const auto* data = reinterpret_cast<const float*>(arg.tensor->base());
  std::vector<float> values(channels);
  if (dims[1] == 1) {
    std::fill(values.begin(), values.end(), data[0]);
  } else if (static_cast<std::size_t>(dims[1]) == channels) {
    const auto stride = md.data.format_desc.blocking.strides[1];
    for (std::size_t c = 0; c < channels; ++c) values[c] = data[static_cast<std::int64_t>(c) * stride];
  } else {
    return {};
  }
  return values;
}

/// A convolution, its post-ops and their operands.
struct ConvWithPostOps {
  ConvTensors t;
  dnnl::primitive_attr attr;
  std::vector<dnn::PlainArg> post_args;
};

/// Post-ops that begin by multiplying by one value per output channel (or
/// one value), then may add or subtract one per channel: inference batch
/// norm's affine map after a convolution. The convolution computes them
/// itself, as conv(x, w * s) with bias b * s + t, instead of as oneDNN
/// binary post-ops, which cost little on its blocked-input kernels (a 14 %
/// slower convolution at 32 -> 64 channels, 14 x 14) but slowed its
/// first-layer kernel (a row-major input of 1 channel) 4x: Fashion-MNIST's
/// first layer at batch 1000, 5.4 ms plain, 21.2 ms with the two post-ops
/// and relu. The scaled weights are new on every call, so they are made
/// only where they are small beside the output (a layer with large weights
/// and a small output would pay more to scale and reorder them than the
/// post-ops cost). The results differ from the post-ops' in the last bits.
/// nullopt where the post-ops are not of that form.
std::optional<ConvWithPostOps> fold_channel_affine(const Context& ctx, const ConvTensors& t, const CpuTensor& y,
                                                   const dnnl::primitive_attr& attr,
                                                   std::span<const dnn::PlainArg> post_args) {
  constexpr std::size_t kOutputsPerWeight = 16;
  const std::size_t channels = y.shape[1];
  if (y.num_elements() < kOutputsPerWeight * t.w->num_elements() || t.w->dtype != DType::F32) return std::nullopt;
  const dnnl::post_ops post = attr.get_post_ops();
  // Post-op i's algorithm and its operand's value per channel, when it is a
  // binary op with such an operand (undef and no values otherwise).
  const auto channel_step = [&](int i) -> std::pair<dnnl::algorithm, std::vector<float>> {
    if (i >= post.len() || post.kind(i) != dnnl::primitive::kind::binary) return {dnnl::algorithm::undef, {}};
    dnnl::algorithm alg{};
    dnnl::memory::desc md;
    post.get_params_binary(i, alg, md);
    const dnn::PlainArg* arg = post_op_operand(post_args, i);
    return {alg, arg ? per_channel_values(md, *arg, channels) : std::vector<float>{}};
  };
  const auto [first, scale] = channel_step(0);
  if (first != dnnl::algorithm::binary_mul || scale.empty()) return std::nullopt;
  int folded = 1;
  std::vector<float> shift(channels, 0.0f);
  if (const auto [second, values] = channel_step(1);
      !values.empty() && (second == dnnl::algorithm::binary_add || second == dnnl::algorithm::binary_sub)) {
    const float sign = second == dnnl::algorithm::binary_sub ? -1.0f : 1.0f;
    for (std::size_t c = 0; c < channels; ++c) shift[c] = sign * values[c];
    folded = 2;
  }
  // The post-ops after the folded ones, their operands renumbered.
  ConvWithPostOps out;
  dnnl::post_ops rest;
  for (int i = folded; i < post.len(); ++i) {
    const int at = rest.len();
    switch (post.kind(i)) {
      case dnnl::primitive::kind::sum: {
        float s = 0;
        dnnl::memory::data_type dt{};
        post.get_params_sum(i, s, dt);
        rest.append_sum(s, dt);
        break;
      }
      case dnnl::primitive::kind::eltwise: {
        float s = 0, alpha = 0, beta = 0;
        dnnl::algorithm alg{};
        post.get_params_eltwise(i, s, alg, alpha, beta);
        rest.append_eltwise(s, alg, alpha, beta);
        break;
      }
      case dnnl::primitive::kind::binary: {
        dnnl::algorithm alg{};
        dnnl::memory::desc md;
        post.get_params_binary(i, alg, md);
        const dnn::PlainArg* arg = post_op_operand(post_args, i);
        if (!arg) return std::nullopt;
        rest.append_binary(alg, md);
        out.post_args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(at) | DNNL_ARG_SRC_1, arg->md, arg->tensor});
        break;
      }
      default: return std::nullopt;
    }
  }
  out.attr.set_post_ops(rest);
  out.t = t;
  out.t.w = ctx.output({Shape(t.w->shape), DType::F32});
  const std::size_t per_channel = t.w->num_elements() / channels;
  const float* w = t.w->data<float>();
  float* scaled = out.t.w->data<float>();
  for (std::size_t c = 0; c < channels; ++c)
    for (std::size_t i = 0; i < per_channel; ++i) scaled[c * per_channel + i] = w[c * per_channel + i] * scale[c];
  out.t.bias = ctx.output({Shape{channels}, DType::F32});
  const float* b = t.bias ? t.bias->data<float>() : nullptr;
  float* bias = out.t.bias->data<float>();
  for (std::size_t c = 0; c < channels; ++c) bias[c] = (b ? b[c] : 0.0f) * scale[c] + shift[c];
  return out;
}

}  // namespace

bool conv_f32_with_post_ops(const Context& ctx, const ir::Conv& op, Inputs in, host::CpuTensor& y,
                            const dnnl::primitive_attr& attr, std::span<const dnn::PlainArg> post_args,
                            SumOperand* sum) {
  if (y.dtype != DType::F32 || y.num_elements() == 0 || op.stride.size() > 3) return false;
  const ConvTensors t = dnn::conv_inputs(ctx, in, op.has_bias);
  if (t.x->dtype != DType::F32 || t.x->num_elements() == 0 || t.w->num_elements() == 0) return false;
  if (auto folded = fold_channel_affine(ctx, t, y, attr, post_args))
    return dnnl_conv(ctx, folded->t, y, op, dnnl::memory::data_type::f32, true, &folded->attr, folded->post_args, sum);
  return dnnl_conv(ctx, t, y, op, dnnl::memory::data_type::f32, true, &attr, post_args, sum);
}

Result kernel(const Context& ctx, const ir::Conv& op, Inputs in, Outputs out) {
  return dnn::run_conv(
      ctx, op, in, out,
      [&](const ConvTensors& t, CpuTensor& y, dnnl::memory::data_type dt) {
        // The kernel's own output may stay blocked; an f32 staging buffer
        // for a half dtype is read back here, so it may not.
        return dnnl_conv(ctx, t, y, op, dt, y.dtype == out[0].dtype);
      },
      [&]<class T>(const ConvTensors& t, CpuTensor& y) { loop_conv<T>(t, y, op); });
}

}  // namespace burn::flex
