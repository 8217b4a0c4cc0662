// TensorData: a tensor's values on the host (shape, dtype and bytes).
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <burn/dtype.hpp>
#include <burn/error.hpp>
#include <burn/shape.hpp>

namespace burn {

/// Tolerance for approximate comparisons, as in Burn:
/// |x - y| <= max(relative * |x + y|, absolute).
struct Tolerance {
  double relative = 0.005;
  double absolute = 1e-5;
  static Tolerance default_for(DType d) {
    if (d == DType::F16) return {0.01, 1e-2};
    if (d == DType::BF16) return {0.02, 4e-2};
    return {};
  }
  static Tolerance rel_abs(double r, double a) { return {r, a}; }
  static Tolerance absolute_only(double a) { return {0.0, a}; }
};

class TensorData {
 public:
  TensorData() = default;
  /// Raw bytes in row-major order; throws if their size does not match.
  TensorData(std::vector<std::byte> bytes, Shape shape, DType dtype);

  template <class T>
  TensorData(const std::vector<T>& values, Shape shape) : shape_(std::move(shape)), dtype_(dtype_of<T>()) {
    check_count(values.size());
    const std::size_t n_bytes = values.size() * sizeof(T);
    bytes_.resize(n_bytes);
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < values.size(); ++i) bytes_[i] = std::byte(values[i] ? 1 : 0);
    } else if (n_bytes) {
      std::memcpy(bytes_.data(), values.data(), n_bytes);
    }
  }
  template <class T>
  explicit TensorData(const std::vector<T>& values) : TensorData(values, Shape{values.size()}) {}

  /// Zero-filled data of a given shape and dtype.
  static TensorData zeros(Shape shape, DType dtype);

  const Shape& shape() const noexcept { return shape_; }
  DType dtype() const noexcept { return dtype_; }
  std::size_t num_elements() const noexcept { return shape_.num_elements(); }
  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  std::span<std::byte> bytes_mut() noexcept { return bytes_; }
  std::vector<std::byte> into_bytes() && { return std::move(bytes_); }

  /// The values as T; throws burn::Error if T is not exactly the stored dtype.
  template <class T>
  std::vector<T> to_vec() const {
    if (dtype_of<T>() != dtype_) throw_dtype_mismatch(dtype_of<T>());
    std::vector<T> out(num_elements());
    if constexpr (std::is_same_v<T, bool>) {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = bytes_[i] != std::byte(0);
    } else if (!out.empty()) {
      std::memcpy(out.data(), bytes_.data(), bytes_.size());
    }
    return out;
  }
  /// A copy converted to element type T.
  template <class T>
  TensorData convert() const {
    return convert(dtype_of<T>());
  }
  TensorData convert(DType dtype) const;

  /// Element i converted to double (for printing and comparisons).
  double value_as_double(std::size_t i) const;

  /// Throws burn::Error with a readable diff unless shape, dtype and every
  /// value are equal.
  void assert_eq(const TensorData& expected, bool check_dtype = true) const;
  /// Throws burn::Error with a readable diff unless shapes match and every
  /// value is within tolerance (NaN equals NaN, infinities must match).
  void assert_approx_eq(const TensorData& expected, Tolerance tol = {}) const;

  /// "TensorData { shape: [2], dtype: f32, values: [1, 2] }"
  std::string to_string(std::size_t max_values = 64) const;
  friend bool operator==(const TensorData&, const TensorData&) = default;

 private:
  void check_count(std::size_t n) const;
  [[noreturn]] void throw_dtype_mismatch(DType asked) const;

  std::vector<std::byte> bytes_;
  Shape shape_;
  DType dtype_ = DType::F32;
};

}  // namespace burn
