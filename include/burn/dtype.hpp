// Element types. Half types (F16, BF16) are stored in 16 bits and computed in
// f32 registers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <burn/error.hpp>

namespace burn {

enum class DType : std::uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool };

enum class FloatDType : std::uint8_t { F64, F32, F16, BF16 };
enum class IntDType : std::uint8_t { I64, I32, I16, I8, U64, U32, U16, U8 };
enum class BoolDType : std::uint8_t { Bool };

constexpr DType to_dtype(FloatDType d) noexcept {
  constexpr DType map[] = {DType::F64, DType::F32, DType::F16, DType::BF16};
  return map[static_cast<int>(d)];
}
constexpr DType to_dtype(IntDType d) noexcept {
  constexpr DType map[] = {DType::I64, DType::I32, DType::I16, DType::I8,
                           DType::U64, DType::U32, DType::U16, DType::U8};
  return map[static_cast<int>(d)];
}
constexpr DType to_dtype(BoolDType) noexcept { return DType::Bool; }
constexpr DType to_dtype(DType d) noexcept { return d; }

constexpr bool is_float(DType d) noexcept { return d <= DType::BF16; }
constexpr bool is_half(DType d) noexcept { return d == DType::F16 || d == DType::BF16; }
constexpr bool is_int(DType d) noexcept { return d >= DType::I64 && d <= DType::U8; }
constexpr bool is_signed_int(DType d) noexcept { return d >= DType::I64 && d <= DType::I8; }
constexpr bool is_unsigned_int(DType d) noexcept { return d >= DType::U64 && d <= DType::U8; }
constexpr bool is_bool(DType d) noexcept { return d == DType::Bool; }

/// Bytes per element (Bool is stored as one byte holding 0 or 1).
constexpr std::size_t dtype_size(DType d) noexcept {
  constexpr std::size_t sizes[] = {8, 4, 2, 2, 8, 4, 2, 1, 8, 4, 2, 1, 1};
  return sizes[static_cast<int>(d)];
}

/// "f32", "bf16", "i64", "bool", ...
std::string_view dtype_name(DType d) noexcept;
std::ostream& operator<<(std::ostream& os, DType d);
std::ostream& operator<<(std::ostream& os, FloatDType d);
std::ostream& operator<<(std::ostream& os, IntDType d);

