// Family "elementwise": unary, binary (and comparisons), clamp, cast.
// Binary inputs broadcast numpy-style (broadcast_shapes, also used by masks).
#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

// The tables are static: a local constexpr array is rebuilt on the stack on
// every call.
std::string_view unary_name(UnaryOp op) {
  static constexpr std::string_view names[] = {
      "neg", "abs",   "sign",  "recip", "exp",   "log",    "log1p",  "expm1",    "sqrt",       "rsqrt", "sin",
      "cos", "tan",   "asin",  "acos",  "atan",  "sinh",   "cosh",   "tanh",     "asinh",      "acosh", "atanh",
      "erf", "round", "floor", "ceil",  "trunc", "is_nan", "is_inf", "bool_not", "bitwise_not"};
  return names[static_cast<int>(op)];
}

std::string_view binary_name(BinaryOp op) {
  static constexpr std::string_view names[] = {"add",
                                               "sub",
                                               "mul",
                                               "div",
                                               "remainder",
                                               "pow",
                                               "max_pair",
                                               "min_pair",
                                               "atan2",
                                               "bitwise_and",
                                               "bitwise_or",
                                               "bitwise_xor",
                                               "bitwise_left_shift",
                                               "bitwise_right_shift",
                                               "bool_and",
                                               "bool_or",
                                               "bool_xor",
                                               "equal",
                                               "not_equal",
                                               "greater",
                                               "greater_equal",
                                               "lower",
                                               "lower_equal"};
  return names[static_cast<int>(op)];
}

std::string_view name(const Unary& u) { return unary_name(u.op); }
std::string_view name(const Binary& b) { return binary_name(b.op); }
std::string_view name(const Clamp&) { return "clamp"; }
std::string_view name(const Cast&) { return "cast"; }

bool memory_bound(const Unary&) { return true; }
bool memory_bound(const Binary&) { return true; }
bool memory_bound(const Clamp&) { return true; }
bool memory_bound(const Cast&) { return false; }

Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) fail(op, "cannot broadcast shapes {} and {}: ranks differ", a.to_string(), b.to_string());
  if (a == b) return a;
  Shape::Dims out(a.rank());
  for (std::size_t i = 0; i < a.rank(); ++i) {
    const std::size_t x = a.dims()[i], y = b.dims()[i];
    if (x != y && x != 1 && y != 1)
      fail(op, "shapes {} and {} cannot be broadcast together (dim {}: {} vs {})", a.to_string(), b.to_string(), i, x,
           y);
    out[i] = x == 1 ? y : x;
  }
  return Shape(std::move(out));
}

namespace {

void check_unary_dtype(std::string_view op, UnaryOp u, DType d) {
  switch (u) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Sign: return expect_numeric(op, d);
    case UnaryOp::Recip:
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Log1p:
    case UnaryOp::Expm1:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Tan:
    case UnaryOp::Asin:
    case UnaryOp::Acos:
    case UnaryOp::Atan:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Tanh:
    case UnaryOp::Asinh:
    case UnaryOp::Acosh:
    case UnaryOp::Atanh:
    case UnaryOp::Erf:
    case UnaryOp::Round:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Trunc:
    case UnaryOp::IsNan:
    case UnaryOp::IsInf: return expect_float(op, d);
    case UnaryOp::LogicalNot:
      if (!is_bool(d)) fail(op, "needs a bool tensor, got {}", dtype_name(d));
      return;
    case UnaryOp::BitNot: return expect_int(op, d);
  }
}

bool is_comparison(BinaryOp b) {
  switch (b) {
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual: return true;
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Rem:
    case BinaryOp::Pow:
    case BinaryOp::Max:
    case BinaryOp::Min:
    case BinaryOp::Atan2:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
    case BinaryOp::LogicalXor: return false;
  }
  return false;
}

void check_binary_dtype(std::string_view op, BinaryOp b, DType d) {
  switch (b) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Rem:
    case BinaryOp::Pow:
    case BinaryOp::Max:
    case BinaryOp::Min:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual: return expect_numeric(op, d);
    case BinaryOp::Atan2: return expect_float(op, d);
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr: return expect_int(op, d);
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
    case BinaryOp::LogicalXor:
      if (!is_bool(d)) fail(op, "needs bool tensors, got {}", dtype_name(d));
      return;
    case BinaryOp::Equal:
    case BinaryOp::NotEqual: return;  // any dtype
  }
}

}  // namespace

SpecList infer(const Unary& u, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  check_unary_dtype(op, u.op, in[0].dtype);
  const bool to_bool = u.op == UnaryOp::IsNan || u.op == UnaryOp::IsInf;
  SpecList out;  // built in place: one copy of the shape (tiny-op latency)
  out.emplace_back(in[0].shape, to_bool ? DType::Bool : in[0].dtype);
  return out;
}

SpecList infer(const Binary& b, std::string_view op, Inputs in) {
  expect_inputs(op, in, b.scalar ? 1 : 2);
  check_binary_dtype(op, b.op, in[0].dtype);
  const DType dtype = is_comparison(b.op) ? DType::Bool : in[0].dtype;
  SpecList out;  // built in place: one copy of the shape at most (tiny-op latency)
  if (!b.scalar) expect_same_dtype(op, in[0], in[1]);
  if (b.scalar || in[0].shape == in[1].shape) out.emplace_back(in[0].shape, dtype);
  else out.emplace_back(broadcast_shapes(op, in[0].shape, in[1].shape), dtype);
  return out;
}

SpecList infer(const Clamp& c, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  expect_numeric(op, in[0].dtype);
  if (c.min && c.max && c.min->as_double() > c.max->as_double())
    fail(op, "min {} is greater than max {}", c.min->to_string(), c.max->to_string());
  return {in[0]};
}

SpecList infer(const Cast& c, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  return {{in[0].shape, c.dtype}};
}

}  // namespace burn::ir
