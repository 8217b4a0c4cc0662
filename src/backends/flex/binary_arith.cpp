// Arithmetic, bitwise and logical binary rows. Floats compute in their
// compute type; ints wrap (computed unsigned), and the cases where C++ has
// undefined behaviour or traps (division by zero, min / -1, oversized or
// negative shifts, 0 to a negative power) are defined or reported.
#include <cmath>
#include <limits>

#include "backends/flex/binary.hpp"
#include "backends/flex/element.hpp"

namespace burn::flex {
namespace {

using ir::BinaryOp;

template <class T>
RowFn float_row(BinaryOp op) {
  using C = compute_t<T>;
  using E = const ErrorSlot&;
  switch (op) {
    case BinaryOp::Add: return binary_row<T, T, [](C a, C b, E) { return a + b; }>;
    case BinaryOp::Sub: return binary_row<T, T, [](C a, C b, E) { return a - b; }>;
    case BinaryOp::Mul: return binary_row<T, T, [](C a, C b, E) { return a * b; }>;
    case BinaryOp::Div: return binary_row<T, T, [](C a, C b, E) { return a / b; }>;
    case BinaryOp::Rem:
      // fmod takes the dividend's sign; shift into the divisor's (Python %).
      return binary_row<T, T, [](C a, C b, E) {
        C r = std::fmod(a, b);
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      }>;
    case BinaryOp::Pow: return binary_row<T, T, [](C a, C b, E) { return std::pow(a, b); }>;
    case BinaryOp::Max:
      return binary_row<T, T, [](C a, C b, E) {
        return (a != a || b != b ? std::numeric_limits<C>::quiet_NaN() : (a > b ? a : b));
      }>;
    case BinaryOp::Min:
      return binary_row<T, T, [](C a, C b, E) {
        return (a != a || b != b ? std::numeric_limits<C>::quiet_NaN() : (a < b ? a : b));
      }>;
    case BinaryOp::Atan2: return binary_row<T, T, [](C a, C b, E) { return std::atan2(a, b); }>;
    default: throw_no_kernel(ir::binary_name(op), dtype_of<T>());
  }
}

/// Power by squaring (wraps like repeated multiplication). A negative
/// exponent follows integer division: 1/x is 0 unless |x| == 1.
template <class T>
T int_pow(T base, T exp, const ErrorSlot& err) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 0) err.record(0);
      if (base == 1) return 1;
      if (base == -1) return static_cast<T>((exp & 1) ? -1 : 1);
      return 0;
    }
  }
  // Sign-extending a negative int8 base is what modular arithmetic wants:
  // the product truncated back to T is the wrapped power.
  wrap_t<T> result = 1, b = static_cast<wrap_t<T>>(base);  // NOLINT(bugprone-signed-char-misuse)
  for (auto e = static_cast<std::make_unsigned_t<T>>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <class T>
constexpr std::uint64_t kBits = std::numeric_limits<std::make_unsigned_t<T>>::digits;

// A negative count is recorded (and the row fails); the placeholder is 0.
template <class T>
bool bad_shift(T count, const ErrorSlot& err) {
  if constexpr (std::is_signed_v<T>) {
    if (count < 0) {
      err.record(count);
      return true;
    }
  }
  return false;
}

template <class T>
RowFn int_row(BinaryOp op) {
  using E = const ErrorSlot&;
  switch (op) {
    case BinaryOp::Add: return binary_row<T, T, [](T a, T b, E) { return wrap_add(a, b); }>;
    case BinaryOp::Sub: return binary_row<T, T, [](T a, T b, E) { return wrap_sub(a, b); }>;
    case BinaryOp::Mul: return binary_row<T, T, [](T a, T b, E) { return wrap_mul(a, b); }>;
    case BinaryOp::Div:
      return binary_row<T, T, [](T a, T b, E err) -> T {
        if (b == 0) {
          err.record(0);
          return 0;
        }
        if constexpr (std::is_signed_v<T>)
          if (b == -1) return wrap_neg(a);  // min / -1 overflows (SIGFPE on x86)
        return static_cast<T>(a / b);       // truncates toward zero
      }>;
    case BinaryOp::Rem:
      return binary_row<T, T, [](T a, T b, E err) -> T {
        if (b == 0) {
          err.record(0);
          return 0;
        }
        if constexpr (std::is_signed_v<T>) {
          if (b == -1) return 0;  // min % -1 overflows
          T r = static_cast<T>(a % b);
          if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);  // opposite signs: cannot overflow
          return r;
        } else {
          return static_cast<T>(a % b);
        }
      }>;
    case BinaryOp::Pow: return binary_row<T, T, [](T a, T b, E err) { return int_pow(a, b, err); }>;
    case BinaryOp::Max: return binary_row<T, T, [](T a, T b, E) { return (a > b ? a : b); }>;
    case BinaryOp::Min: return binary_row<T, T, [](T a, T b, E) { return a < b ? a : b; }>;
    case BinaryOp::BitAnd: return binary_row<T, T, [](T a, T b, E) { return static_cast<T>(a & b); }>;
    case BinaryOp::BitOr: return binary_row<T, T, [](T a, T b, E) { return static_cast<T>(a | b); }>;
    case BinaryOp::BitXor: return binary_row<T, T, [](T a, T b, E) { return static_cast<T>(a ^ b); }>;
    case BinaryOp::Shl:
      return binary_row<T, T, [](T a, T b, E err) -> T {
        if (bad_shift(b, err) || static_cast<std::uint64_t>(b) >= kBits<T>) return 0;
        return static_cast<T>(static_cast<wrap_t<T>>(a) << b);
      }>;
    case BinaryOp::Shr:
      return binary_row<T, T, [](T a, T b, E err) -> T {
        if (bad_shift(b, err)) return 0;
        if (static_cast<std::uint64_t>(b) >= kBits<T>) {
          if constexpr (std::is_signed_v<T>) return static_cast<T>(a < 0 ? -1 : 0);
          else return 0;
        }
        return static_cast<T>(a >> b);  // arithmetic for signed types (C++20)
      }>;
    default: throw_no_kernel(ir::binary_name(op), dtype_of<T>());
  }
}

RowFn bool_row(BinaryOp op) {
  using E = const ErrorSlot&;
  switch (op) {
    case BinaryOp::LogicalAnd: return binary_row<bool, bool, [](bool a, bool b, E) { return a && b; }>;
    case BinaryOp::LogicalOr: return binary_row<bool, bool, [](bool a, bool b, E) { return a || b; }>;
    case BinaryOp::LogicalXor: return binary_row<bool, bool, [](bool a, bool b, E) { return a != b; }>;
    default: throw_no_kernel(ir::binary_name(op), DType::Bool);
  }
}

}  // namespace

RowFn arithmetic_row(BinaryOp op, DType dtype) {
  return visit_dtype(dtype, [&]<class T>() -> RowFn {
    if constexpr (is_float_v<T>) return float_row<T>(op);
    else if constexpr (is_int_v<T>) return int_row<T>(op);
    else return bool_row(op);
  });
}

}  // namespace burn::flex
