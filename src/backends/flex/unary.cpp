// Unary elementwise ops and clamp. Each (op, dtype) is one small row
// function; the shared strided loop does iteration and threading.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/flex/element.hpp"
#include "backends/flex/rows.hpp"
#include "backends/flex/simd/math.hpp"
#include "backends/flex/strided.hpp"

namespace burn::flex {
namespace {

using ir::UnaryOp;

// f32 / f64 runs go through the SIMD kernels, strided ones (rare: the loop
// driver merges most views into contiguous runs) through a small contiguous
// buffer: the SIMD kernels are a few ULP from std::, so using std:: here
// would make an element's value depend on the layout around it (a fused
// row statistic, a permuted view).
template <class T, simd::MathFn Fn>
int simd_math_row(const void*, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  auto* o = reinterpret_cast<T*>(p[0]);
  const auto* a = reinterpret_cast<const T*>(p[1]);
  if (s[0] == 1 && s[1] == 1) {
    simd::apply(Fn, a, o, n);
    return 0;
  }
  constexpr std::size_t kChunk = 256;
  T buf[kChunk];
  for (std::size_t begin = 0; begin < n; begin += kChunk) {
    const std::size_t len = std::min(kChunk, n - begin);
    for (std::size_t i = 0; i < len; ++i) buf[i] = a[static_cast<std::int64_t>(begin + i) * s[1]];
    simd::apply(Fn, buf, buf, len);
    for (std::size_t i = 0; i < len; ++i) o[static_cast<std::int64_t>(begin + i) * s[0]] = buf[i];
  }
  return 0;
}

template <class T>
RowFn float_unary(UnaryOp op) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    switch (op) {
      case UnaryOp::Exp: return simd_math_row<T, simd::MathFn::Exp>;
      case UnaryOp::Expm1: return simd_math_row<T, simd::MathFn::Expm1>;
      case UnaryOp::Log: return simd_math_row<T, simd::MathFn::Log>;
      case UnaryOp::Log1p: return simd_math_row<T, simd::MathFn::Log1p>;
      case UnaryOp::Tanh: return simd_math_row<T, simd::MathFn::Tanh>;
      default: break;
    }
  }
  if constexpr (std::is_same_v<T, float>)
    if (op == UnaryOp::Erf) return simd_math_row<T, simd::MathFn::Erf>;
  switch (op) {
    case UnaryOp::Neg: return unary_row<T, T, [](C x) { return -x; }>;
    case UnaryOp::Abs: return unary_row<T, T, [](C x) { return std::fabs(x); }>;
    // Keeps NaN and the zero's sign.
    case UnaryOp::Sign: return unary_row<T, T, [](C x) { return (x > 0 ? C(1) : x < 0 ? C(-1) : x); }>;
    case UnaryOp::Recip: return unary_row<T, T, [](C x) { return C(1) / x; }>;
    case UnaryOp::Exp: return unary_row<T, T, [](C x) { return std::exp(x); }>;
    case UnaryOp::Log: return unary_row<T, T, [](C x) { return std::log(x); }>;
    case UnaryOp::Log1p: return unary_row<T, T, [](C x) { return std::log1p(x); }>;
    case UnaryOp::Expm1: return unary_row<T, T, [](C x) { return std::expm1(x); }>;
    case UnaryOp::Sqrt: return unary_row<T, T, [](C x) { return std::sqrt(x); }>;
    case UnaryOp::Rsqrt: return unary_row<T, T, [](C x) { return C(1) / std::sqrt(x); }>;
    case UnaryOp::Sin: return unary_row<T, T, [](C x) { return std::sin(x); }>;
    case UnaryOp::Cos: return unary_row<T, T, [](C x) { return std::cos(x); }>;
    case UnaryOp::Tan: return unary_row<T, T, [](C x) { return std::tan(x); }>;
    case UnaryOp::Asin: return unary_row<T, T, [](C x) { return std::asin(x); }>;
    case UnaryOp::Acos: return unary_row<T, T, [](C x) { return std::acos(x); }>;
    case UnaryOp::Atan: return unary_row<T, T, [](C x) { return std::atan(x); }>;
    case UnaryOp::Sinh: return unary_row<T, T, [](C x) { return std::sinh(x); }>;
    case UnaryOp::Cosh: return unary_row<T, T, [](C x) { return std::cosh(x); }>;
    case UnaryOp::Tanh: return unary_row<T, T, [](C x) { return std::tanh(x); }>;
    case UnaryOp::Asinh: return unary_row<T, T, [](C x) { return std::asinh(x); }>;
    case UnaryOp::Acosh: return unary_row<T, T, [](C x) { return std::acosh(x); }>;
    case UnaryOp::Atanh: return unary_row<T, T, [](C x) { return std::atanh(x); }>;
    case UnaryOp::Erf: return unary_row<T, T, [](C x) { return std::erf(x); }>;
    // nearbyint in the default rounding mode: half to even.
    case UnaryOp::Round: return unary_row<T, T, [](C x) { return std::nearbyint(x); }>;
    case UnaryOp::Floor: return unary_row<T, T, [](C x) { return std::floor(x); }>;
    case UnaryOp::Ceil: return unary_row<T, T, [](C x) { return std::ceil(x); }>;
    case UnaryOp::Trunc: return unary_row<T, T, [](C x) { return std::trunc(x); }>;
    case UnaryOp::IsNan: return unary_row<T, bool, [](C x) { return x != x; }>;
    case UnaryOp::IsInf: return unary_row<T, bool, [](C x) { return std::isinf(x); }>;
    default: throw_no_kernel(ir::unary_name(op), dtype_of<T>());
  }
}

