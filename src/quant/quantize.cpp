// quantize / dequantize as tensor operations on the tensor's own device, and
// the int8 matmul front end.
//
// Every level reduces to the same computation on a [groups, group_size] view:
// per tensor is one group, per block a row per block, per channel a row per
// index of the axis (moved to the front first).
#include <burn/quant/quantized_tensor.hpp>

#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include <burn/autodiff.hpp>
#include <burn/detail/ops.hpp>

#include "quant/int8_gemm.hpp"

namespace burn::quant {

int activation_qmax() { return kernels::exact_activation_qmax(); }

}  // namespace burn::quant

namespace burn::quant::detail {

using burn::detail::TensorRef;

namespace {

// The smallest scale a group gets: an all-zero group stores zeros, and its
// scale must still be a positive normal number for dequantize to be exact.
constexpr float kMinScale = std::numeric_limits<float>::min();

/// The axes order that moves `axis` to the front, and its inverse.
std::vector<std::int64_t> front_axis_order(std::size_t rank, std::size_t axis) {
  std::vector<std::int64_t> order{static_cast<std::int64_t>(axis)};
  for (std::size_t d = 0; d < rank; ++d)
    if (d != axis) order.push_back(static_cast<std::int64_t>(d));
  return order;
}
std::vector<std::int64_t> inverse_order(const std::vector<std::int64_t>& order) {
  std::vector<std::int64_t> inverse(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    inverse[static_cast<std::size_t>(order[i])] = static_cast<std::int64_t>(i);
  return inverse;
}

/// `t` as [groups, group_size] rows, one per scale.
TensorRef grouped(const TensorRef& t, const QuantScheme& scheme, std::size_t groups) {
  const Shape& shape = t->spec.shape;
  const std::size_t n = shape.num_elements();
  TensorRef rows = t;
  if (scheme.level == QuantLevel::Channel && scheme.axis != 0) {
    const auto order = front_axis_order(shape.rank(), scheme.axis);
    rows = burn::detail::permute(t, order);
  }
  return burn::detail::reshape_exact(rows, Shape{groups, n / groups});
}

/// The inverse of grouped(): rows back to `shape`.
TensorRef ungrouped(const TensorRef& rows, const QuantScheme& scheme, const Shape& shape) {
  if (scheme.level == QuantLevel::Channel && scheme.axis != 0) {
    const auto order = front_axis_order(shape.rank(), scheme.axis);
    std::vector<std::size_t> moved;
    moved.reserve(order.size());
    for (auto d : order) moved.push_back(shape[static_cast<std::size_t>(d)]);
    return burn::detail::permute(burn::detail::reshape_exact(rows, Shape(moved)), inverse_order(order));
  }
  return burn::detail::reshape_exact(rows, shape);
}

}  // namespace

std::size_t scale_count(const Shape& shape, const QuantScheme& scheme, const char* op) {
  const std::size_t n = shape.num_elements();
  if (n == 0) throw Error(op, "cannot quantize an empty tensor");
  switch (scheme.level) {
    case QuantLevel::Tensor: return 1;
    case QuantLevel::Channel:
      if (scheme.axis >= shape.rank())
        throw Error(op, fmt::format("channel axis {} is out of range for a tensor of shape {}; use an axis below {}",
                                    scheme.axis, shape.to_string(), shape.rank()));
      return shape[scheme.axis];
    case QuantLevel::Block:
      if (scheme.block_size == 0 || n % scheme.block_size != 0)
        throw Error(op, fmt::format("block size {} does not divide the {} elements of shape {}; pick a block size "
                                    "that divides the element count",
                                    scheme.block_size, n, shape.to_string()));
      return n / scheme.block_size;
  }
  throw Error(op, "unknown quantization level");
}

QuantizedRefs quantize(const TensorRef& x, const QuantScheme& scheme) {
  if (!is_float(x->spec.dtype))
    throw Error("quantize", fmt::format("expected a float tensor, got {}", dtype_name(x->spec.dtype)));
  const Shape shape = x->spec.shape;
  const std::size_t groups = scale_count(shape, scheme, "quantize");
  NoGradGuard no_grad;  // quantization is not differentiable; nothing is recorded
  TensorRef rows = grouped(x, scheme, groups);
  if (rows->spec.dtype != DType::F32) rows = burn::detail::cast(rows, DType::F32);
  using ir::BinaryOp;
  const auto qmax = static_cast<double>(scheme.qmax());
  TensorRef amax = burn::detail::reduce_dim(ir::ReduceOp::Max, burn::detail::unary(ir::UnaryOp::Abs, rows), 1);
  TensorRef scale = burn::detail::binary_scalar(BinaryOp::Div, amax, qmax);
  scale = burn::detail::clamp(scale, Scalar(static_cast<double>(kMinScale)), std::nullopt);
  TensorRef q = burn::detail::unary(ir::UnaryOp::Round, burn::detail::binary(BinaryOp::Div, rows, scale));
  q = burn::detail::clamp(q, Scalar(-qmax), Scalar(qmax));
  q = burn::detail::cast(burn::detail::to_kind(q, TensorKind::Int), DType::I8);
  return {ungrouped(q, scheme, shape), burn::detail::reshape_exact(scale, Shape{groups})};
}

void check_quantized(const QuantizedRefs& q, const QuantScheme& scheme) {
  if (!q.values || !q.scales) throw Error("QuantizedTensor", "values and scales must both be set");
  if (q.values->spec.dtype != DType::I8)
    throw Error("QuantizedTensor", fmt::format("values must be I8, got {}", dtype_name(q.values->spec.dtype)));
  if (q.scales->spec.dtype != DType::F32)
    throw Error("QuantizedTensor", fmt::format("scales must be F32, got {}", dtype_name(q.scales->spec.dtype)));
  const std::size_t groups = scale_count(q.values->spec.shape, scheme, "QuantizedTensor");
  if (q.scales->spec.shape != Shape{groups})
    throw Error("QuantizedTensor",
                fmt::format("scheme {} gives values of shape {} {} scales, got scales of shape {}", scheme.to_string(),
                            q.values->spec.shape.to_string(), groups, q.scales->spec.shape.to_string()));
  if (!(q.values->device == q.scales->device))
    throw Error("QuantizedTensor", "values and scales are on different devices; move both with to_device");
}

TensorRef dequantize(const QuantizedRefs& q, const QuantScheme& scheme) {
  const Shape shape = q.values->spec.shape;
  const std::size_t groups = q.scales->spec.shape[0];
  TensorRef rows =
      burn::detail::cast(burn::detail::to_kind(grouped(q.values, scheme, groups), TensorKind::Float), DType::F32);
  rows = burn::detail::binary(ir::BinaryOp::Mul, rows, burn::detail::reshape_exact(q.scales, Shape{groups, 1}));
  return ungrouped(rows, scheme, shape);
}

TensorRef quantized_matmul(const QuantizedRefs& a, const QuantScheme& a_scheme, const QuantizedRefs& b,
                           const QuantScheme& b_scheme) {
  const Shape& as = a.values->spec.shape;
  const Shape& bs = b.values->spec.shape;
  if (a_scheme.level != QuantLevel::Tensor || a_scheme.bits != QuantBits::Int8)
    throw Error("quantized_matmul",
                fmt::format("the left operand must be int8 per tensor, got {}", a_scheme.to_string()));
  const bool b_per_column = b_scheme.level == QuantLevel::Channel && b_scheme.axis == 1;
  if (b_scheme.bits != QuantBits::Int8 || !(b_scheme.level == QuantLevel::Tensor || b_per_column))
    throw Error("quantized_matmul", fmt::format("the right operand must be int8 per tensor or per channel along axis "
                                                "1 (one scale per output column), got {}",
                                                b_scheme.to_string()));
  if (as[1] != bs[0])
    throw Error("quantized_matmul",
                fmt::format("shapes {} and {} do not chain: {} != {}", as.to_string(), bs.to_string(), as[1], bs[0]));
  const Device device = a.values->device;
  if (!(b.values->device == device))
    throw Error("quantized_matmul", "the operands are on different devices; move one with to_device");
  if (!kernels::host_memory_device(device)) {
    // Dequantized operands hold the same integers times their scales; f32
    // sums of them round where the integer sum would not, no more.
    return burn::detail::matmul(dequantize(a, a_scheme), dequantize(b, b_scheme));
  }
  const std::size_t m = as[0], k = as[1], n = bs[1];
  const auto a_values = burn::detail::to_data(a.values).to_vec<std::int8_t>();
  const float a_scale = burn::detail::to_data(a.scales).to_vec<float>()[0];
  const auto b_scales = burn::detail::to_data(b.scales).to_vec<float>();
  const auto weights = kernels::prepare_int8_weights(
      [values = b.values] { return burn::detail::to_data(values).to_vec<std::int8_t>(); }, k, n, b_scales);
  std::vector<float> out(m * n);
  kernels::int8_matmul_any_range(a_values.data(), m, a_scale, *weights, out.data());
  return burn::detail::from_data(TensorData(out, Shape{m, n}), TensorCreationOptions(device), TensorKind::Float);
}

}  // namespace burn::quant::detail
