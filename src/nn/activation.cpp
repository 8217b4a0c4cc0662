#include <fmt/format.h>

#include <burn/nn/activation.hpp>

namespace burn::nn {

namespace detail {
void check_softplus_beta(double beta, std::string_view who) {
  if (!(beta > 0.0)) throw Error(who, fmt::format("softplus beta must be positive, got {}", beta));
}
}  // namespace detail

Activation Activation::softplus(double beta) {
  detail::check_softplus_beta(beta, "Activation");
  return Activation(Kind::Softplus, beta);
}

std::string Activation::name() const {
  switch (kind_) {
    case Kind::Relu: return "relu";
    case Kind::LeakyRelu: return fmt::format("leaky_relu({})", a_);
    case Kind::Gelu: return "gelu";
    case Kind::Sigmoid: return "sigmoid";
    case Kind::Tanh: return "tanh";
    case Kind::Silu: return "silu";
    case Kind::HardSigmoid: return fmt::format("hard_sigmoid({}, {})", a_, b_);
    case Kind::Mish: return "mish";
    case Kind::Softplus: return fmt::format("softplus({})", a_);
  }
  throw Error("Activation", "unknown activation kind");
}

burn::detail::TensorRef Activation::apply(const burn::detail::TensorRef& x) const {
  namespace d = burn::detail;  // qualified: the factories above share these names
  switch (kind_) {
    case Kind::Relu: return d::relu(x);
    case Kind::LeakyRelu: return d::leaky_relu(x, a_);
    case Kind::Gelu: return d::gelu(x);
    case Kind::Sigmoid: return d::sigmoid(x);
    case Kind::Tanh: return d::unary(ir::UnaryOp::Tanh, x);
    case Kind::Silu: return d::silu(x);
    case Kind::HardSigmoid: return d::hard_sigmoid(x, a_, b_);
    case Kind::Mish: return d::mish(x);
    case Kind::Softplus: return d::softplus(x, a_);
  }
  throw Error("Activation", "unknown activation kind");
}

}  // namespace burn::nn
