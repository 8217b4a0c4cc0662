// Backward rules of the elementwise family: unary, binary, clamp and cast.
// Gradients follow PyTorch's derivatives, including its choices at the
// non-differentiable points (abs at 0, maximum/minimum ties, pow at 0).
#include <cmath>
#include <numbers>

#include "autodiff/rules/math_helpers.hpp"

namespace burn::autodiff {

using namespace math;

namespace {

using detail::unary;

/// g * dy/dx for a float unary op (x: input, y: output).
TensorRef unary_grad(UnaryOp op, const TensorRef& g, const TensorRef& x, const TensorRef& y) {
  switch (op) {
    case UnaryOp::Neg: return neg(g);
    case UnaryOp::Abs: return mul(g, unary(UnaryOp::Sign, x));  // sign(0) = 0: no gradient at the kink
    case UnaryOp::Recip: return neg(mul(g, square(y)));         // -1/x^2 = -y^2
    case UnaryOp::Exp: return mul(g, y);
    case UnaryOp::Log: return div(g, x);
    case UnaryOp::Log1p: return div(g, add(x, 1.0));
    case UnaryOp::Expm1: return mul(g, add(y, 1.0));
    case UnaryOp::Sqrt: return div(g, mul(y, 2.0));
    case UnaryOp::Rsqrt: return mul(mul(g, mul(y, square(y))), -0.5);
    case UnaryOp::Sin: return mul(g, unary(UnaryOp::Cos, x));
    case UnaryOp::Cos: return neg(mul(g, unary(UnaryOp::Sin, x)));
    case UnaryOp::Tan: return mul(g, add(square(y), 1.0));
    case UnaryOp::Asin: return mul(g, unary(UnaryOp::Rsqrt, rsub(1.0, square(x))));
    case UnaryOp::Acos: return neg(mul(g, unary(UnaryOp::Rsqrt, rsub(1.0, square(x)))));
    case UnaryOp::Atan: return div(g, add(square(x), 1.0));
    case UnaryOp::Sinh: return mul(g, unary(UnaryOp::Cosh, x));
    case UnaryOp::Cosh: return mul(g, unary(UnaryOp::Sinh, x));
    case UnaryOp::Tanh: return mul(g, rsub(1.0, square(y)));
    case UnaryOp::Asinh: return mul(g, unary(UnaryOp::Rsqrt, add(square(x), 1.0)));
    case UnaryOp::Acosh: return mul(g, unary(UnaryOp::Rsqrt, add(square(x), -1.0)));
    case UnaryOp::Atanh: return div(g, rsub(1.0, square(x)));
    case UnaryOp::Erf: return mul(mul(g, unary(UnaryOp::Exp, neg(square(x)))), 2.0 / std::sqrt(std::numbers::pi));
    // Piecewise constant: zero almost everywhere, as in PyTorch.
    case UnaryOp::Sign:
    case UnaryOp::Round:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Trunc: return zeros_like(x);
    // Bool or int results: never differentiated (filtered out by the caller).
    case UnaryOp::IsNan:
    case UnaryOp::IsInf:
    case UnaryOp::LogicalNot:
    case UnaryOp::BitNot: break;
  }
  throw Error(ir::unary_name(op), "has no gradient: its result is not a float tensor");
}

bool differentiable(ir::BinaryOp op) { return op <= BinaryOp::Min || op == BinaryOp::Atan2; }

}  // namespace

// The values unary_grad reads.
SavedValues saved(const ir::Unary& op) {
  switch (op.op) {
    // y-based derivatives.
    case UnaryOp::Recip:
    case UnaryOp::Exp:
    case UnaryOp::Expm1:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Tan:
    case UnaryOp::Tanh: return kKeepOutput0;
    // x-based derivatives.
    case UnaryOp::Abs:
    case UnaryOp::Log:
    case UnaryOp::Log1p:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Asin:
    case UnaryOp::Acos:
    case UnaryOp::Atan:
    case UnaryOp::Sinh:
    case UnaryOp::Cosh:
    case UnaryOp::Asinh:
    case UnaryOp::Acosh:
    case UnaryOp::Atanh:
    case UnaryOp::Erf: return kKeepInput0;
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
    case UnaryOp::BitNot: return kKeepNothing;
  }
  return kKeepAll;
}

Grads rule(const ir::Unary& op, const VjpArgs& args) {
  Grads out(args.inputs.size());
  const bool float_result = op.op != UnaryOp::IsNan && op.op != UnaryOp::IsInf;
  if (!float_result || !wants(args, 0)) return out;
  out[0] = unary_grad(op.op, cotangent_or_zeros(args, 0), args.inputs[0], args.outputs[0]);
  return out;
}

SavedValues saved(const ir::Binary& op) {
  const bool scalar = op.scalar.has_value();
  switch (op.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: return kKeepNothing;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Rem: return scalar ? kKeepNothing : kKeepInputs01;
    case BinaryOp::Max:
    case BinaryOp::Min:
    case BinaryOp::Atan2: return scalar ? kKeepInput0 : kKeepInputs01;
    case BinaryOp::Pow: return scalar ? kKeepInput0 : SavedValues{0b11, 0b1};
    // Int, bool and comparison results carry no gradient.
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
    case BinaryOp::LogicalXor:
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual: return kKeepNothing;
  }
  return kKeepAll;
}

Grads rule(const ir::Binary& op, const VjpArgs& args) {
  Grads out(args.inputs.size());
  const bool has_rhs = args.inputs.size() == 2;
  const bool need_a = wants(args, 0);
  const bool need_b = has_rhs && wants(args, 1);
  if (!differentiable(op.op) || (!need_a && !need_b)) return out;

  const TensorRef g = cotangent_or_zeros(args, 0);
  const TensorRef& a = args.inputs[0];
  // `t op rhs`, where rhs is the second input or the scalar.
  auto with_rhs = [&](BinaryOp bop, const TensorRef& t) {
    return has_rhs ? detail::binary(bop, t, args.inputs[1]) : detail::binary_scalar(bop, t, *op.scalar);
  };
  // Both gradients are computed at the broadcast shape, then summed back.
  std::optional<TensorRef> ga, gb;
  switch (op.op) {
    case BinaryOp::Add:
      ga = g;
      gb = g;
      break;
    case BinaryOp::Sub:
      ga = g;
      if (need_b) gb = neg(g);
      break;
    case BinaryOp::Mul:
      if (need_a) ga = with_rhs(BinaryOp::Mul, g);
      if (need_b) gb = mul(g, a);
      break;
    case BinaryOp::Div:
      if (need_a) ga = with_rhs(BinaryOp::Div, g);
      if (need_b) gb = neg(div(mul(g, a), square(args.inputs[1])));  // -g a / b^2
      break;
    case BinaryOp::Rem:  // a - b * floor(a / b)
      ga = g;
      if (need_b) gb = neg(mul(g, unary(UnaryOp::Floor, div(a, args.inputs[1]))));
      break;
    case BinaryOp::Pow: {
      if (need_a) {
        // e * a^(e-1); PyTorch defines it as 0 where e == 0 (even at a == 0).
        if (has_rhs) {
          const TensorRef& e = args.inputs[1];
          auto d = mul(e, detail::binary(BinaryOp::Pow, a, add(e, -1.0)));
          ga = zero_where(mul(g, d), detail::binary_scalar(BinaryOp::Equal, e, 0.0));
        } else {
          const double e = op.scalar->as_double();
          ga = e == 0.0 ? zeros_like(g) : mul(mul(g, detail::binary_scalar(BinaryOp::Pow, a, e - 1.0)), e);
        }
      }
      if (need_b) {
        // y * log(a); 0 where a == 0 and e >= 0 (the limit, instead of 0 * -inf).
        const TensorRef& e = args.inputs[1];
        auto d = mul(args.outputs[0], unary(UnaryOp::Log, a));
        auto at_zero = detail::binary(BinaryOp::LogicalAnd, detail::binary_scalar(BinaryOp::Equal, a, 0.0),
                                      detail::binary_scalar(BinaryOp::GreaterEqual, e, 0.0));
        gb = mul(g, zero_where(d, at_zero));
      }
      break;
    }
    case BinaryOp::Max:
    case BinaryOp::Min: {
      // PyTorch's maximum/minimum: the selected input gets g, ties split it in
      // half. A NaN compares false everywhere, so both inputs get g there.
      const bool is_max = op.op == BinaryOp::Max;
      auto tie_half = detail::mask_where(g, with_rhs(BinaryOp::Equal, a), mul(g, 0.5));
      if (need_a) ga = zero_where(tie_half, with_rhs(is_max ? BinaryOp::Less : BinaryOp::Greater, a));
      if (need_b) gb = zero_where(tie_half, with_rhs(is_max ? BinaryOp::Greater : BinaryOp::Less, a));
      break;
    }
    case BinaryOp::Atan2: {  // d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
      auto a2 = square(a);
      auto den = has_rhs ? add(a2, square(args.inputs[1])) : add(a2, op.scalar->as_double() * op.scalar->as_double());
      auto g_over = div(g, den);
      if (need_a) ga = with_rhs(BinaryOp::Mul, g_over);
      if (need_b) gb = neg(mul(g_over, a));
      break;
    }
    // Not differentiable: returned above.
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
    case BinaryOp::LogicalAnd:
    case BinaryOp::LogicalOr:
    case BinaryOp::LogicalXor:
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual: break;
  }
  if (need_a && ga) out[0] = sum_to_shape(*ga, a->spec.shape);
  if (need_b && gb) out[1] = sum_to_shape(*gb, args.inputs[1]->spec.shape);
  return out;
}

SavedValues saved(const ir::Clamp&) { return kKeepInput0; }
Grads rule(const ir::Clamp& op, const VjpArgs& args) {
  Grads out(args.inputs.size());
  if (!wants(args, 0)) return out;
  const TensorRef g = cotangent_or_zeros(args, 0);
  const TensorRef& x = args.inputs[0];
  // PyTorch: the gradient passes where min <= x <= max (bounds inclusive);
  // NaN compares false, so it gets none.
  std::optional<TensorRef> inside;
  auto both = [&](const TensorRef& m) { inside = inside ? detail::binary(BinaryOp::LogicalAnd, *inside, m) : m; };
  if (op.min) both(detail::binary_scalar(BinaryOp::GreaterEqual, x, *op.min));
  if (op.max) both(detail::binary_scalar(BinaryOp::LessEqual, x, *op.max));
  out[0] = inside ? keep_where(g, *inside) : g;
  return out;
}

SavedValues saved(const ir::Cast&) { return kKeepNothing; }
Grads rule(const ir::Cast& op, const VjpArgs& args) {
  Grads out(args.inputs.size());
  // Only float -> float casts carry a gradient (ints and bools are not differentiable).
  if (!wants(args, 0) || !is_float(op.dtype)) return out;
  const TensorRef g = cotangent_or_zeros(args, 0);
  const DType in = args.inputs[0]->spec.dtype;
  out[0] = g->spec.dtype == in ? g : detail::execute1(ir::Cast{in}, {g});
  return out;
}

}  // namespace burn::autodiff
