// quantize / dequantize as tensor operations on the tensor's own device, and
// the int8 matmul front end.
//
// Every level reduces to the same computation on a [groups, group_size] view:
// per tensor is one group, per block a row per block, per channel a row per
// index of the axis (moved to the front first).
#include <burn/quant/quantized_tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include <omp.h>

#include <fmt/format.h>

#include <burn/autodiff.hpp>
#include <burn/detail/ops.hpp>

#include "quant/host_tensors.hpp"
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

namespace {

void check_quantizable(const TensorRef& x) {
  if (!is_float(x->spec.dtype))
    throw Error("quantize", fmt::format("expected a float tensor, got {}", dtype_name(x->spec.dtype)));
}

/// Where each scale group's values lie in a row-major tensor: `runs`
/// contiguous runs of `length` values, run o of group g starting at
/// g * group_stride + o * run_stride. Per tensor: one group, one run; per
/// block: a run per group; per channel: the channel's run of every outer
/// index. When the channel axis is the last one (inner length 1) the
/// groups interleave element by element instead: `rows` is set, and each
/// row of `groups` values holds one of every group.
struct GroupRuns {
  std::size_t groups = 1, runs = 1, length = 1, group_stride = 0, run_stride = 0;
  bool rows = false;

  GroupRuns(const Shape& shape, const QuantScheme& scheme, std::size_t group_count) : groups(group_count) {
    const std::size_t n = shape.num_elements();
    switch (scheme.level) {
      case QuantLevel::Tensor: length = n; break;
      case QuantLevel::Block:
        length = scheme.block_size;
        group_stride = length;
        break;
      case QuantLevel::Channel: {
        std::size_t outer = 1, inner = 1;
        for (std::size_t d = 0; d < scheme.axis; ++d) outer *= shape[d];
        for (std::size_t d = scheme.axis + 1; d < shape.rank(); ++d) inner *= shape[d];
        runs = outer;
        length = inner;
        group_stride = inner;
        run_stride = groups * inner;
        rows = inner == 1;
        break;
      }
    }
  }
  std::size_t offset(std::size_t g, std::size_t o) const { return g * group_stride + o * run_stride; }
};

/// The pieces one group's single run is cut into for the threads when
/// there is only one group (per tensor).
constexpr std::size_t kPiece = std::size_t{1} << 16;

/// x rounded to the nearest integer, halves to even, as std::nearbyint in
/// the default rounding mode, for |x| <= 2^22: adding 1.5 * 2^23 leaves no
/// fraction bits, so the addition itself rounds. Unlike nearbyint (a libm
/// call on the baseline x86-64 target) it vectorises.
inline float round_half_even(float x) {
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
  return (x + kShift) - kShift;
}

/// One value on the integer grid of `scale`, as the operations compute it:
/// the f32 quotient rounded half to even, clamped to +-qmax. The quotient
/// is at most qmax (scale is the group's max |x| / qmax) up to rounding,
/// well inside round_half_even's range.
inline std::int8_t quantize_value(float v, float scale, float qmax) {
  return static_cast<std::int8_t>(std::clamp(round_half_even(v / scale), -qmax, qmax));
}

/// Largest |x| of each group, and how many values of it are NaN or
/// infinite (std::max keeps its first operand when the comparison fails,
/// so the maxima alone would hide a NaN).
struct GroupMaxima {
  std::vector<float> amax;
  std::vector<std::size_t> non_finite;
};

/// max |x| and the count of values beyond the largest float (NaN
/// included) of `count` values.
void run_maximum(const float* run, std::size_t count, float& amax, std::size_t& non_finite) {
  constexpr float kLargest = std::numeric_limits<float>::max();
  float m = amax;
  std::size_t bad = 0;
#pragma omp simd reduction(max : m) reduction(+ : bad)
  for (std::size_t i = 0; i < count; ++i) {
    const float a = std::abs(run[i]);
    m = std::max(m, a);
    bad += !(a <= kLargest);
  }
  amax = m;
  non_finite += bad;
}

GroupMaxima group_maxima(const GroupRuns& runs, std::span<const float> v, int threads) {
  const std::size_t groups = runs.groups;
  GroupMaxima out{std::vector<float>(groups, 0.0f), std::vector<std::size_t>(groups, 0)};
  if (runs.rows) {
    // Each thread keeps maxima of its own rows, merged at the end.
    constexpr float kLargest = std::numeric_limits<float>::max();
#pragma omp parallel num_threads(threads)
    {
      GroupMaxima mine{std::vector<float>(groups, 0.0f), std::vector<std::size_t>(groups, 0)};
#pragma omp for schedule(static)
      for (std::size_t o = 0; o < runs.runs; ++o) {
        const float* row = v.data() + o * groups;
        for (std::size_t c = 0; c < groups; ++c) {
          const float a = std::abs(row[c]);
          mine.amax[c] = std::max(mine.amax[c], a);
          mine.non_finite[c] += !(a <= kLargest);
        }
      }
#pragma omp critical
      for (std::size_t c = 0; c < groups; ++c) {
        out.amax[c] = std::max(out.amax[c], mine.amax[c]);
        out.non_finite[c] += mine.non_finite[c];
      }
    }
    return out;
  }
  if (groups == 1) {
    // One run (per tensor): pieces of it, merged at the end.
    const std::size_t pieces = (runs.length + kPiece - 1) / kPiece;
    std::vector<float> piece_max(pieces, 0.0f);
    std::vector<std::size_t> piece_bad(pieces, 0);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t k = 0; k < pieces; ++k)
      run_maximum(v.data() + k * kPiece, std::min(kPiece, runs.length - k * kPiece), piece_max[k], piece_bad[k]);
    for (std::size_t k = 0; k < pieces; ++k) {
      out.amax[0] = std::max(out.amax[0], piece_max[k]);
      out.non_finite[0] += piece_bad[k];
    }
    return out;
  }
  // Each thread owns whole groups.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t o = 0; o < runs.runs; ++o)
      run_maximum(v.data() + runs.offset(g, o), runs.length, out.amax[g], out.non_finite[g]);
  return out;
}

