// Convolution, transposed convolution and the convolution weight gradient as
// implicit GEMMs (shaders/conv.comp): 64x64 output tiles per workgroup and
// group, the im2col operand formed while staging tiles in workgroup memory;
// 4-wide vector loads and stores where the geometry allows (vec4.hpp).
// A GEMM depth K past kSplitK (the weight gradient's is batch x output
// positions: 50,176 for a batch of 64 28x28 images) runs as one dispatch per
// K range, summed in a scratch accumulator: lavapipe ends a shader after
// 65,535 loop iterations, which once cut a 1x1 weight gradient over a
// 200x200 image from 40,000 to 38,833.
#include <algorithm>

#include <fmt/format.h>

#include "backends/vulkan/kernels.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/spatial.hpp"
#include "backends/vulkan/vec4.hpp"

namespace burn::vulkan {
namespace {

/// Mirrors the Params block of shaders/conv.comp.
struct ConvParams {
  std::uint32_t m = 0, n = 0, k = 0;
  std::uint32_t batch = 0, c_in = 0, c_out = 0, cin_g = 0, cout_g = 0;
  std::uint32_t nsp = 0, in_vol = 0, out_vol = 0, k_vol = 0, has_bias = 0;
  std::uint32_t x_off = 0, w_off = 0, bias_off = 0;  // element offsets of the dense inputs
  std::uint32_t vec = 0;                             // vector paths (vector_paths)
  std::uint32_t k_begin = 0, k_end = 0, pass = 0;    // this dispatch's range of K, kReadPart | kWritePart
  std::uint32_t in[kMaxSpatial]{}, out[kMaxSpatial]{}, kext[kMaxSpatial]{}, stride[kMaxSpatial]{},
      padding[kMaxSpatial]{}, dilation[kMaxSpatial]{};
};

enum Mode : std::uint32_t { kConv = 0, kTransposed = 1, kWeightGrad = 2 };

/// The longest K range one dispatch covers: 256 BK steps. A step costs about
/// 30 loop iterations per spatial dim of the tap decode (measured on
/// lavapipe: about 50 with 2-D taps, 64-87 with 3-D ones), so up to 3 dims
/// take 4096 per pass and more dims half that: at most about a third of
/// lavapipe's cap. A multiple of 16, so ranges keep vector alignment.
constexpr std::uint64_t kSplitK = 4096;
constexpr std::uint32_t kReadPart = 1, kWritePart = 2;  // p_pass bits in conv.comp

std::uint64_t volume(const std::vector<std::size_t>& shape, std::size_t first) {
  std::uint64_t v = 1;
  for (std::size_t i = first; i < shape.size(); ++i) v *= shape[i];
  return v;
}

/// Fills the geometry: x's spatial extent, the conv output's and the kernel's.
void geometry(const Context& ctx, ConvParams& p, const std::vector<std::size_t>& x, const std::vector<std::size_t>& out,
              const std::vector<std::size_t>& kernel, std::size_t groups) {
  require_spatial(ctx, x.size() - 2);
  p.nsp = static_cast<std::uint32_t>(x.size() - 2);
  put_spatial(p.in, x, 2);
  put_spatial(p.out, out, 2);
  put_spatial(p.kext, kernel);
  p.in_vol = static_cast<std::uint32_t>(volume(x, 2));
  p.out_vol = static_cast<std::uint32_t>(volume(out, 2));
  p.k_vol = static_cast<std::uint32_t>(volume(kernel, 0));
  p.batch = static_cast<std::uint32_t>(x[0]);
  p.c_in = static_cast<std::uint32_t>(x[1]);
  p.c_out = static_cast<std::uint32_t>(out[1]);
  p.cin_g = static_cast<std::uint32_t>(x[1] / groups);
  p.cout_g = static_cast<std::uint32_t>(out[1] / groups);
}

/// A 1-tap kernel with stride 1 and no padding, output extent = input
/// extent: the im2col operand is x itself.
bool pointwise(const ConvParams& p) {
  for (std::uint32_t d = 0; d < p.nsp; ++d)
    if (p.kext[d] != 1 || p.stride[d] != 1 || p.padding[d] != 0 || p.in[d] != p.out[d]) return false;
  return true;
}

/// The shader's p_vec (A_VEC | B_VEC << 2 | OUT_VEC << 3): vector paths only
/// where no 4-wide vector crosses a row (or image) and every vector starts
/// aligned.
std::uint32_t vector_paths(Mode mode, const ConvParams& p, const VkTensor& y, const VkTensor& x, const VkTensor& w) {
  std::uint32_t a_vec = 0, b_vec = 0, out_vec = 0;
  const bool w_ok = binding_vec4_aligned(w) && multiple_of_4(w.offset);
  if (mode == kConv && w_ok && p.k % 4 == 0) a_vec = 1;                             // weight rows along k
  if (mode == kWeightGrad && w_ok && p.out_vol % 4 == 0) a_vec = 1;                 // gradient planes along k
  if (mode == kTransposed && w_ok && p.k_vol == 1 && p.cout_g % 4 == 0) a_vec = 2;  // weight along m
  if (pointwise(p) && p.out_vol % 4 == 0 && binding_vec4_aligned(x) && multiple_of_4(x.offset)) b_vec = 1;
  if (binding_vec4_aligned(y) && (mode == kWeightGrad ? p.n % 4 == 0 : p.out_vol % 4 == 0)) out_vec = 1;
  return a_vec | b_vec << 2 | out_vec << 3;
}

void run(const Context& ctx, Mode mode, ConvParams& p, std::uint64_t m, std::uint64_t n, std::uint64_t k,
         std::size_t groups, const VkTensor& y, const VkTensor& x, const VkTensor& w, const VkTensor* bias) {
  require_index_range(ctx, m * k, "the GEMM's rows times its depth");
  require_index_range(ctx, n * k, "the GEMM's columns times its depth");
  p.m = static_cast<std::uint32_t>(m);
  p.n = static_cast<std::uint32_t>(n);
  p.k = static_cast<std::uint32_t>(k);
  if (m == 0 || n == 0) return;
  const std::uint64_t gx = (n + 63) / 64, gy = (m + 63) / 64;
  const auto& limit = ctx.backend.gpu().adapter().limits.maxComputeWorkGroupCount;
  if (gx > limit[0] || gy > limit[1] || groups > limit[2])
    throw Error(ctx.op, fmt::format("{} x {} tiles in {} groups are more than {} dispatches at once; split the batch",
                                    gx, gy, groups, ctx.backend.label()));
  p.has_bias = bias ? 1u : 0u;
  p.x_off = static_cast<std::uint32_t>(x.offset);
  p.w_off = static_cast<std::uint32_t>(w.offset);
  p.bias_off = bias ? static_cast<std::uint32_t>(bias->offset) : 0u;
  p.vec = vector_paths(mode, p, y, x, w);
  const std::uint32_t constants[] = {mode};
  const VkPipeline pipeline = ctx.pipeline(fmt::format("conv_{}", dtype_suffix(y.dtype)), constants);
  auto dispatch = [&](const Binding& part) {
    const Binding bindings[] = {y.binding(), x.binding(), w.binding(), (bias ? *bias : x).binding(), part};
    ctx.stream().dispatch(pipeline, bindings, std::as_bytes(std::span(&p, 1)), static_cast<std::uint32_t>(gx),
                          static_cast<std::uint32_t>(gy), static_cast<std::uint32_t>(groups));
  };
  const std::uint64_t split = p.nsp <= 3 ? kSplitK : kSplitK / 2;
  const std::uint64_t passes = (k + split - 1) / split;
  p.k_begin = 0;
  p.k_end = p.k;
  p.pass = 0;
  if (passes <= 1) {
    dispatch(y.binding());  // `part` is not read: any valid buffer
    return;
  }
  const VkTensorPtr part = ctx.output(ir::TensorSpec{Shape(y.shape), shader_compute_dtype(y.dtype)});
  for (std::uint64_t i = 0; i < passes; ++i) {
    p.k_begin = static_cast<std::uint32_t>(i * split);
    p.k_end = static_cast<std::uint32_t>(std::min(k, (i + 1) * split));
    p.pass = (i > 0 ? kReadPart : 0u) | (i + 1 < passes ? kWritePart : 0u);
    dispatch(part->binding());
  }
}

std::vector<std::size_t> spatial_of(const std::vector<std::size_t>& shape) {
  return std::vector<std::size_t>(shape.begin() + 2, shape.end());
}

VkTensorPtr dense(const Context& ctx, const backend::Input& in) { return contiguous(ctx, as_vk_ptr(in.primitive)); }

}  // namespace

Result kernel(const Context& ctx, const ir::Conv& op, Inputs in, Outputs out) {
  const VkTensorPtr x = dense(ctx, in[0]), w = dense(ctx, in[1]);
  const VkTensorPtr bias = op.has_bias ? dense(ctx, in[2]) : nullptr;
  auto y = ctx.output(out[0]);
  ConvParams p;
  geometry(ctx, p, x->shape, y->shape, spatial_of(w->shape), op.groups);
  put_spatial(p.stride, op.stride);
  put_spatial(p.padding, op.padding);
  put_spatial(p.dilation, op.dilation);
  run(ctx, kConv, p, p.cout_g, std::uint64_t{p.batch} * p.out_vol, std::uint64_t{p.cin_g} * p.k_vol, op.groups, *y, *x,
      *w, bias.get());
  return {y};
}

Result kernel(const Context& ctx, const ir::ConvTranspose& op, Inputs in, Outputs out) {
  const VkTensorPtr x = dense(ctx, in[0]), w = dense(ctx, in[1]);
  const VkTensorPtr bias = op.has_bias ? dense(ctx, in[2]) : nullptr;
  auto y = ctx.output(out[0]);
  ConvParams p;
  geometry(ctx, p, x->shape, y->shape, spatial_of(w->shape), op.groups);
  put_spatial(p.stride, op.stride);
  put_spatial(p.padding, op.padding);
  put_spatial(p.dilation, op.dilation);
  run(ctx, kTransposed, p, p.cout_g, std::uint64_t{p.batch} * p.out_vol, std::uint64_t{p.cin_g} * p.k_vol, op.groups,
      *y, *x, *w, bias.get());
  return {y};
}

Result kernel(const Context& ctx, const ir::ConvWeightGrad& op, Inputs in, Outputs out) {
  const VkTensorPtr x = dense(ctx, in[0]), grad = dense(ctx, in[1]);
  auto y = ctx.output(out[0]);
  ConvParams p;
  // The conv's output is the gradient's shape.
  geometry(ctx, p, x->shape, grad->shape, op.kernel, op.groups);
  put_spatial(p.stride, op.stride);
  put_spatial(p.padding, op.padding);
  put_spatial(p.dilation, op.dilation);
  run(ctx, kWeightGrad, p, p.cout_g, std::uint64_t{p.cin_g} * p.k_vol, std::uint64_t{p.batch} * p.out_vol, op.groups,
      *y, *x, *grad, nullptr);
  return {y};
}

}  // namespace burn::vulkan
