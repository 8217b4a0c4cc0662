// A scalar operand of an operation (`x + 2.0f`, `mask_fill(m, 0)`).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include <burn/dtype.hpp>

namespace burn {

/// Holds a float, an integer or a bool, so integer scalars stay exact.
class Scalar {
 public:
  enum class Kind : std::uint8_t { Float, Int, Bool };

  Scalar() = default;
  template <class T>
  requires std::is_arithmetic_v<T> Scalar(T v) {  // NOLINT: implicit on purpose, scalars read naturally in calls
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      i_ = v ? 1 : 0;
      f_ = i_;
    } else if constexpr (std::is_floating_point_v<T>) {
      kind_ = Kind::Float;
      f_ = static_cast<double>(v);
      i_ = convert_element<std::int64_t>(f_);  // NaN -> 0, saturating: never UB
    } else {
      kind_ = Kind::Int;
      i_ = static_cast<std::int64_t>(v);
      f_ = static_cast<double>(v);
    }
  }
  Scalar(f16 v) : Scalar(static_cast<float>(v)) {}
  Scalar(bf16 v) : Scalar(static_cast<float>(v)) {}

  Kind kind() const noexcept { return kind_; }
  double as_double() const noexcept { return f_; }
  std::int64_t as_int() const noexcept { return i_; }
  bool as_bool() const noexcept { return kind_ == Kind::Float ? f_ != 0.0 : i_ != 0; }

  /// The value as element type T (an integer scalar stays exact for int T).
  template <class T>
  T as() const noexcept {
    if constexpr (std::is_same_v<T, bool>) return as_bool();
    else if constexpr (std::is_integral_v<T>) return kind_ == Kind::Float ? convert_element<T>(f_) : static_cast<T>(i_);
    else return convert_element<T>(f_);
  }

  std::string to_string() const;

 private:
  Kind kind_ = Kind::Float;
  double f_ = 0.0;
  std::int64_t i_ = 0;
};

}  // namespace burn