/// quantize for an f32 tensor of a host-memory device, in two passes over
/// its bytes where they lie (group maxima, then the int8 values), written
/// straight into the new tensors. The operations of
/// quantize_with_operations make four f32 temporaries the size of the
/// tensor (|x|, x / scale, its rounding, the clamp) and an integer one: for
/// a model's weights, more than the weights' own memory at the peak of
/// quantize_model.
QuantizedRefs quantize_on_host(const TensorRef& x, const QuantScheme& scheme, std::size_t groups) {
  const Shape& shape = x->spec.shape;
  const HostInput input(x);
  const std::span<const float> v = input.floats();
  const GroupRuns runs(shape, scheme, groups);
  // Inside another parallel region (a caller's own threads) on this thread alone.
  const int threads = omp_in_parallel() ? 1 : kernels::int8_threads();
  const GroupMaxima maxima = group_maxima(runs, v, threads);

  const auto qmax = static_cast<float>(scheme.qmax());
  HostOutput scales(x->device, Shape{groups}, DType::F32);
  float* scale = scales.data<float>();
  for (std::size_t g = 0; g < groups; ++g) {
    if (maxima.non_finite[g] != 0)
      throw Error("quantize", fmt::format("scale group {} of the {} tensor holds a NaN or infinite value; quantize "
                                          "needs finite values (check the weights for a diverged training run)",
                                          g, shape.to_string()));
    scale[g] = std::max(maxima.amax[g] / qmax, kMinScale);
  }

  HostOutput values(x->device, shape, DType::I8);
  std::int8_t* q = values.data<std::int8_t>();
  // Plain pointers and `simd`: int8 stores may alias any type as far as
  // the compiler knows, which would keep the loops scalar.
  const auto quantize_run = [&](std::size_t first, std::size_t count, float s) {
    const float* run = v.data() + first;
    std::int8_t* out = q + first;
#pragma omp simd
    for (std::size_t i = 0; i < count; ++i) out[i] = quantize_value(run[i], s, qmax);
  };
  if (runs.rows) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t o = 0; o < runs.runs; ++o) {
      const float* row = v.data() + o * groups;
      std::int8_t* out = q + o * groups;
#pragma omp simd
      for (std::size_t c = 0; c < groups; ++c) out[c] = quantize_value(row[c], scale[c], qmax);
    }
  } else if (groups == 1) {
    const std::size_t pieces = (runs.length + kPiece - 1) / kPiece;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t k = 0; k < pieces; ++k)
      quantize_run(k * kPiece, std::min(kPiece, runs.length - k * kPiece), scale[0]);
  } else {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t o = 0; o < runs.runs; ++o) quantize_run(runs.offset(g, o), runs.length, scale[g]);
  }
  return {std::move(values).finish(), std::move(scales).finish()};
}

}  // namespace

QuantizedRefs quantize(const TensorRef& x, const QuantScheme& scheme) {
  check_quantizable(x);
  const std::size_t groups = scale_count(x->spec.shape, scheme, "quantize");
  if (x->spec.dtype == DType::F32 && kernels::host_memory_device(x->device)) return quantize_on_host(x, scheme, groups);
  return quantize_with_operations(x, scheme);
}

QuantizedRefs quantize_with_operations(const TensorRef& x, const QuantScheme& scheme) {
  check_quantizable(x);
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
