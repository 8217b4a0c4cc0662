// The operation IR: every primitive operation described once, as a value.
//
// Backends implement kernels for these values; decorators (autodiff, fusion,
// remote, capture) consume the same values instead of forwarding hundreds of
// virtual methods. Composite operations (softmax, gelu, var, linear, ...) are
// written once in terms of these primitives in src/tensor/.
//
// Conventions shared by every op:
// - Inputs are tensors on one device; outputs are described by
//   `ir::infer_outputs` (shape and dtype), which also validates the inputs and
//   throws `[op] ...` errors, so backends can assume valid inputs.
// - Dimensions are already normalised (non-negative, in range).
// - Reductions keep the reduced dimension with size 1.
// - Elementwise ops broadcast numpy-style (shapes are right-aligned; inputs
//   always have equal rank after the tensor layer's rank check).
//
// Ops come in families, the sections below: creation, elementwise, matmul,
// reduce, layout, indexing, conv, pool, interpolate. Each layer keeps a
// family's ops in one file named after it: src/ir/ops/<family>.cpp (name,
// shape and dtype rules, memory-boundness), src/autodiff/rules/<family>.cpp
// (backward rule, saved values); the backends' kernel files use the same
// names, some split further (unary/binary/cast, scan/sort, mask).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include <burn/dtype.hpp>
#include <burn/scalar.hpp>
#include <burn/shape.hpp>

