#include <burn/dtype.hpp>

#include <cmath>

namespace burn {

std::string_view dtype_name(DType d) noexcept {
  constexpr std::string_view names[] = {"f64", "f32", "f16", "bf16", "i64", "i32", "i16",
                                        "i8",  "u64", "u32", "u16",  "u8",  "bool"};
  return names[static_cast<int>(d)];
}
std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }
std::ostream& operator<<(std::ostream& os, FloatDType d) { return os << to_dtype(d); }
std::ostream& operator<<(std::ostream& os, IntDType d) { return os << to_dtype(d); }

// f32 -> f16 with round-to-nearest-even, overflow to infinity, subnormals kept.
f16::f16(float value) noexcept {
  std::uint32_t x;
  std::memcpy(&x, &value, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN
    bits = static_cast<std::uint16_t>(sign | 0x7e00u);
    return;
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: infinity
    bits = static_cast<std::uint16_t>(sign | 0x7c00u);
    return;
  }
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    // Scale so the half subnormal unit (2^-24) becomes 1, then round to even.
    float a;
    std::memcpy(&a, &abs, 4);
    const float scaled = a * 16777216.0f;  // 2^24, exact
    const auto m = static_cast<std::uint32_t>(std::nearbyint(scaled));
    bits = static_cast<std::uint16_t>(sign | m);
    return;
  }
  std::uint32_t mant = abs & 0x7fffffu;
  std::uint32_t exp = (abs >> 23) - 127 + 15;
  std::uint32_t half = (exp << 10) | (mant >> 13);
  const std::uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // carries into exponent correctly
  bits = static_cast<std::uint16_t>(sign | half);
}

f16::operator float() const noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fu;
  const std::uint32_t mant = bits & 0x3ffu;
  std::uint32_t out;
  if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // subnormal: value = mant * 2^-24
      float f = static_cast<float>(mant) * 5.9604644775390625e-8f;
      std::memcpy(&out, &f, 4);
      out |= sign;
    }
  } else if (exp == 31) {
    out = sign | 0x7f800000u | (mant << 13);
  } else {
    out = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

}  // namespace burn
