// Backward of convolution and transposed convolution, each written with the
// other: a conv's input gradient is a transposed conv of the cotangent with
// the same weight (and the other way round), and either op's weight gradient
// is a convolution that correlates the input with the cotangent (the batch
// acting as channels, stride and dilation swapped).
#include <cstdint>

#include "autodiff/rules/module_util.hpp"

namespace burn::autodiff {
namespace {

using module_rules::Sizes;

// Correlates `big` [N, G*a, *S] with `small` [N, B, *T] (B divisible by G)
// into the weight gradient [B, a, *kernel]:
//   r[b, j, k] = sum_n sum_t small[n, b, t] * big[n, grp(b)*a + j, t*s + k*d - p]
// where grp(b) = b / (B/G). As a convolution: `big` becomes the input
// [a, G*N, *S] (channels ordered group-major, so group gi sees big's group gi
// over the whole batch), `small` the kernel [B, N, *T]; the forward's stride
// acts as the dilation and its dilation as the stride. The result has at
// least `kernel` positions per axis; the extra ones belong to no tap.
TensorRef correlate(const TensorRef& big, const TensorRef& small, const Sizes& stride, const Sizes& padding,
                    const Sizes& dilation, std::size_t groups, const Sizes& kernel) {
  const Shape& bs = big->spec.shape;
  const std::size_t n = bs[0], a = bs[1] / groups, rank = bs.rank();
  Sizes split{n, groups, a};
  for (std::size_t d = 2; d < rank; ++d) split.push_back(bs[d]);
  std::vector<std::int64_t> axes{2, 1, 0};
  for (std::size_t d = 3; d < rank + 1; ++d) axes.push_back(static_cast<std::int64_t>(d));
  TensorRef input = detail::permute(detail::reshape_exact(big, Shape(split)), axes);
  Sizes merged{a, groups * n};
  for (std::size_t d = 2; d < rank; ++d) merged.push_back(bs[d]);
  input = detail::reshape_exact(input, Shape(merged));
  const TensorRef kern = detail::swap_dims(small, 0, 1);

  TensorRef r = detail::conv(input, kern, std::nullopt, dilation, padding, stride, groups);
  Sizes want{a, small->spec.shape[1]};
  want.insert(want.end(), kernel.begin(), kernel.end());
  return detail::swap_dims(module_rules::fit_to(r, Shape(want)), 0, 1);
}

// The weight gradient of a conv with input `x` and output cotangent `g`:
// the backend's dedicated kernel when it has one (oneDNN's backward-weights
// on flex is several times faster than a conv with a huge kernel), else the
// correlation above, which every backend can run.
TensorRef weight_grad(const TensorRef& x, const TensorRef& g, const Sizes& stride, const Sizes& padding,
                      const Sizes& dilation, std::size_t groups, const Sizes& kernel) {
  const ir::Op op = ir::ConvWeightGrad{kernel, stride, padding, dilation, groups};
  const Sizes out = module_rules::spatial(g->spec.shape), in = module_rules::spatial(x->spec.shape);
  // The dedicated op needs g to be exactly the conv output of x (a transposed
  // conv's padding_out can break that); the correlation fits any size.
  bool exact = true;
  for (std::size_t i = 0; i < in.size() && exact; ++i) {
    const std::size_t span = dilation[i] * (kernel[i] - 1) + 1;
    exact = in[i] + 2 * padding[i] >= span && (in[i] + 2 * padding[i] - span) / stride[i] + 1 == out[i];
  }
  if (exact && x->device.supports_op(op)) {
    const TensorRef inputs[] = {x, g};
    return detail::execute1(op, inputs);
  }
  return correlate(x, g, stride, padding, dilation, groups, kernel);
}

// Zero gradients for every wanted input (no cotangent, or nothing to sum).
Grads zero_grads(const VjpArgs& a) {
  Grads out(a.inputs.size());
  for (std::size_t i = 0; i < a.inputs.size(); ++i)
    if (wants(a, i)) out[i] = zeros_like(a.inputs[i]);
  return out;
}

}  // namespace

// x [N, C_in, *L], w [C_out, C_in/G, *K], y [N, C_out, *O] with
// O = (L + 2p - d(K-1) - 1) / s + 1.
// Keeps x and the weight: never the bias, never the output.
SavedValues saved(const ir::Conv&) { return kKeepInputs01; }
Grads rule(const ir::Conv& op, const VjpArgs& a) {
  if (a.cotangents.empty() || !a.cotangents[0]) return zero_grads(a);
  const TensorRef& x = a.inputs[0];
  const TensorRef& w = a.inputs[1];
  const TensorRef& g = *a.cotangents[0];
  Grads out(a.inputs.size());
  // The bias gradient only needs g (x may be empty while y holds the bias).
  if (op.has_bias && wants(a, 2)) out[2] = module_rules::sum_to_channels(g);
  const bool empty = module_rules::numel(x) == 0 || module_rules::numel(g) == 0;
  const Sizes in = module_rules::spatial(x->spec.shape), k = module_rules::spatial(w->spec.shape);
  const Sizes o = module_rules::spatial(g->spec.shape);

  if (wants(a, 0)) {
    if (empty) {
      out[0] = zeros_like(x);
    } else {
      // The transposed conv rebuilds (O-1)s + d(K-1) + 1 - 2p positions; the
      // forward's floor division may have left up to s-1 trailing inputs that
      // no window touched, which padding_out adds back (their gradient is 0).
      Sizes pad_out(in.size());
      for (std::size_t i = 0; i < in.size(); ++i) {
        const std::size_t rebuilt = (o[i] - 1) * op.stride[i] + op.dilation[i] * (k[i] - 1) + 1;
        const std::size_t padded = in[i] + 2 * op.padding[i];
        pad_out[i] = padded > rebuilt ? std::min(padded - rebuilt, op.stride[i] - 1) : 0;
      }
      const TensorRef dx =
          detail::conv_transpose(g, w, std::nullopt, op.stride, op.padding, pad_out, op.dilation, op.groups);
      out[0] = module_rules::fit_to(dx, x->spec.shape);
    }
  }
  if (wants(a, 1)) out[1] = empty ? zeros_like(w) : weight_grad(x, g, op.stride, op.padding, op.dilation, op.groups, k);
  return out;
}

// x [N, C_in, *L], w [C_in, C_out/G, *K], y [N, C_out, *O] with
// O = (L-1)s + d(K-1) + padding_out + 1 - 2p: y[.., i*s + k*d - p] += x[.., i] w[.., k].
// Keeps x and the weight: never the bias, never the output.
SavedValues saved(const ir::ConvTranspose&) { return kKeepInputs01; }
Grads rule(const ir::ConvTranspose& op, const VjpArgs& a) {
  if (a.cotangents.empty() || !a.cotangents[0]) return zero_grads(a);
  const TensorRef& x = a.inputs[0];
  const TensorRef& w = a.inputs[1];
  const TensorRef& g = *a.cotangents[0];
  Grads out(a.inputs.size());
  if (op.has_bias && wants(a, 2)) out[2] = module_rules::sum_to_channels(g);
  const bool empty = module_rules::numel(x) == 0 || module_rules::numel(g) == 0;

  // dx[.., i] = sum_k g[.., i*s + k*d - p] w[.., k]: a plain conv with the same
  // weight layout. It yields L + floor(padding_out / s) positions; padding_out
  // may reach the dilation, so extra ones are cut.
  if (wants(a, 0))
    out[0] = empty
                 ? zeros_like(x)
                 : module_rules::fit_to(detail::conv(g, w, std::nullopt, op.stride, op.padding, op.dilation, op.groups),
                                        x->spec.shape);
  if (wants(a, 1))
    out[1] =
        empty ? zeros_like(w)
              : weight_grad(g, x, op.stride, op.padding, op.dilation, op.groups, module_rules::spatial(w->spec.shape));
  return out;
}

// A backward kernel (weight_grad above runs it under no-grad): it has no rule
// of its own, and keeps everything should it ever be recorded.
SavedValues saved(const ir::ConvWeightGrad&) { return kKeepAll; }
Grads rule(const ir::ConvWeightGrad& op, const VjpArgs&) {
  throw Error(ir::op_name(op), "is a backward kernel and has no backward rule of its own");
}

}  // namespace burn::autodiff
