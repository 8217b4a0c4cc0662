// Parameter initialisers, as Burn's `Initializer`.
//
//   auto w = burn::nn::Initializer::kaiming_uniform().init<2>({784, 128}, device, 784, 128);
//
// Kaiming draws with bound sqrt(3) * gain / sqrt(fan) (uniform) or std
// gain / sqrt(fan) (normal); fan is fan_in unless `fan_out_only`. With the
// default gain 1/sqrt(3) the uniform bound is 1/sqrt(fan_in): PyTorch's
// default for Linear and Conv. Xavier uses fan_in + fan_out.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>

#include <burn/tensor.hpp>

namespace burn::nn {

class Initializer {
 public:
  enum class Kind { Constant, Uniform, Normal, KaimingUniform, KaimingNormal, XavierUniform, XavierNormal };

  static Initializer constant(double value) { return {Kind::Constant, value, 0, false}; }
  static Initializer zeros() { return constant(0.0); }
  static Initializer ones() { return constant(1.0); }
  static Initializer uniform(double low, double high) { return {Kind::Uniform, low, high, false}; }
  static Initializer normal(double mean, double std) { return {Kind::Normal, mean, std, false}; }
  static Initializer kaiming_uniform(double gain = 1.0 / std::sqrt(3.0), bool fan_out_only = false) {
    return {Kind::KaimingUniform, gain, 0, fan_out_only};
  }
  static Initializer kaiming_normal(double gain = 1.0 / std::sqrt(3.0), bool fan_out_only = false) {
    return {Kind::KaimingNormal, gain, 0, fan_out_only};
  }
  static Initializer xavier_uniform(double gain = 1.0) { return {Kind::XavierUniform, gain, 0, false}; }
  static Initializer xavier_normal(double gain = 1.0) { return {Kind::XavierNormal, gain, 0, false}; }

  Kind kind() const noexcept { return kind_; }

  /// A tensor of `shape` on `options`' device and dtype. Kaiming needs
  /// fan_in (fan_out with fan_out_only), Xavier both; a missing fan is a
  /// burn::Error. Random draws follow Device::seed.
  burn::detail::TensorRef init_ref(const Shape& shape, const TensorCreationOptions& options,
                                   std::optional<std::size_t> fan_in = std::nullopt,
                                   std::optional<std::size_t> fan_out = std::nullopt) const;

  template <std::size_t D>
  Tensor<D> init(const Shape& shape, const TensorCreationOptions& options,
                 std::optional<std::size_t> fan_in = std::nullopt,
                 std::optional<std::size_t> fan_out = std::nullopt) const {
    return Tensor<D>(init_ref(shape, options, fan_in, fan_out));
  }

 private:
  Initializer(Kind kind, double a, double b, bool fan_out_only)
      : kind_(kind), a_(a), b_(b), fan_out_only_(fan_out_only) {}
  Kind kind_;
  double a_, b_;
  bool fan_out_only_;
};

}  // namespace burn::nn
