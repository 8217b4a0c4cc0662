// A random chain of tensor operations, described as data so one chain can run
// on two devices (fused cpu and eager flex), be printed when they disagree and
// be replayed with other scalar values (plan-cache checks).
#pragma once

#include <burn/burn.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace burn::fusion_test {

/// How a leaf input reaches the chain: plain data, or a view of a base tensor
/// of another shape (so fused kernels read strided, broadcast and reversed inputs).
enum class ViewKind : std::uint8_t { None, Permute, Slice, Expand, Flip };

struct Leaf {
  Shape shape;  ///< the shape the chain sees
  DType dtype = DType::F32;
  ViewKind view = ViewKind::None;
  Shape base;                      ///< the shape created from host data
  std::vector<std::int64_t> axes;  ///< Permute: output dim i = base dim axes[i]; Flip: reversed dims
  std::vector<Range> ranges;       ///< Slice
  std::uint64_t data_seed = 0;
};

/// A value of the chain: a leaf input or the output of a step.
struct Ref {
  bool leaf = false;
  std::size_t index = 0;
  friend bool operator==(const Ref&, const Ref&) = default;
};

enum class OpKind : std::uint8_t {
  Unary,         ///< unary(a)
  Binary,        ///< binary(a, b), broadcasting
  BinaryScalar,  ///< binary(a, scalar)
  ScalarLhs,     ///< binary(scalar, a) (the tensor layer makes a constant tensor)
  Clamp,         ///< clamp(a, lo, hi)
  Cast,          ///< cast(a, dtype)
  MaskWhere,     ///< mask_where(a, mask, source)
  MaskFill,      ///< mask_fill(a, mask, scalar)
  // Ops that cut or end a chain's elementwise groups: a reduction over a dim
  // other than the last and the reshapes drain the queue; a last-dim
  // reduction joins a row group; a matmul runs alone (read).
  ReduceDim,          ///< sum/mean/max/min_dim(a, dim)
  ReshapeRoundTrip,   ///< reshape(reshape(a, [numel]), shape of a)
  Matmul,             ///< matmul(a, w), its result always read (see Generator::build)
  TransposeSandwich,  ///< swap_dims(unary(swap_dims(a, dim, dim2)), dim, dim2): elementwise work on a transposed view
};

struct Step {
  OpKind kind = OpKind::Unary;
  std::vector<Ref> args;
  ir::UnaryOp unary = ir::UnaryOp::Neg;
  ir::BinaryOp binary = ir::BinaryOp::Add;
  ir::ReduceOp reduce = ir::ReduceOp::Sum;
  Scalar scalar;
  std::optional<Scalar> lo, hi;
  DType cast_to = DType::F32;
  std::size_t dim = 0, dim2 = 0;
  bool keep = false;  ///< the handle lives to the end of the chain and is compared then
  bool read = false;  ///< read right after the step (the queue drains mid-chain)
  /// Added to keep the next op valid (an int divisor made nonzero): its
  /// scalars are part of that guarantee and never change.
  bool helper = false;
  // What the step produces (set by the generator, used to pick later steps).
  DType dtype = DType::F32;
  Shape shape;
};

struct Program {
  std::uint64_t seed = 0;
  Shape full;  ///< every chain value's shape is this with some dims set to 1
  std::vector<Leaf> leaves;
  std::vector<Step> steps;

  /// One line per leaf and step, enough to rebuild the chain by hand.
  std::string to_string() const;
};

/// A random chain of 2-12 steps (plus the helper steps some ops need to stay
/// valid, e.g. a nonzero int divisor). The same seed gives the same chain.
Program generate(std::uint64_t seed);

/// The same chain with other scalar operands (same shapes, dtypes and ops),
/// still valid: used to check that plans are cached by structure, not values.
Program with_new_scalars(const Program& program, std::uint64_t seed);

/// What a run produced: every value read, in order, or the error it threw.
struct Outcome {
  std::vector<std::pair<std::string, TensorData>> values;
  std::string error;
};

/// Runs the chain on `device`. Handles are dropped (moved into their last
/// consumer) as soon as the chain no longer needs them, unless `keep`.
Outcome run(const Program& program, const Device& device);

#if BURN_HAS_CAPTURE
/// The chain as one function recorded by burn::trace (the leaves' base
/// tensors its inputs; every value read, kept or the result, its results)
/// and called once on `device`.
Outcome run_traced(const Program& program, const Device& device);
#endif

/// Empty when both outcomes agree bit for bit (any NaN equals any NaN), else
/// a description of the first difference.
std::string compare(const Outcome& fused, const Outcome& eager);

}  // namespace burn::fusion_test
