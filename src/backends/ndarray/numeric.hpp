// Element arithmetic of the reference kernels: which dtypes an op family is
// instantiated for, and the type values are computed in (double for every
// float dtype, the integer type itself for ints, bool for bools).
#pragma once

#include <limits>
#include <string_view>
#include <type_traits>

#include <burn/dtype.hpp>
#include <burn/error.hpp>
#include <burn/scalar.hpp>

namespace burn::ndarray {

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// The type a T is computed in.
template <class T>
using acc_t = std::conditional_t<is_float_v<T>, double, T>;

template <class T>
acc_t<T> load(T v) noexcept {
  return convert_element<acc_t<T>>(v);
}
template <class T>
T store(acc_t<T> v) noexcept {
  return convert_element<T>(v);
}

/// Unsigned type integer arithmetic wraps in: at least `unsigned` wide, so
/// small types do not promote to (overflowing) signed int.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
T wrap_add(T a, T b) noexcept {
  return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
}
template <class T>
T wrap_sub(T a, T b) noexcept {
  return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
}
template <class T>
T wrap_mul(T a, T b) noexcept {
  return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
}
template <class T>
T wrap_neg(T a) noexcept {
  return static_cast<T>(wrap_t<T>(0) - static_cast<wrap_t<T>>(a));
}

/// Sum and product in the compute type: ints wrap, floats follow IEEE.
template <class A>
A acc_add(A a, A b) noexcept {
  if constexpr (std::is_floating_point_v<A>) return a + b;
  else return wrap_add(a, b);
}
template <class A>
A acc_mul(A a, A b) noexcept {
  if constexpr (std::is_floating_point_v<A>) return a * b;
  else return wrap_mul(a, b);
}
template <class A>
bool is_nan(A a) noexcept {
  if constexpr (std::is_floating_point_v<A>) return a != a;
  else return false;
}

/// A scalar operand as element type T. Float scalars reach int types through
/// convert_element (NaN -> 0, out-of-range values saturate) because a plain
/// cast of those is undefined behaviour.
template <class T>
T scalar_as(const Scalar& s) noexcept {
  if constexpr (is_int_v<T>)
    if (s.kind() == Scalar::Kind::Float) return convert_element<T>(s.as_double());
  return s.as<T>();
}

/// Raised when infer_outputs let through a dtype a kernel does not handle
/// (a bug, not a user error, but still an exception rather than a crash).
[[noreturn]] inline void unsupported_dtype(std::string_view op, DType d) {
  throw Error(op, std::string("the ndarray backend has no kernel for dtype ") + std::string(dtype_name(d)));
}

/// visit_dtype restricted to the float dtypes.
template <class F>
decltype(auto) visit_float(std::string_view op, DType d, F&& f) {
  switch (d) {
    case DType::F64: return f.template operator()<double>();
    case DType::F32: return f.template operator()<float>();
    case DType::F16: return f.template operator()<f16>();
    case DType::BF16: return f.template operator()<bf16>();
    default: unsupported_dtype(op, d);
  }
}

/// visit_dtype restricted to the int dtypes.
template <class F>
decltype(auto) visit_int(std::string_view op, DType d, F&& f) {
  switch (d) {
    case DType::I64: return f.template operator()<std::int64_t>();
    case DType::I32: return f.template operator()<std::int32_t>();
    case DType::I16: return f.template operator()<std::int16_t>();
    case DType::I8: return f.template operator()<std::int8_t>();
    case DType::U64: return f.template operator()<std::uint64_t>();
    case DType::U32: return f.template operator()<std::uint32_t>();
    case DType::U16: return f.template operator()<std::uint16_t>();
    case DType::U8: return f.template operator()<std::uint8_t>();
    default: unsupported_dtype(op, d);
  }
}

/// visit_dtype over float and int dtypes (not Bool).
template <class F>
decltype(auto) visit_numeric(std::string_view op, DType d, F&& f) {
  if (is_float(d)) return visit_float(op, d, std::forward<F>(f));
  return visit_int(op, d, std::forward<F>(f));
}

}  // namespace burn::ndarray
