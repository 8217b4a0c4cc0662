// Convolution and transposed convolution over [N, C, *spatial] on the CUDA
// device, as generated kernels: one thread per output element summing its
// taps in order (the reference backend's loops), the transposed one as a
// gather (each output element collects the input positions whose taps land
// on it), and the weight gradient one thread per weight element summing
// over the batch and the output positions, so no two threads write one
// element. Floats accumulate in the compute type, ints wrap. cuDNN is the
// fast path still to come (docs/cuda.md).
#include <variant>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {
namespace {

std::string conv_source(bool transposed, std::size_t s, DType d, bool has_bias) {
  KernelText text;
  const std::string T = KernelText::compute_type(d);
  const std::string storage = KernelText::storage_type(d);
  const std::string acc_type = is_float(d) ? T : KernelText::wrapping_type(d);
  std::string body = fmt::format(
      "    const unsigned long long ov = i % p.out_vol;\n"
      "    const unsigned long long co = (i / p.out_vol) % p.c_out;\n"
      "    const unsigned long long batch = i / p.out_vol / p.c_out;\n"
      "    const unsigned long long cin_g = p.c_in / p.groups, cout_g = p.c_out / p.groups;\n"
      "    const unsigned long long g = co / cout_g;\n"
      "    long long o[{0}];\n"
      "    unsigned long long rest = ov;\n"
      "#pragma unroll\n"
      "    for (int d = {0} - 1; d >= 0; --d) {{\n"
      "      o[d] = (long long)(rest % p.out_extent[d]);\n"
      "      rest /= p.out_extent[d];\n"
      "    }}\n"
      "    {1} acc = {2};\n"
      "    for (unsigned long long cl = 0; cl < cin_g; ++cl) {{\n",
      s, acc_type,
      has_bias ? fmt::format("({})({})", acc_type, text.load(d, "((const " + storage + "*)p.bias)[co]")) : "0");
  if (transposed)
    body +=
        "      const unsigned long long ci = g * cin_g + cl;\n"
        "      const unsigned long long xbase = (batch * p.c_in + ci) * p.in_vol;\n"
        "      const unsigned long long wbase = (ci * cout_g + co % cout_g) * p.k_vol;\n";
  else
    body +=
        "      const unsigned long long xbase = (batch * p.c_in + g * cin_g + cl) * p.in_vol;\n"
        "      const unsigned long long wbase = (co * cin_g + cl) * p.k_vol;\n";
  std::string close;
  std::string x_at = "0", w_at = "0";
  for (std::size_t k = 0; k < s; ++k) {
    const std::string indent(6 + 2 * k, ' ');
    body += fmt::format("{0}for (long long t{1} = 0; t{1} < (long long)p.kernel[{1}]; ++t{1}) {{\n", indent, k);
    if (transposed)
      // Input position q / stride lands on this output through tap t.
      body += fmt::format(
          "{0}  const long long q{1} = o[{1}] + (long long)p.padding[{1}] - t{1} * (long long)p.dilation[{1}];\n"
          "{0}  if (q{1} < 0 || q{1} % (long long)p.stride[{1}] != 0) continue;\n"
          "{0}  const long long x{1} = q{1} / (long long)p.stride[{1}];\n"
          "{0}  if (x{1} >= (long long)p.in_extent[{1}]) continue;\n",
          indent, k);
    else
      body += fmt::format(
          "{0}  const long long x{1} = o[{1}] * (long long)p.stride[{1}] + t{1} * (long long)p.dilation[{1}] - "
          "(long long)p.padding[{1}];\n"
          "{0}  if (x{1} < 0 || x{1} >= (long long)p.in_extent[{1}]) continue;\n",
          indent, k);
    close.insert(0, indent + "}\n");
    x_at = fmt::format("({}) * (long long)p.in_extent[{}] + x{}", x_at, k, k);
    w_at = fmt::format("({}) * (long long)p.kernel[{}] + t{}", w_at, k, k);
  }
  const std::string indent(6 + 2 * s, ' ');
  body += fmt::format("{}acc += ({})({}) * ({})({});\n", indent, acc_type,
                      text.load(d, fmt::format("((const {}*)p.x)[xbase + {}]", storage, x_at)), acc_type,
                      text.load(d, fmt::format("((const {}*)p.w)[wbase + {}]", storage, w_at)));
  body += close;
  body += "    }\n";
  body += fmt::format("    (({}*)p.out)[i] = {};\n", storage, text.store(d, fmt::format("({})acc", T)));
  const std::string fields = fmt::format(
      "  unsigned long long in_extent[{0}];\n"
      "  unsigned long long out_extent[{0}];\n"
      "  unsigned long long kernel[{0}];\n"
      "  unsigned long long stride[{0}];\n"
      "  unsigned long long padding[{0}];\n"
      "  unsigned long long dilation[{0}];\n"
      "  unsigned long long c_in;\n"
      "  unsigned long long c_out;\n"
      "  unsigned long long groups;\n"
      "  unsigned long long in_vol;\n"
      "  unsigned long long out_vol;\n"
      "  unsigned long long k_vol;\n"
      "  unsigned long long x;\n"
      "  unsigned long long w;\n"
      "  unsigned long long bias;\n"
      "  unsigned long long out;\n",
      s);
  return grid_stride_kernel(transposed ? "transposed convolution" : "convolution", text.helpers(), fields, body);
}

/// The weight gradient: w_grad[co, cl, t] = Σ_batch Σ_o grad[batch, co, o] ·
/// x[batch, g·cin_g + cl, o·stride + t·dilation - padding].
std::string weight_grad_source(std::size_t s, DType d) {
  KernelText text;
  const std::string T = KernelText::compute_type(d);
  const std::string storage = KernelText::storage_type(d);
  std::string body = fmt::format(
      "    const unsigned long long cin_g = p.c_in / p.groups, cout_g = p.c_out / p.groups;\n"
      "    const unsigned long long kv = i % p.k_vol;\n"
      "    const unsigned long long cl = (i / p.k_vol) % cin_g;\n"
      "    const unsigned long long co = i / p.k_vol / cin_g;\n"
      "    const unsigned long long ci = (co / cout_g) * cin_g + cl;\n"
      "    long long t[{0}];\n"
      "    unsigned long long rest = kv;\n"
      "#pragma unroll\n"
      "    for (int d = {0} - 1; d >= 0; --d) {{\n"
      "      t[d] = (long long)(rest % p.kernel[d]);\n"
      "      rest /= p.kernel[d];\n"
      "    }}\n"
      "    {1} acc = 0;\n"
      "    for (unsigned long long batch = 0; batch < p.batch; ++batch) {{\n"
      "      const unsigned long long xbase = (batch * p.c_in + ci) * p.in_vol;\n"
      "      const unsigned long long gbase = (batch * p.c_out + co) * p.out_vol;\n",
      s, T);
  std::string close;
  std::string x_at = "0", g_at = "0";
  for (std::size_t k = 0; k < s; ++k) {
    const std::string indent(6 + 2 * k, ' ');
    body += fmt::format(
        "{0}for (long long o{1} = 0; o{1} < (long long)p.out_extent[{1}]; ++o{1}) {{\n"
        "{0}  const long long x{1} = o{1} * (long long)p.stride[{1}] + t[{1}] * (long long)p.dilation[{1}] - "
        "(long long)p.padding[{1}];\n"
        "{0}  if (x{1} < 0 || x{1} >= (long long)p.in_extent[{1}]) continue;\n",
        indent, k);
    close.insert(0, indent + "}\n");
    x_at = fmt::format("({}) * (long long)p.in_extent[{}] + x{}", x_at, k, k);
    g_at = fmt::format("({}) * (long long)p.out_extent[{}] + o{}", g_at, k, k);
  }
  body += fmt::format("{}acc += {} * {};\n", std::string(6 + 2 * s, ' '),
                      text.load(d, fmt::format("((const {}*)p.grad)[gbase + {}]", storage, g_at)),
                      text.load(d, fmt::format("((const {}*)p.x)[xbase + {}]", storage, x_at)));
  body += close;
  body += "    }\n";
  body += fmt::format("    (({}*)p.out)[i] = {};\n", storage, text.store(d, "acc"));
  const std::string fields = fmt::format(
      "  unsigned long long in_extent[{0}];\n"
      "  unsigned long long out_extent[{0}];\n"
      "  unsigned long long kernel[{0}];\n"
      "  unsigned long long stride[{0}];\n"
      "  unsigned long long padding[{0}];\n"
      "  unsigned long long dilation[{0}];\n"
      "  unsigned long long batch;\n"
      "  unsigned long long c_in;\n"
      "  unsigned long long c_out;\n"
      "  unsigned long long groups;\n"
      "  unsigned long long in_vol;\n"
      "  unsigned long long out_vol;\n"
      "  unsigned long long k_vol;\n"
      "  unsigned long long x;\n"
      "  unsigned long long grad;\n"
      "  unsigned long long out;\n",
      s);
  return grid_stride_kernel("convolution weight gradient", text.helpers(), fields, body);
}

/// ConvWeightGrad: inputs x [N, C_in, *in] and grad [N, C_out, *out], output
/// [C_out, C_in/groups, *kernel].
std::vector<Launch> plan_weight_grad(const ir::ConvWeightGrad& op, std::span<const Operand> inputs,
                                     const Operand& out) {
  const Shape& xs = inputs[0].spec.shape;
  const Shape& gs = inputs[1].spec.shape;
  const std::size_t s = xs.rank() - 2;
  if (out.spec.shape.num_elements() == 0) return {};
  Launch l;
  l.source = weight_grad_source(s, inputs[0].spec.dtype);
  auto& p = l.params;
  p.push_back(out.spec.shape.num_elements());
  std::uint64_t in_vol = 1, out_vol = 1, k_vol = 1;
  for (std::size_t d = 0; d < s; ++d) p.push_back(xs[2 + d]), in_vol *= xs[2 + d];
  for (std::size_t d = 0; d < s; ++d) p.push_back(gs[2 + d]), out_vol *= gs[2 + d];
  for (std::size_t d = 0; d < s; ++d) p.push_back(op.kernel[d]), k_vol *= op.kernel[d];
  for (const auto* v : {&op.stride, &op.padding, &op.dilation}) p.insert(p.end(), v->begin(), v->end());
  p.insert(p.end(),
           {xs[0], xs[1], gs[1], op.groups, in_vol, out_vol, k_vol, inputs[0].address, inputs[1].address, out.address});
  return {l};
}

}  // namespace

