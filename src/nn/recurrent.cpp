#include "nn/recurrent.hpp"

#include <fmt/format.h>

#include <burn/module/ops.hpp>
#include <cmath>

namespace burn::nn::detail {

GateParams init_gate_params(const char* config, std::size_t d_input, std::size_t d_hidden, std::size_t n_gates,
                            bool bias, const std::optional<Initializer>& initializer,
                            const TensorCreationOptions& options) {
  if (d_input == 0 || d_hidden == 0)
    throw Error(config, fmt::format("d_input and d_hidden must be positive, got {} and {}", d_input, d_hidden));
  const double bound = 1.0 / std::sqrt(static_cast<double>(d_hidden));
  const Initializer init = initializer.value_or(Initializer::uniform(-bound, bound));
  const std::size_t width = n_gates * d_hidden;
  // Fans are one gate's (as a per-gate Linear in Burn), so Kaiming/Xavier bounds match Burn's.
  GateParams p{module::Param(init.init<2>(Shape{d_input, width}, options, d_input, d_hidden)),
               module::Param(init.init<2>(Shape{d_hidden, width}, options, d_hidden, d_hidden)), std::nullopt,
               std::nullopt};
  p.weight_ih.set_pytorch_transposed(true);
  p.weight_hh.set_pytorch_transposed(true);
  if (bias) {
    p.bias_ih.emplace(init.init<1>(Shape{width}, options, d_input, d_hidden));
    p.bias_hh.emplace(init.init<1>(Shape{width}, options, d_hidden, d_hidden));
  }
  return p;
}

void check_sequence(const char* op, const Tensor<3>& x, std::size_t d_input) {
  if (x.dims()[2] != d_input)
    throw Error(op, fmt::format("the input has shape {}; expected [batch, seq, d_input] with d_input = {}",
                                x.shape().to_string(), d_input));
}

void check_state(const char* op, const char* name, const Tensor<2>& s, std::size_t batch, std::size_t d_hidden) {
  if (s.shape() != Shape{batch, d_hidden})
    throw Error(op, fmt::format("the initial {} state has shape {}; expected [batch, d_hidden] = [{}, {}]", name,
                                s.shape().to_string(), batch, d_hidden));
}

namespace {
std::optional<Tensor<1>> value_of(const std::optional<module::Param<Tensor<1>>>& b) {
  return b ? std::optional<Tensor<1>>(b->val()) : std::nullopt;
}
}  // namespace

Tensor<3> project_inputs(const Tensor<3>& x, const module::Param<Tensor<2>>& w,
                         const std::optional<module::Param<Tensor<1>>>& b) {
  return module::linear(x, w.val(), value_of(b));
}

Tensor<2> project_hidden(const Tensor<2>& h, const module::Param<Tensor<2>>& w,
                         const std::optional<module::Param<Tensor<1>>>& b) {
  return module::linear(h, w.val(), value_of(b));
}

Tensor<3> stack_steps(const std::vector<Tensor<2>>& steps, const Tensor<3>& x, std::size_t d_hidden) {
  if (steps.empty()) return Tensor<3>::zeros(Shape{x.dims()[0], 0, d_hidden}, {x.device(), x.dtype()});
  return Tensor<2>::stack<3>(steps, 1);
}

}  // namespace burn::nn::detail
