// Unary elementwise ops and clamp: one loop per dtype, the op chosen per
// element by a switch (slow, but one instantiation per dtype).
#include <cmath>
#include <limits>

#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/numeric.hpp"
#include "backends/ndarray/strided.hpp"

namespace burn::ndarray {
namespace {

using ir::UnaryOp;

[[noreturn]] void wrong_kind(UnaryOp op, DType d) { throw_no_kernel(ir::unary_name(op), d); }

double float_unary(UnaryOp op, double a) {
  switch (op) {
    case UnaryOp::Neg: return -a;
    case UnaryOp::Abs: return std::fabs(a);
    case UnaryOp::Sign: return a > 0 ? 1.0 : a < 0 ? -1.0 : a;  // keeps NaN (and the zero's sign)
    case UnaryOp::Recip: return 1.0 / a;
    case UnaryOp::Exp: return std::exp(a);
    case UnaryOp::Log: return std::log(a);
    case UnaryOp::Log1p: return std::log1p(a);
    case UnaryOp::Expm1: return std::expm1(a);
    case UnaryOp::Sqrt: return std::sqrt(a);
    case UnaryOp::Rsqrt: return 1.0 / std::sqrt(a);
    case UnaryOp::Sin: return std::sin(a);
    case UnaryOp::Cos: return std::cos(a);
    case UnaryOp::Tan: return std::tan(a);
    case UnaryOp::Asin: return std::asin(a);
    case UnaryOp::Acos: return std::acos(a);
    case UnaryOp::Atan: return std::atan(a);
    case UnaryOp::Sinh: return std::sinh(a);
    case UnaryOp::Cosh: return std::cosh(a);
    case UnaryOp::Tanh: return std::tanh(a);
    case UnaryOp::Asinh: return std::asinh(a);
    case UnaryOp::Acosh: return std::acosh(a);
    case UnaryOp::Atanh: return std::atanh(a);
    case UnaryOp::Erf: return std::erf(a);
    case UnaryOp::Round: return std::nearbyint(a);  // default rounding mode: half to even
    case UnaryOp::Floor: return std::floor(a);
    case UnaryOp::Ceil: return std::ceil(a);
    case UnaryOp::Trunc: return std::trunc(a);
    default: wrong_kind(op, DType::F64);
  }
}

template <class T>
T int_unary(UnaryOp op, T a) {
  switch (op) {
    case UnaryOp::Neg: return wrap_neg(a);
    case UnaryOp::Abs:
      if constexpr (std::is_signed_v<T>) return a < 0 ? wrap_neg(a) : a;  // the minimum wraps to itself
      else return a;
    case UnaryOp::Sign:
      if constexpr (std::is_signed_v<T>) return static_cast<T>(a > 0 ? 1 : a < 0 ? -1 : 0);
      else return static_cast<T>(a > 0 ? 1 : 0);
    case UnaryOp::BitNot: return static_cast<T>(~static_cast<wrap_t<T>>(a));
    default: wrong_kind(op, dtype_of<T>());
  }
}

}  // namespace

Result kernel(const Context& ctx, const ir::Unary& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto t = ctx.output(out[0]);
  visit_dtype(x.dtype, [&]<class T>() {
    for_each_index(t->shape, [&](std::size_t i, const Index& idx) {
      const T v = element_at<T>(x, idx);
      if constexpr (is_float_v<T>) {
        const double a = load(v);
        if (op.op == UnaryOp::IsNan) t->data<bool>()[i] = std::isnan(a);
        else if (op.op == UnaryOp::IsInf) t->data<bool>()[i] = std::isinf(a);
        else t->data<T>()[i] = store<T>(float_unary(op.op, a));
      } else if constexpr (is_int_v<T>) {
        t->data<T>()[i] = int_unary(op.op, v);
      } else {
        if (op.op != UnaryOp::LogicalNot) wrong_kind(op.op, DType::Bool);
        t->data<bool>()[i] = !v;
      }
    });
  });
  return {t};
}

Result kernel(const Context& ctx, const ir::Clamp& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto t = ctx.output(out[0]);
  visit_numeric_dtype("clamp", x.dtype, [&]<class T>() {
    // Bounds are converted to the element type first, like any scalar operand.
    const acc_t<T> lo = op.min ? load(scalar_as<T>(*op.min)) : acc_t<T>{};
    const acc_t<T> hi = op.max ? load(scalar_as<T>(*op.max)) : acc_t<T>{};
    for_each_index(t->shape, [&](std::size_t i, const Index& idx) {
      acc_t<T> v = load(element_at<T>(x, idx));
      if (op.min && v < lo) v = lo;  // NaN compares false both times and stays NaN
      if (op.max && v > hi) v = hi;
      t->data<T>()[i] = store<T>(v);
    });
  });
  return {t};
}

}  // namespace burn::ndarray
