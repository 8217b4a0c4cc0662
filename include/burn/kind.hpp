// Tensor kinds and creation options.
#pragma once

#include <optional>

#include <burn/device.hpp>
#include <burn/dtype.hpp>

namespace burn {

/// Tensor kinds: the element class a Tensor<D, K> holds.
struct Float {};
struct Int {};
struct Bool {};

enum class TensorKind : std::uint8_t { Float, Int, Bool };
template <class K>
constexpr TensorKind kind_of();
template <>
constexpr TensorKind kind_of<Float>() {
  return TensorKind::Float;
}
template <>
constexpr TensorKind kind_of<Int>() {
  return TensorKind::Int;
}
template <>
constexpr TensorKind kind_of<Bool>() {
  return TensorKind::Bool;
}

/// The kind whose tensors hold `dtype` (F32: Float, U8: Int, Bool: Bool).
constexpr TensorKind kind_of_dtype(DType dtype) noexcept {
  return is_float(dtype) ? TensorKind::Float : is_int(dtype) ? TensorKind::Int : TensorKind::Bool;
}

/// Whether `dtype` belongs to `kind` (F32 is Float, U8 is Int, ...).
constexpr bool dtype_matches_kind(DType dtype, TensorKind kind) {
  switch (kind) {
    case TensorKind::Float: return is_float(dtype);
    case TensorKind::Int: return is_int(dtype);
    case TensorKind::Bool: return is_bool(dtype);
  }
  return false;
}

/// Where, and optionally with which dtype, to create a tensor:
/// `Tensor<2>::zeros({2, 3}, device)` or `Tensor<2>::zeros({2, 3}, {device, DType::F16})`.
struct TensorCreationOptions {
  Device device;
  std::optional<DType> dtype;

  TensorCreationOptions(Device d) : device(std::move(d)) {}  // NOLINT: implicit by design
  TensorCreationOptions(Device d, DType t) : device(std::move(d)), dtype(t) {}
  TensorCreationOptions(Device d, FloatDType t) : device(std::move(d)), dtype(to_dtype(t)) {}
  TensorCreationOptions(Device d, IntDType t) : device(std::move(d)), dtype(to_dtype(t)) {}
};

/// Random distributions for Tensor::random.
class Distribution {
 public:
  /// Uniform in [0, 1).
  static const Distribution Default;
  static Distribution uniform(double low, double high) { return {Kind::Uniform, low, high}; }
  static Distribution normal(double mean, double std) { return {Kind::Normal, mean, std}; }
  static Distribution bernoulli(double p) { return {Kind::Bernoulli, p, 0.0}; }

  enum class Kind : std::uint8_t { Default, Uniform, Normal, Bernoulli };
  Kind kind() const noexcept { return kind_; }
  double a() const noexcept { return a_; }
  double b() const noexcept { return b_; }

 private:
  Distribution(Kind k, double a, double b) : kind_(k), a_(a), b_(b) {}
  Kind kind_;
  double a_, b_;
};
inline const Distribution Distribution::Default = Distribution(Distribution::Kind::Default, 0.0, 1.0);

/// One dimension's range for Tensor::slice: `{start, end}`, `{start, end, step}`,
/// `Range::all()`, `Range::from(start)`, `Range::index(i)`. Negative values
/// count from the end; a negative step walks backwards from `end - 1`.
struct Range {
  std::int64_t start = 0;
  std::optional<std::int64_t> end;
  std::int64_t step = 1;

  Range() = default;
  Range(std::int64_t s, std::int64_t e, std::int64_t st = 1) : start(s), end(e), step(st) {}
  static Range all() { return {}; }
  static Range from(std::int64_t s) {
    Range r;
    r.start = s;
    return r;
  }
  static Range index(std::int64_t i) { return i == -1 ? from(-1) : Range(i, i + 1); }
};

}  // namespace burn
