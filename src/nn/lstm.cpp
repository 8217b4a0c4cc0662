#include <burn/activation.hpp>
#include <burn/nn/lstm.hpp>
#include <vector>

#include "nn/recurrent.hpp"

namespace burn::nn {

std::pair<Tensor<3>, LstmState> Lstm::forward(const Tensor<3>& x, const std::optional<LstmState>& state) const {
  constexpr const char* op = "Lstm";
  const std::size_t h_size = d_hidden();
  detail::check_sequence(op, x, d_input());
  const std::size_t batch = x.dims()[0], seq = x.dims()[1];
  Tensor<2> c = state ? state->cell : Tensor<2>::zeros(Shape{batch, h_size}, {x.device(), x.dtype()});
  Tensor<2> h = state ? state->hidden : c;
  if (state) {
    detail::check_state(op, "cell", c, batch, h_size);
    detail::check_state(op, "hidden", h, batch, h_size);
  }

  // The input half of every gate for all steps in one product; only h W_hh is sequential.
  const Tensor<3> x_gates = detail::project_inputs(x, weight_ih_l0, bias_ih_l0);
  std::vector<Tensor<2>> outputs;
  outputs.reserve(seq);
  for (std::size_t t = 0; t < seq; ++t) {
    const Tensor<2> gates = x_gates.narrow(1, static_cast<std::int64_t>(t), 1).squeeze<2>(1) +
                            detail::project_hidden(h, weight_hh_l0, bias_hh_l0);
    const auto g = gates.chunk(4, 1);  // torch's order: input, forget, cell candidate, output
    const Tensor<2> input_gate = activation::sigmoid(g[0]);
    const Tensor<2> forget_gate = activation::sigmoid(g[1]);
    const Tensor<2> candidate = g[2].tanh();
    const Tensor<2> output_gate = activation::sigmoid(g[3]);
    c = forget_gate * c + input_gate * candidate;
    h = output_gate * c.tanh();
    outputs.push_back(h);
  }
  return {detail::stack_steps(outputs, x, h_size), LstmState{c, h}};
}

Lstm LstmConfig::init(const TensorCreationOptions& options) const {
  auto p = detail::init_gate_params("LstmConfig", d_input, d_hidden, 4, bias, initializer, options);
  return Lstm{std::move(p.weight_ih), std::move(p.weight_hh), std::move(p.bias_ih), std::move(p.bias_hh)};
}

}  // namespace burn::nn