template <class T>
RowFn int_unary(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return unary_row<T, T, [](T x) { return wrap_neg(x); }>;
    case UnaryOp::Abs:
      if constexpr (std::is_signed_v<T>)  // the minimum wraps to itself
        return unary_row<T, T, [](T x) { return x < 0 ? wrap_neg(x) : x; }>;
      else return unary_row<T, T, [](T x) { return x; }>;
    case UnaryOp::Sign:
      if constexpr (std::is_signed_v<T>)
        return unary_row<T, T, [](T x) { return static_cast<T>(x > 0 ? 1 : x < 0 ? -1 : 0); }>;
      else return unary_row<T, T, [](T x) { return static_cast<T>(x > 0 ? 1 : 0); }>;
    case UnaryOp::BitNot: return unary_row<T, T, [](T x) { return static_cast<T>(~static_cast<wrap_t<T>>(x)); }>;
    default: throw_no_kernel(ir::unary_name(op), dtype_of<T>());
  }
}

bool is_cheap(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Abs:
    case UnaryOp::Sign:
    case UnaryOp::Round:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Trunc:
    case UnaryOp::IsNan:
    case UnaryOp::IsInf:
    case UnaryOp::LogicalNot:
    case UnaryOp::BitNot: return true;
    default: return false;
  }
}

template <class T>
struct Bounds {
  compute_t<T> lo, hi;
  bool has_lo, has_hi;
};

// NaN compares false against both bounds and stays NaN.
template <class T>
BURN_FLEX_ROW_CLONES int clamp_row(const void* ctx, std::byte* const* p, const std::int64_t* s, std::size_t n) {
  const auto& b = *static_cast<const Bounds<T>*>(ctx);
  auto* o = reinterpret_cast<T*>(p[0]);
  const auto* a = reinterpret_cast<const T*>(p[1]);
  const auto len = static_cast<std::int64_t>(n);
  const auto one = [&b](compute_t<T> v) {
    if (b.has_lo && v < b.lo) v = b.lo;
    if (b.has_hi && v > b.hi) v = b.hi;
    return v;
  };
  if (s[0] == 1 && s[1] == 1) {
    for (std::int64_t i = 0; i < len; ++i) o[i] = store<T>(one(load(a[i])));
  } else {
    for (std::int64_t i = 0; i < len; ++i) o[i * s[0]] = store<T>(one(load(a[i * s[1]])));
  }
  return 0;
}

}  // namespace

RowFn unary_row_fn(UnaryOp op, DType dtype) {
  return visit_dtype(dtype, [&]<class T>() -> RowFn {
    if constexpr (is_float_v<T>) {
      return float_unary<T>(op);
    } else if constexpr (is_int_v<T>) {
      return int_unary<T>(op);
    } else {
      if (op != UnaryOp::LogicalNot) throw_no_kernel(ir::unary_name(op), DType::Bool);
      return unary_row<bool, bool, [](bool v) { return !v; }>;
    }
  });
}

Result kernel(const Context& ctx, const ir::Unary& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto y = ctx.output_reusing(out[0], in, {0});
  const RowFn fn = unary_row_fn(op.op, x.dtype);
  const Operand ops[] = {operand(*y), operand(x)};
  for_each_run(y->shape, ops, fn, nullptr, is_cheap(op.op) ? kGrainSize : kMathGrain);
  return {y};
}

ClampBounds clamp_bounds(const ir::Clamp& op, DType dtype) {
  ClampBounds out;
  visit_numeric_dtype("clamp", dtype, [&]<class T>() {
    static_assert(sizeof(Bounds<T>) <= sizeof(out.bytes));
    // Bounds take the element type first, like any scalar operand.
    const Bounds<T> b{op.min ? load(op.min->as<T>()) : compute_t<T>{}, op.max ? load(op.max->as<T>()) : compute_t<T>{},
                      op.min.has_value(), op.max.has_value()};
    std::memcpy(out.bytes.data(), &b, sizeof(b));
  });
  return out;
}

RowFn clamp_row_fn(DType dtype) {
  return visit_numeric_dtype("clamp", dtype, [&]<class T>() -> RowFn { return clamp_row<T>; });
}

Result kernel(const Context& ctx, const ir::Clamp& op, Inputs in, Outputs out) {
  const auto& x = host::as_cpu(in[0].primitive);
  auto y = ctx.output_reusing(out[0], in, {0});
  const ClampBounds bounds = clamp_bounds(op, x.dtype);
  const Operand ops[] = {operand(*y), operand(x)};
  for_each_run(y->shape, ops, clamp_row_fn(x.dtype), bounds.bytes.data());
  return {y};
}

}  // namespace burn::flex
