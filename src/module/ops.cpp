// Module operation frontends: convolutions, pools and interpolation map onto
// their IR ops (which validate shapes); embedding and linear are composites;
// layer norm is its op where the device has it, else a composite.
#include <burn/module/ops.hpp>

#include <array>

#include <burn/amp/autocast.hpp>
#include <burn/autodiff.hpp>

#include "quant/hooks.hpp"
#include "tensor/normalize.hpp"

namespace burn::detail {
namespace {

std::vector<std::size_t> vec(std::span<const std::size_t> s) { return {s.begin(), s.end()}; }

std::vector<TensorRef> conv_inputs(const TensorRef& x, const TensorRef& w, const OptRef& bias) {
  std::vector<TensorRef> in{x, w};
  if (bias) in.push_back(*bias);
  return in;
}

ir::InterpolateMode to_ir(module::InterpolateMode mode) {
  switch (mode) {
    case module::InterpolateMode::Nearest: return ir::InterpolateMode::Nearest;
    case module::InterpolateMode::Bilinear: return ir::InterpolateMode::Bilinear;
    case module::InterpolateMode::Bicubic: return ir::InterpolateMode::Bicubic;
  }
  throw Error("interpolate", "unknown interpolation mode");
}

}  // namespace

TensorRef conv(const TensorRef& x, const TensorRef& w, const OptRef& bias, std::span<const std::size_t> stride,
               std::span<const std::size_t> padding, std::span<const std::size_t> dilation, std::size_t groups) {
  ir::Conv op{vec(stride), vec(padding), vec(dilation), groups, bias.has_value()};
  // A Conv2d layer of a quantized model (or one being calibrated).
  if (quant::detail::may_apply() && stride.size() == 2) {
    const auto convolve = [&](const TensorRef& input) { return execute1(op, conv_inputs(input, w, bias)); };
    if (auto y = quant::detail::conv2d_hook(x, w, bias, op, convolve)) return *y;
  }
  return execute1(op, conv_inputs(x, w, bias));
}

TensorRef conv_transpose(const TensorRef& x, const TensorRef& w, const OptRef& bias,
                         std::span<const std::size_t> stride, std::span<const std::size_t> padding,
                         std::span<const std::size_t> padding_out, std::span<const std::size_t> dilation,
                         std::size_t groups) {
  ir::ConvTranspose op{vec(stride), vec(padding), vec(padding_out), vec(dilation), groups, bias.has_value()};
  return execute1(op, conv_inputs(x, w, bias));
}

std::pair<TensorRef, std::optional<TensorRef>> max_pool(const TensorRef& x, std::span<const std::size_t> kernel,
                                                        std::span<const std::size_t> stride,
                                                        std::span<const std::size_t> padding,
                                                        std::span<const std::size_t> dilation, bool ceil_mode,
                                                        bool with_indices) {
  // When the pool is recorded for backward, compute the argmax positions now:
  // the node keeps its outputs, and max pool's backward rule then reuses them instead of
  // running the pool a second time (i64, wide enough for any plane).
  const bool for_backward = !with_indices && x->node && is_grad_enabled();
  ir::MaxPool op{vec(kernel),
                 vec(stride),
                 vec(padding),
                 vec(dilation),
                 ceil_mode,
                 with_indices || for_backward,
                 for_backward ? DType::I64 : default_int_dtype(x)};
  // A copy: a span over the caller's own handle would offer its storage to
  // the backend as handed over (use count 1).
  const std::array<TensorRef, 1> input{x};
  auto out = execute(op, input);
  if (!with_indices) return {std::move(out.at(0)), std::nullopt};
  return {std::move(out.at(0)), std::move(out.at(1))};
}

TensorRef avg_pool(const TensorRef& x, std::span<const std::size_t> kernel, std::span<const std::size_t> stride,
                   std::span<const std::size_t> padding, bool count_include_pad, bool ceil_mode) {
  return execute1(ir::AvgPool{vec(kernel), vec(stride), vec(padding), count_include_pad, ceil_mode}, {x});
}

TensorRef adaptive_avg_pool(const TensorRef& x, std::span<const std::size_t> output_size) {
  return execute1(ir::AdaptiveAvgPool{vec(output_size)}, {x});
}

TensorRef interpolate(const TensorRef& x, std::span<const std::size_t> output_size, module::InterpolateMode mode,
                      bool align_corners) {
  return execute1(ir::Interpolate{vec(output_size), to_ir(mode), align_corners}, {x});
}

TensorRef embedding(const TensorRef& weights, const TensorRef& indices) {
  if (rank_of(weights) != 2)
    throw Error("embedding",
                fmt::format("weights must have shape [n_embedding, d_model], got {}", shape_of(weights).to_string()));
  if (rank_of(indices) != 2)
    throw Error("embedding",
                fmt::format("indices must have shape [batch, seq], got {}", shape_of(indices).to_string()));
  const std::size_t b = shape_of(indices)[0], s = shape_of(indices)[1], d = shape_of(weights)[1];
  return reshape_exact(select(weights, 0, reshape_exact(indices, Shape{b * s})), Shape{b, s, d});
}

TensorRef linear(const TensorRef& x, const TensorRef& weight, const OptRef& bias) {
  const std::size_t rank = rank_of(x);
  if (rank_of(weight) != 2)
    throw Error("linear", fmt::format("weight must have shape [d_in, d_out], got {}", shape_of(weight).to_string()));
  const std::size_t d_in = shape_of(weight)[0], d_out = shape_of(weight)[1];
  if (shape_of(x)[rank - 1] != d_in)
    throw Error("linear", fmt::format("input {} has {} features but the weight {} expects {}", shape_of(x).to_string(),
                                      shape_of(x)[rank - 1], shape_of(weight).to_string(), d_in));
  if (bias && shape_of(*bias) != Shape{d_out})
    throw Error("linear", fmt::format("bias must have shape [{}], got {}", d_out, shape_of(*bias).to_string()));
  // A Linear layer of a quantized model (or one being calibrated).
  if (quant::detail::may_apply())
    if (auto y = quant::detail::linear_hook(x, weight, bias)) return *y;

  // A 1-D input is one row; matmul needs rank 2.
  const TensorRef rows = rank == 1 ? unsqueeze_dim(x, 0) : x;
  const std::size_t r = rank_of(rows);
  // Weight and bias get leading unit dims so matmul and add broadcast over the batch dims.
  std::vector<std::size_t> w_shape(r, 1), b_shape(r, 1);
  w_shape[r - 2] = d_in;
  w_shape[r - 1] = b_shape[r - 1] = d_out;
  TensorRef y = matmul(rows, reshape_exact(weight, Shape(w_shape)));
  if (bias) {
    // Under autocast the matmul's result is 16-bit, and so is the layer's:
    // the bias follows it (as in PyTorch) rather than promoting y to f32.
    TensorRef b = reshape_exact(*bias, Shape(b_shape));
    if (amp::autocast_dtype(x->device) == y->spec.dtype && is_float(b->spec.dtype) && b->spec.dtype != DType::F64)
      b = cast(b, y->spec.dtype);
    y = binary(ir::BinaryOp::Add, y, b);
  }
  if (rank == 2) {
    if (bias) mark_composite(y, Composite::Linear, {x, weight, *bias});
    else mark_composite(y, Composite::Linear, {x, weight});
  }
  return rank == 1 ? squeeze_dim(y, 0) : y;
}

TensorRef layer_norm(const TensorRef& x, const TensorRef& weight, const TensorRef& bias, double epsilon) {
  const ir::LayerNorm op{epsilon};
  if (x->device.supports_op(op)) return execute1(op, {x, weight, bias});
  // The same checks and messages as the op's on every device.
  const ir::TensorSpec specs[] = {x->spec, weight->spec, bias->spec};
  (void)ir::infer_outputs(op, specs);
  const auto last = static_cast<std::int64_t>(rank_of(x)) - 1;
  auto [var, mean] = var_mean_dim(x, last, 0);
  const TensorRef normalized = binary(ir::BinaryOp::Mul, binary(ir::BinaryOp::Sub, x, mean),
                                      unary(ir::UnaryOp::Rsqrt, binary_scalar(ir::BinaryOp::Add, var, epsilon)));
  std::vector<std::size_t> row(rank_of(x), 1);
  row.back() = shape_of(weight)[0];
  TensorRef y = binary(ir::BinaryOp::Mul, normalized, reshape_exact(weight, Shape(row)));
  y = binary(ir::BinaryOp::Add, y, reshape_exact(bias, Shape(row)));
  mark_composite(y, Composite::LayerNorm, {x, weight, bias}, 0, epsilon);  // one operator in an ONNX export
  return y;
}

}  // namespace burn::detail
