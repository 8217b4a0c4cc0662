// Activation layers (Burn's nn::Relu, Gelu, ...): modules without tensors
// that apply a burn::activation function, plus `Activation`, a value that
// names one of them (for configs that let the user choose, such as
// TransformerEncoderConfig::with_activation).
//
//   burn::nn::Relu relu;                              y = relu.forward(x);
//   auto act = burn::nn::Activation::leaky_relu(0.2); y = act.forward(x);
#pragma once

#include <burn/activation.hpp>
#include <burn/module/module.hpp>
#include <string>

namespace burn::nn {

namespace detail {
/// Throws burn::Error("[<who>] ...") unless beta > 0 (softplus divides by it).
void check_softplus_beta(double beta, std::string_view who);
}  // namespace detail

struct Relu {
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return activation::relu(x);
  }
};

struct LeakyRelu {
  double negative_slope = 0.01;
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return activation::leaky_relu(x, negative_slope);
  }
};

/// The exact (erf) gelu, as Burn and PyTorch's default.
struct Gelu {
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return activation::gelu(x);
  }
};

struct Sigmoid {
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return activation::sigmoid(x);
  }
};

struct Tanh {
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return x.tanh();
  }
};

/// x * sigmoid(x) (swish).
struct Silu {
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return activation::silu(x);
  }
};

/// clamp(alpha * x + beta, 0, 1); Burn's defaults (PyTorch uses alpha 1/6).
struct HardSigmoid {
  double alpha = 0.2;
  double beta = 0.5;
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return activation::hard_sigmoid(x, alpha, beta);
  }
};

/// x * tanh(softplus(x)).
struct Mish {
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return activation::mish(x);
  }
};

/// log(1 + exp(beta * x)) / beta; beta must be positive.
struct Softplus {
  double beta = 1.0;
  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    detail::check_softplus_beta(beta, "Softplus");
    return activation::softplus(x, beta);
  }
};

/// One of the activations above, chosen at run time.
class Activation {
 public:
  enum class Kind { Relu, LeakyRelu, Gelu, Sigmoid, Tanh, Silu, HardSigmoid, Mish, Softplus };

  static Activation relu() { return Activation(Kind::Relu); }
  static Activation leaky_relu(double negative_slope = 0.01) { return Activation(Kind::LeakyRelu, negative_slope); }
  static Activation gelu() { return Activation(Kind::Gelu); }
  static Activation sigmoid() { return Activation(Kind::Sigmoid); }
  static Activation tanh() { return Activation(Kind::Tanh); }
  static Activation silu() { return Activation(Kind::Silu); }
  static Activation hard_sigmoid(double alpha = 0.2, double beta = 0.5) {
    return Activation(Kind::HardSigmoid, alpha, beta);
  }
  static Activation mish() { return Activation(Kind::Mish); }
  /// Throws burn::Error("[Activation] ...") unless beta > 0.
  static Activation softplus(double beta = 1.0);

  Kind kind() const noexcept { return kind_; }
  /// "relu", "leaky_relu(0.01)", "softplus(2)", ...
  std::string name() const;
  friend bool operator==(const Activation&, const Activation&) = default;

  BURN_MODULE()
  template <std::size_t D>
  Tensor<D> forward(const Tensor<D>& x) const {
    return Tensor<D>(apply(x.ref()));
  }

  /// forward on an untyped handle (any rank).
  burn::detail::TensorRef apply(const burn::detail::TensorRef& x) const;

 private:
  explicit Activation(Kind kind, double a = 0.0, double b = 0.0) : kind_(kind), a_(a), b_(b) {}
  Kind kind_;
  double a_, b_;  // the parameters of LeakyRelu (slope), HardSigmoid (alpha, beta), Softplus (beta)
};

}  // namespace burn::nn