namespace burn::ir {

/// The number of values of an enum that ops carry (decoders reject others);
/// given next to each enum, by its last value.
template <class E>
inline constexpr unsigned kValueCount = 0;

// Family creation: no inputs.

/// Every element set to `value`.
struct Full {
  Shape shape;
  Scalar value;
  DType dtype;
};
/// start, start+step, ... (< end for step > 0, > end for step < 0).
struct Arange {
  std::int64_t start;
  std::int64_t end;
  std::int64_t step;
  DType dtype;
};
enum class DistributionKind : std::uint8_t { Default, Uniform, Normal, Bernoulli };
template <>
inline constexpr unsigned kValueCount<DistributionKind> = static_cast<unsigned>(DistributionKind::Bernoulli) + 1;
/// Default = uniform [0, 1); Uniform [a, b); Normal(mean a, std b); Bernoulli(p a).
struct Random {
  Shape shape;
  DistributionKind dist;
  double a;
  double b;
  DType dtype;
};

// Family elementwise.

enum class UnaryOp : std::uint8_t {
  // float and int
  Neg,
  Abs,
  Sign,
  // float only
  Recip,
  Exp,
  Log,
  Log1p,
  Expm1,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Tanh,
  Asinh,
  Acosh,
  Atanh,
  Erf,
  Round,
  Floor,
  Ceil,
  Trunc,
  IsNan,
  IsInf,  // -> Bool
  // bool only
  LogicalNot,
  // int only
  BitNot,
};
template <>
inline constexpr unsigned kValueCount<UnaryOp> = static_cast<unsigned>(UnaryOp::BitNot) + 1;
/// One input; output has the input's shape and dtype (IsNan/IsInf: Bool).
/// Round is half-to-even, as in Burn and PyTorch.
struct Unary {
  UnaryOp op;
};

enum class BinaryOp : std::uint8_t {
  // numeric (float and int); Rem takes the divisor's sign (Python/PyTorch `remainder`)
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Pow,
  Max,
  Min,
  // float only
  Atan2,
  // int only
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,
  // bool only
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  // comparisons (any dtype) -> Bool
  Equal,
  NotEqual,
  Greater,
  GreaterEqual,
  Less,
  LessEqual,
};
template <>
inline constexpr unsigned kValueCount<BinaryOp> = static_cast<unsigned>(BinaryOp::LessEqual) + 1;
/// Two inputs broadcast together, or one input and `scalar` as the right-hand
/// side. Output dtype: the inputs' (comparisons: Bool). Int Div truncates
/// toward zero, int Pow with a negative exponent follows C integer rules.
struct Binary {
  BinaryOp op;
  std::optional<Scalar> scalar;
};

/// Elementwise clamp to [min, max] (either bound optional).
struct Clamp {
  std::optional<Scalar> min;
  std::optional<Scalar> max;
};
/// Converts to another dtype (float -> int truncates toward zero; -> Bool is != 0).
struct Cast {
  DType dtype;
};

// Family matmul.

/// [..., m, k] x [..., k, n] -> [..., m, n]; batch dims broadcast.
struct Matmul {};

// Family reduce: reductions, cumulative scans, sort.

enum class ReduceOp : std::uint8_t { Sum, Prod, Mean, Max, Min, ArgMax, ArgMin, Any, All };
template <>
inline constexpr unsigned kValueCount<ReduceOp> = static_cast<unsigned>(ReduceOp::All) + 1;
/// Reduces `dim`, keeping it with size 1. ArgMax/ArgMin -> the int dtype in
/// `index_dtype`, first occurrence on ties; Any/All -> Bool. Mean on ints
/// truncates. Reducing an empty dim: Sum 0, Prod 1, Any false, All true,
/// float Mean NaN; Max/Min/Arg* (and int Mean) of an empty dim is an error
/// raised by infer_outputs.
struct Reduce {
  ReduceOp op;
  std::size_t dim;
  DType index_dtype = DType::I64;
};

enum class CumulativeOp : std::uint8_t { Sum, Prod, Max, Min };
template <>
inline constexpr unsigned kValueCount<CumulativeOp> = static_cast<unsigned>(CumulativeOp::Min) + 1;
/// Inclusive scan along `dim`; same shape and dtype.
struct Cumulative {
  CumulativeOp op;
  std::size_t dim;
};

/// Stable sort along `dim`. Outputs: values, indices (index_dtype).
/// NaN sorts as the largest value.
struct Sort {
  std::size_t dim;
  bool descending;
  DType index_dtype = DType::I64;
};

// Family layout.

/// Same elements in row-major order, new shape (already resolved, no -1).
struct Reshape {
  Shape shape;
};
/// Output dim i = input dim axes[i].
struct Permute {
  std::vector<std::size_t> axes;
};
/// Broadcast size-1 dims to `shape` (same rank).
struct Expand {
  Shape shape;
};
/// Reverses the listed dims.
struct Flip {
  std::vector<std::size_t> axes;
};
/// One range per dim, normalised: 0 <= start, indices start + k*step for
/// k < len (step may be negative: then start is the first index, counting down).
struct SliceRange {
  std::size_t start;
  std::size_t len;
  std::int64_t step;
};
struct Slice {
  std::vector<SliceRange> ranges;
};
/// Inputs: tensor, values (shape = the slice's). Output: tensor with the slice replaced.
struct SliceAssign {
  std::vector<SliceRange> ranges;
};
/// Concatenates every input along `dim`.
struct Cat {
  std::size_t dim;
};
/// Sliding windows: dim `dim` becomes (size_dim - size)/step + 1 and a new last
/// dim of length `size` is appended (PyTorch's Tensor.unfold).
struct Unfold {
  std::size_t dim;
  std::size_t size;
  std::size_t step;
};

// Family indexing (masks included).

/// Inputs: tensor, indices (int, same rank). out[i][j] = t[idx[i][j]][j] for dim 0.
struct Gather {
  std::size_t dim;
};
enum class IndexReduce : std::uint8_t { Assign, Add };
template <>
inline constexpr unsigned kValueCount<IndexReduce> = static_cast<unsigned>(IndexReduce::Add) + 1;
/// Inputs: tensor, indices, values (indices and values same shape).
/// Writes values at the indexed positions of a copy of tensor (Add accumulates).
struct Scatter {
  std::size_t dim;
  IndexReduce reduce;
};
/// Inputs: tensor, indices (1-D int). Picks entries of `dim`.
struct Select {
  std::size_t dim;
};
/// Inputs: tensor, indices (1-D), values. Writes (or adds) values' slices to the
/// indexed entries of `dim`.
struct SelectAssign {
  std::size_t dim;
  IndexReduce reduce;
};
/// Inputs: tensor, mask (Bool), source. Where mask, take source (broadcast).
struct MaskWhere {};
/// Inputs: tensor, mask (Bool). Where mask, write `value`.
struct MaskFill {
  Scalar value;
};

// Family conv. Conv, pool and interpolate are the module operations: N
// spatial dims, channels-first.

/// Inputs: x [N, C_in, *spatial], weight [C_out, C_in/groups, *kernel], optional bias [C_out].
struct Conv {
  std::vector<std::size_t> stride, padding, dilation;
  std::size_t groups = 1;
  bool has_bias = false;
};
/// Inputs: x [N, C_in, *spatial], weight [C_in, C_out/groups, *kernel], optional bias.
struct ConvTranspose {
  std::vector<std::size_t> stride, padding, padding_out, dilation;
  std::size_t groups = 1;
  bool has_bias = false;
};
/// The weight gradient of Conv (a backward kernel; autodiff uses it when the
/// backend implements it, else an equivalent grouped correlation).
/// Inputs: x [N, C_in, *spatial], grad [N, C_out, *out] where `out` is Conv's
/// output size for this geometry. Output: [C_out, C_in/groups, *kernel].
struct ConvWeightGrad {
  std::vector<std::size_t> kernel, stride, padding, dilation;
  std::size_t groups = 1;
};

// Family pool.

/// Outputs: values and, when with_indices, flat indices into each input
/// channel's spatial volume (index_dtype), as PyTorch returns them.
struct MaxPool {
  std::vector<std::size_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
  bool with_indices = false;
  DType index_dtype = DType::I64;
};
struct AvgPool {
  std::vector<std::size_t> kernel, stride, padding;
  bool count_include_pad = true;
  bool ceil_mode = false;
};
struct AdaptiveAvgPool {
  std::vector<std::size_t> output_size;
};

// Family interpolate.

enum class InterpolateMode : std::uint8_t { Nearest, Bilinear, Bicubic };
template <>
inline constexpr unsigned kValueCount<InterpolateMode> = static_cast<unsigned>(InterpolateMode::Bicubic) + 1;
/// Input [N, C, H, W] (2 spatial dims; 1-D callers add a unit dim).
/// Nearest uses floor(dst * in / out) (PyTorch "nearest"); bilinear and bicubic
/// (A = -0.75, clamped borders) follow PyTorch with and without align_corners.
struct Interpolate {
  std::vector<std::size_t> output_size;
  InterpolateMode mode;
  bool align_corners;
};

// Family norm.

/// Layer normalisation over the last dim (PyTorch's F.layer_norm with a
/// one-dim normalized shape): y = (x - mean) / sqrt(var + epsilon) * weight
/// + bias, with the biased variance. Inputs: x [..., n], weight [n], bias [n],
/// one float dtype. An optional op: burn::module::layer_norm runs it where
/// the backend has it (supports_op) and the same formula as separate ops
/// elsewhere.
struct LayerNorm {
  double epsilon = 1e-5;
};

/// Batch normalisation with the batch's own statistics (training mode): per
/// channel c (dim 1) of x [N, C, ...], the mean and the biased variance over
/// every other dim, and y = (x - mean) / sqrt(var + epsilon) * weight +
/// bias. Inputs: x (rank at least 2, at least two values per channel, or
/// none: an empty y and NaN statistics), weight [C], bias [C], one float
/// dtype. Outputs: y, mean [C], var [C] (the running statistics are updated
/// from them). An optional op like
/// LayerNorm: burn::nn::BatchNorm runs it in training where the backend has
/// it and the same formula as separate ops elsewhere.
struct BatchNorm {
  double epsilon = 1e-5;
};

// Family activation.

/// Softmax over the last dim, y = exp(x - max) / sum(exp(x - max)) per row
/// of x [..., n], or its logarithm (log = true: (x - max) - log(sum(exp(x -
/// max)))). One float input. An optional op: burn::activation::softmax and
/// log_softmax run it along the last dim where the backend has it and the
/// same formula as separate ops elsewhere.
struct Softmax {
  bool log = false;
};

/// Gaussian error linear unit, elementwise: x * (1 + erf(x / sqrt(2))) / 2,
/// or PyTorch's tanh approximation (tanh = true): x * (1 + tanh(sqrt(2 / pi)
/// * (x + 0.044715 x^3))) / 2. One float input. An optional op like Softmax
/// (burn::activation::gelu and gelu_tanh).
struct Gelu {
  bool tanh = false;
};

using Op = std::variant<Full, Arange, Random, Unary, Binary, Clamp, Cast, Matmul, Reduce, Cumulative, Sort, Reshape,
                        Permute, Expand, Flip, Slice, SliceAssign, Cat, Unfold, Gather, Scatter, Select, SelectAssign,
                        MaskWhere, MaskFill, Conv, ConvTranspose, ConvWeightGrad, MaxPool, AvgPool, AdaptiveAvgPool,
                        Interpolate, LayerNorm, Softmax, Gelu, BatchNorm>;

/// "add", "exp", "matmul", "sum_dim", "conv2d", ... (used in error messages).
std::string_view op_name(const Op& op);
std::string_view unary_name(UnaryOp op);
std::string_view binary_name(BinaryOp op);
std::string_view reduce_name(ReduceOp op);

/// Whether recomputing this op is cheaper than storing its output
/// (gradient checkpointing's Balanced strategy).
bool is_memory_bound(const Op& op);

/// An input or output's description.
struct TensorSpec {
  Shape shape;
  DType dtype;
  friend bool operator==(const TensorSpec&, const TensorSpec&) = default;
};

/// Validates `inputs` for `op` and returns the outputs' shapes and dtypes.
/// Throws burn::Error "[op] ..." for invalid inputs.
std::vector<TensorSpec> infer_outputs(const Op& op, std::span<const TensorSpec> inputs);

/// Numpy-style broadcast of two equal-rank shapes; throws "[op] ..." if they
/// are incompatible.
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);

}  // namespace burn::ir
