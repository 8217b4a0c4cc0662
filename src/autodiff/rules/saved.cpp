// What each op's backward rule reads as values. A node keeps only those; for
// the rest it keeps the spec and device alone, so an activation a rule never
// reads (a linear layer's matmul result before its bias add, a mask_fill's
// filled input) is freed as soon as the forward pass drops it — as PyTorch's
// saved tensors are. This table must follow the rules in this folder: a rule
// that runs an op on a value not kept here fails with an internal error from
// dispatch, which the autodiff tests would report.
#include "autodiff/vjp.hpp"

namespace burn::autodiff {
namespace {

using ir::BinaryOp;
using ir::UnaryOp;

constexpr SavedValues kNothing{0, 0};
constexpr SavedValues kInput0{0b1, 0};
constexpr SavedValues kInput1{0b10, 0};
constexpr SavedValues kInputs01{0b11, 0};
constexpr SavedValues kOutput0{0, 0b1};
constexpr SavedValues kInput0Output0{0b1, 0b1};

SavedValues unary(UnaryOp op) {
  switch (op) {
    // y-based derivatives (see unary_grad).
    case UnaryOp::Recip:
    case UnaryOp::Exp:
    case UnaryOp::Expm1:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Tan:
    case UnaryOp::Tanh:
      return kOutput0;
    // Constant derivatives (neg), zero ones (shape only), non-float results.
    case UnaryOp::Neg:
    case UnaryOp::Sign:
    case UnaryOp::Round:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Trunc:
    case UnaryOp::IsNan:
    case UnaryOp::IsInf:
    case UnaryOp::LogicalNot:
    case UnaryOp::BitNot:
      return kNothing;
    default:
      return kInput0;
  }
}

SavedValues binary(const ir::Binary& op) {
  const bool scalar = op.scalar.has_value();
  switch (op.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return kNothing;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Rem:
      return scalar ? kNothing : kInputs01;
    case BinaryOp::Max:
    case BinaryOp::Min:
    case BinaryOp::Atan2:
      return scalar ? kInput0 : kInputs01;
    case BinaryOp::Pow:
      return scalar ? kInput0 : SavedValues{0b11, 0b1};
    default:
      return kNothing;  // int, bool and comparison results carry no gradient
  }
}

SavedValues reduce(ir::ReduceOp op) {
  switch (op) {
    case ir::ReduceOp::Prod:
      return kInput0;
    case ir::ReduceOp::Max:
    case ir::ReduceOp::Min:
      return kInput0Output0;
    default:
      return kNothing;
  }
}

}  // namespace

SavedValues saved_values(const ir::Op& op) {
  if (const auto* o = std::get_if<ir::Unary>(&op)) return unary(o->op);
  if (const auto* o = std::get_if<ir::Binary>(&op)) return binary(*o);
  if (const auto* o = std::get_if<ir::Reduce>(&op)) return reduce(o->op);
  if (const auto* o = std::get_if<ir::Cumulative>(&op))
    return o->op == ir::CumulativeOp::Sum ? kNothing : kInput0Output0;
  if (const auto* o = std::get_if<ir::MaxPool>(&op)) return o->with_indices ? SavedValues{0, 0b10} : kInput0;
  if (std::holds_alternative<ir::Clamp>(op)) return kInput0;
  if (std::holds_alternative<ir::Matmul>(op) || std::holds_alternative<ir::Conv>(op) ||
      std::holds_alternative<ir::ConvTranspose>(op))
    return kInputs01;  // never the bias, never the output
  // Indices and masks: the second input.
  if (std::holds_alternative<ir::Gather>(op) || std::holds_alternative<ir::Scatter>(op) ||
      std::holds_alternative<ir::Select>(op) || std::holds_alternative<ir::SelectAssign>(op) ||
      std::holds_alternative<ir::MaskWhere>(op) || std::holds_alternative<ir::MaskFill>(op))
    return kInput1;
  if (std::holds_alternative<ir::Sort>(op)) return SavedValues{0, 0b10};  // the indices
  // Pure data movement and linear maps read shapes only.
  if (std::holds_alternative<ir::Cast>(op) || std::holds_alternative<ir::Reshape>(op) ||
      std::holds_alternative<ir::Permute>(op) || std::holds_alternative<ir::Expand>(op) ||
      std::holds_alternative<ir::Flip>(op) || std::holds_alternative<ir::Slice>(op) ||
      std::holds_alternative<ir::SliceAssign>(op) || std::holds_alternative<ir::Cat>(op) ||
      std::holds_alternative<ir::Unfold>(op) || std::holds_alternative<ir::AvgPool>(op) ||
      std::holds_alternative<ir::AdaptiveAvgPool>(op) || std::holds_alternative<ir::Interpolate>(op))
    return kNothing;
  return SavedValues{};  // anything else: keep everything
}

}  // namespace burn::autodiff