/// IEEE-754 binary16, stored in 16 bits, converted to float for arithmetic.
///
/// The conversions are exact IEEE ones (round to nearest even, subnormals
/// kept, overflow to infinity, NaN to the quiet NaN 0x7e00 with its sign)
/// written without branches: each case is computed and the right one
/// selected by masks, so that a loop converting a row compiles to vector
/// instructions (an f16 kernel spends most of its time converting). They
/// give the same bits with and without flush-to-zero and
/// denormals-are-zero: their float arithmetic never has a subnormal
/// operand or result except inputs far below the half range, which round
/// to zero either way.
struct f16 {
  std::uint16_t bits = 0;
  f16() = default;
  explicit f16(float value) noexcept {
    std::uint32_t x;
    std::memcpy(&x, &value, 4);
    const std::uint32_t sign = x & 0x80000000u;
    const std::uint32_t abs = x ^ sign;
    // Normal halves: rebias the exponent, add 0xfff plus the lowest kept
    // bit (ties to even) and drop 13 mantissa bits; a carry rounds up into
    // the exponent, up to infinity above 65504.
    const std::uint32_t normal = (abs - 0x37fff001u + ((abs >> 13) & 1u)) >> 13;
    // Below 2^-14, subnormal halves: adding 0.5 puts the half's unit
    // (2^-24) at the float's last mantissa bit, and the float addition
    // rounds to nearest even.
    constexpr std::uint32_t kHalfUnitAligned = 0x3f000000u;  // 0.5f
    float aligned;
    std::memcpy(&aligned, &abs, 4);
    aligned += 0.5f;
    std::uint32_t aligned_bits;
    std::memcpy(&aligned_bits, &aligned, 4);
    const std::uint32_t subnormal = aligned_bits - kHalfUnitAligned;
    // From 2^16 (and infinity, NaN): infinity, or the quiet NaN.
    const std::uint32_t special = 0x7c00u | (static_cast<std::uint32_t>(abs > 0x7f800000u) << 9);
    const std::uint32_t is_special = 0u - static_cast<std::uint32_t>(abs >= 0x47800000u);
    const std::uint32_t is_subnormal = 0u - static_cast<std::uint32_t>(abs < 0x38800000u);
    const std::uint32_t half =
        (special & is_special) | (subnormal & is_subnormal) | (normal & ~(is_special | is_subnormal));
    bits = static_cast<std::uint16_t>(half | (sign >> 16));
  }
  explicit operator float() const noexcept {
    const std::uint32_t shifted = static_cast<std::uint32_t>(bits & 0x7fffu) << 13;  // exponent and mantissa
    const std::uint32_t exponent = shifted & 0x0f800000u;
    const std::uint32_t normal = shifted + 0x38000000u;   // rebias: + (127 - 15) << 23
    const std::uint32_t special = shifted + 0x70000000u;  // infinity, NaN: exponent all ones
    // Subnormal halves (and zero): as the normal float 2^-14 * (1 + m), less 2^-14.
    std::uint32_t biased = shifted + 0x38800000u;
    float as_normal;
    std::memcpy(&as_normal, &biased, 4);
    as_normal -= 6.103515625e-05f;  // 2^-14
    std::uint32_t subnormal;
    std::memcpy(&subnormal, &as_normal, 4);
    const std::uint32_t is_special = 0u - static_cast<std::uint32_t>(exponent == 0x0f800000u);
    const std::uint32_t is_subnormal = 0u - static_cast<std::uint32_t>(exponent == 0);
    const std::uint32_t out = (special & is_special) | (subnormal & is_subnormal) |
                              (normal & ~(is_special | is_subnormal)) |
                              (static_cast<std::uint32_t>(bits & 0x8000u) << 16);
    float f;
    std::memcpy(&f, &out, 4);
    return f;
  }
  static f16 from_bits(std::uint16_t b) noexcept {
    f16 h;
    h.bits = b;
    return h;
  }
};

/// bfloat16: the top half of an f32, round-to-nearest-even on conversion.
struct bf16 {
  std::uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float value) noexcept {
    std::uint32_t u;
    std::memcpy(&u, &value, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN stays a quiet NaN
      bits = static_cast<std::uint16_t>((u >> 16) | 0x40);
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);
      bits = static_cast<std::uint16_t>(u >> 16);
    }
  }
  explicit operator float() const noexcept {
    std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static bf16 from_bits(std::uint16_t b) noexcept {
    bf16 h;
    h.bits = b;
    return h;
  }
};

/// The C++ storage type of each dtype.
template <DType D>
struct dtype_storage;
template <>
struct dtype_storage<DType::F64> {
  using type = double;
};
template <>
struct dtype_storage<DType::F32> {
  using type = float;
};
template <>
struct dtype_storage<DType::F16> {
  using type = f16;
};
template <>
struct dtype_storage<DType::BF16> {
  using type = bf16;
};
template <>
struct dtype_storage<DType::I64> {
  using type = std::int64_t;
};
template <>
struct dtype_storage<DType::I32> {
  using type = std::int32_t;
};
template <>
struct dtype_storage<DType::I16> {
  using type = std::int16_t;
};
template <>
struct dtype_storage<DType::I8> {
  using type = std::int8_t;
};
template <>
struct dtype_storage<DType::U64> {
  using type = std::uint64_t;
};
template <>
struct dtype_storage<DType::U32> {
  using type = std::uint32_t;
};
template <>
struct dtype_storage<DType::U16> {
  using type = std::uint16_t;
};
template <>
struct dtype_storage<DType::U8> {
  using type = std::uint8_t;
};
template <>
struct dtype_storage<DType::Bool> {
  using type = bool;
};

/// The DType of a C++ element type (bool -> Bool, float -> F32, ...).
template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<double>() {
  return DType::F64;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::F32;
}
template <>
constexpr DType dtype_of<f16>() {
  return DType::F16;
}
template <>
constexpr DType dtype_of<bf16>() {
  return DType::BF16;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::I64;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::I32;
}
template <>
constexpr DType dtype_of<std::int16_t>() {
  return DType::I16;
}
template <>
constexpr DType dtype_of<std::int8_t>() {
  return DType::I8;
}
template <>
constexpr DType dtype_of<std::uint64_t>() {
  return DType::U64;
}
template <>
constexpr DType dtype_of<std::uint32_t>() {
  return DType::U32;
}
template <>
constexpr DType dtype_of<std::uint16_t>() {
  return DType::U16;
}
template <>
constexpr DType dtype_of<std::uint8_t>() {
  return DType::U8;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::Bool;
}

