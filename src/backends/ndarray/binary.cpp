// Binary elementwise ops (with broadcasting or a scalar right-hand side) and
// comparisons. Floats are computed in double; ints in their own type with
// wrap-around and explicit checks where C++ would have undefined behaviour.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "backends/ndarray/kernels.hpp"
#include "backends/ndarray/numeric.hpp"
#include "backends/ndarray/strided.hpp"

namespace burn::ndarray {
namespace {

using ir::BinaryOp;

[[noreturn]] void wrong_kind(BinaryOp op, DType d) { throw_no_kernel(ir::binary_name(op), d); }

bool is_comparison(BinaryOp op) { return op >= BinaryOp::Equal; }

template <class A>
bool compare(BinaryOp op, A a, A b) {
  switch (op) {
    case BinaryOp::Equal: return a == b;
    case BinaryOp::NotEqual: return a != b;
    case BinaryOp::Greater: return a > b;
    case BinaryOp::GreaterEqual: return a >= b;
    case BinaryOp::Less: return a < b;
    case BinaryOp::LessEqual: return a <= b;
    default: wrong_kind(op, dtype_of<A>());
  }
}

double float_binary(BinaryOp op, double a, double b) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Rem: {
      // fmod takes the dividend's sign; shift into the divisor's.
      double r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
    case BinaryOp::Pow: return std::pow(a, b);
    case BinaryOp::Max: return std::isnan(a) || std::isnan(b) ? nan : std::max(a, b);
    case BinaryOp::Min: return std::isnan(a) || std::isnan(b) ? nan : std::min(a, b);
    case BinaryOp::Atan2: return std::atan2(a, b);
    default: wrong_kind(op, DType::F64);
  }
}

/// Integer power by squaring (wraps like repeated multiplication). A negative
/// exponent follows integer division: 1/x is 0 unless |x| == 1.
template <class T>
T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 0) throw Error("pow", "0 cannot be raised to a negative integer power (division by zero)");
      if (base == 1) return 1;
      if (base == -1) return static_cast<T>((exp & 1) ? -1 : 1);
      return 0;
    }
  }
  wrap_t<T> result = 1, b = static_cast<wrap_t<T>>(static_cast<std::make_unsigned_t<T>>(base));
  for (auto e = static_cast<std::make_unsigned_t<T>>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <class T>
T int_binary(BinaryOp op, T a, T b) {
  constexpr std::uint64_t bits = std::numeric_limits<std::make_unsigned_t<T>>::digits;
  const auto zero_check = [&] {
    if (b == 0) throw Error(ir::binary_name(op), "integer division by zero");
  };
  const auto shift_check = [&] {
    if constexpr (std::is_signed_v<T>)
      if (b < 0) throw Error(ir::binary_name(op), fmt::format("shift count {} is negative", b));
  };
  switch (op) {
    case BinaryOp::Add: return wrap_add(a, b);
    case BinaryOp::Sub: return wrap_sub(a, b);
    case BinaryOp::Mul: return wrap_mul(a, b);
    case BinaryOp::Div:
      zero_check();
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return wrap_neg(a);  // min / -1 overflows (SIGFPE on x86)
      return static_cast<T>(a / b);       // C++ truncates toward zero
    case BinaryOp::Rem: {
      zero_check();
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;  // min % -1 overflows
        T r = static_cast<T>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);  // opposite signs: cannot overflow
        return r;
      } else {
        return static_cast<T>(a % b);
      }
    }
    case BinaryOp::Pow: return int_pow(a, b);
    case BinaryOp::Max: return std::max(a, b);
    case BinaryOp::Min: return std::min(a, b);
    case BinaryOp::BitAnd: return static_cast<T>(a & b);
    case BinaryOp::BitOr: return static_cast<T>(a | b);
    case BinaryOp::BitXor: return static_cast<T>(a ^ b);
    case BinaryOp::Shl:
      shift_check();
      if (static_cast<std::uint64_t>(b) >= bits) return 0;
      return static_cast<T>(static_cast<wrap_t<T>>(a) << b);
    case BinaryOp::Shr:
      shift_check();
      if (static_cast<std::uint64_t>(b) >= bits) {
        if constexpr (std::is_signed_v<T>) return static_cast<T>(a < 0 ? -1 : 0);
        else return 0;
      }
      return static_cast<T>(a >> b);  // arithmetic for signed types (C++20)
    default: wrong_kind(op, dtype_of<T>());
  }
}

bool bool_binary(BinaryOp op, bool a, bool b) {
  switch (op) {
    case BinaryOp::LogicalAnd: return a && b;
    case BinaryOp::LogicalOr: return a || b;
    case BinaryOp::LogicalXor: return a != b;
    default: wrong_kind(op, DType::Bool);
  }
}

template <class T>
T apply(BinaryOp op, T a, T b) {
  if constexpr (is_float_v<T>) return store<T>(float_binary(op, load(a), load(b)));
  else if constexpr (is_int_v<T>) return int_binary(op, a, b);
  else return bool_binary(op, a, b);
}

}  // namespace

Result kernel(const Context& ctx, const ir::Binary& op, Inputs in, Outputs out) {
  const auto& lhs = host::as_cpu(in[0].primitive);
  const host::CpuTensor* rhs = op.scalar ? nullptr : &host::as_cpu(in[1].primitive);
  auto t = ctx.output(out[0]);
  const bool comparison = is_comparison(op.op);
  visit_dtype(lhs.dtype, [&]<class T>() {
    // A scalar operand takes the tensor's element type first (x == 0.1 on f32
    // compares with 0.1f), as in Burn.
    const T scalar = op.scalar ? scalar_as<T>(*op.scalar) : T{};
    for_each_index(t->shape, [&](std::size_t i, const Index& idx) {
      const T a = element_at<T>(lhs, idx);
      const T b = rhs ? element_at<T>(*rhs, idx) : scalar;
      if (comparison) t->data<bool>()[i] = compare(op.op, load(a), load(b));
      else t->data<T>()[i] = apply(op.op, a, b);
    });
  });
  return {t};
}

}  // namespace burn::ndarray