std::vector<Launch> plan_conv(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs) {
  const Operand& x = inputs[0];
  const Operand& w = inputs[1];
  const Operand& out = outputs[0];
  const Shape& xs = x.spec.shape;
  const Shape& ws = w.spec.shape;
  const Shape& os = out.spec.shape;
  const std::size_t s = xs.rank() - 2;
  std::vector<std::size_t> stride, padding, dilation;
  std::size_t groups = 1;
  bool has_bias = false;
  bool transposed = false;
  if (const auto* grad = std::get_if<ir::ConvWeightGrad>(&op)) return plan_weight_grad(*grad, inputs, out);
  if (const auto* c = std::get_if<ir::Conv>(&op)) {
    stride = c->stride, padding = c->padding, dilation = c->dilation, groups = c->groups, has_bias = c->has_bias;
  } else if (const auto* t = std::get_if<ir::ConvTranspose>(&op)) {
    stride = t->stride, padding = t->padding, dilation = t->dilation, groups = t->groups, has_bias = t->has_bias;
    transposed = true;
  } else {
    throw Error(ir::op_name(op), "not a convolution (an internal error of the cuda backend)");
  }
  if (os.num_elements() == 0) return {};
  Launch l;
  l.source = conv_source(transposed, s, x.spec.dtype, has_bias);
  auto& p = l.params;
  p.push_back(os.num_elements());
  std::uint64_t in_vol = 1, out_vol = 1, k_vol = 1;
  for (std::size_t d = 0; d < s; ++d) p.push_back(xs[2 + d]), in_vol *= xs[2 + d];
  for (std::size_t d = 0; d < s; ++d) p.push_back(os[2 + d]), out_vol *= os[2 + d];
  for (std::size_t d = 0; d < s; ++d) p.push_back(ws[2 + d]), k_vol *= ws[2 + d];
  for (const auto* v : {&stride, &padding, &dilation}) p.insert(p.end(), v->begin(), v->end());
  p.insert(p.end(), {xs[1], os[1], groups, in_vol, out_vol, k_vol, x.address, w.address,
                     has_bias ? inputs[2].address : 0, out.address});
  return {l};
}

}  // namespace burn::cuda