/// Calls f.template operator()<T>() with T the storage type of `d`.
/// Usage: visit_dtype(d, [&]<class T>() { ... });
template <class F>
decltype(auto) visit_dtype(DType d, F&& f) {
  switch (d) {
    case DType::F64: return f.template operator()<double>();
    case DType::F32: return f.template operator()<float>();
    case DType::F16: return f.template operator()<f16>();
    case DType::BF16: return f.template operator()<bf16>();
    case DType::I64: return f.template operator()<std::int64_t>();
    case DType::I32: return f.template operator()<std::int32_t>();
    case DType::I16: return f.template operator()<std::int16_t>();
    case DType::I8: return f.template operator()<std::int8_t>();
    case DType::U64: return f.template operator()<std::uint64_t>();
    case DType::U32: return f.template operator()<std::uint32_t>();
    case DType::U16: return f.template operator()<std::uint16_t>();
    case DType::U8: return f.template operator()<std::uint8_t>();
    case DType::Bool: return f.template operator()<bool>();
  }
  return f.template operator()<float>();  // unreachable: every enumerator is handled
}

/// Thrown by the family visitors below for a dtype outside the family: the
/// op's dtype check (infer_outputs) should have rejected it, so this is a bug
/// reported as an error rather than a crash or a kernel for the wrong type.
[[noreturn]] inline void throw_no_kernel(std::string_view op, DType d) {
  throw Error(op, "this backend has no kernel for dtype " + std::string(dtype_name(d)) +
                      " (the op's dtype check should have rejected it)");
}

/// visit_dtype restricted to the float dtypes (instantiates f only for them);
/// any other dtype throws burn::Error naming `op`.
template <class F>
decltype(auto) visit_float_dtype(std::string_view op, DType d, F&& f) {
  switch (d) {
    case DType::F64: return f.template operator()<double>();
    case DType::F32: return f.template operator()<float>();
    case DType::F16: return f.template operator()<f16>();
    case DType::BF16: return f.template operator()<bf16>();
    default: throw_no_kernel(op, d);
  }
}

/// visit_dtype restricted to the int dtypes; any other dtype throws.
template <class F>
decltype(auto) visit_int_dtype(std::string_view op, DType d, F&& f) {
  switch (d) {
    case DType::I64: return f.template operator()<std::int64_t>();
    case DType::I32: return f.template operator()<std::int32_t>();
    case DType::I16: return f.template operator()<std::int16_t>();
    case DType::I8: return f.template operator()<std::int8_t>();
    case DType::U64: return f.template operator()<std::uint64_t>();
    case DType::U32: return f.template operator()<std::uint32_t>();
    case DType::U16: return f.template operator()<std::uint16_t>();
    case DType::U8: return f.template operator()<std::uint8_t>();
    default: throw_no_kernel(op, d);
  }
}

/// visit_dtype over the float and int dtypes; Bool throws.
template <class F>
decltype(auto) visit_numeric_dtype(std::string_view op, DType d, F&& f) {
  if (is_float(d)) return visit_float_dtype(op, d, std::forward<F>(f));
  return visit_int_dtype(op, d, std::forward<F>(f));
}

/// The type arithmetic is done in: float for the half types, T otherwise.
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<f16> {
  using type = float;
};
template <>
struct compute_type<bf16> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

/// Converts between any two element types, rounding halves correctly.
template <class To, class From>
inline To convert_element(From v) noexcept {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, f16> || std::is_same_v<From, bf16>) {
    return convert_element<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, f16> || std::is_same_v<To, bf16>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // Float -> int is defined for every input (C++ leaves NaN and out-of-range
    // values undefined): NaN becomes 0, out-of-range values saturate, the rest
    // truncate toward zero. Every CPU backend casts through here.
    if (v != v) return To(0);
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace burn
