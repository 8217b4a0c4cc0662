// Element arithmetic of the reference kernels: the type values are computed
// in (double for every float dtype, the integer type itself for ints, bool for
// bools). The dtype-family visitors are burn's own (visit_float_dtype, ...).
#pragma once

#include <limits>
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

}  // namespace burn::ndarray
