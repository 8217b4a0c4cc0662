#include <burn/activation.hpp>
#include <burn/nn/gru.hpp>
#include <vector>

#include "nn/recurrent.hpp"

namespace burn::nn {

Tensor<3> Gru::forward(const Tensor<3>& x, const std::optional<Tensor<2>>& state) const {
  constexpr const char* op = "Gru";
  const std::size_t h_size = d_hidden();
  detail::check_sequence(op, x, d_input());
  const std::size_t batch = x.dims()[0], seq = x.dims()[1];
  Tensor<2> h = state ? *state : Tensor<2>::zeros(Shape{batch, h_size}, {x.device(), x.dtype()});
  if (state) detail::check_state(op, "hidden", h, batch, h_size);

  // The input half of every gate for all steps in one product; only h W_hh is sequential.
  const Tensor<3> x_gates = detail::project_inputs(x, weight_ih_l0, bias_ih_l0);
  std::vector<Tensor<2>> outputs;
  outputs.reserve(seq);
  for (std::size_t t = 0; t < seq; ++t) {
    const auto gx = x_gates.narrow(1, static_cast<std::int64_t>(t), 1).squeeze<2>(1).chunk(3, 1);
    const auto gh = detail::project_hidden(h, weight_hh_l0, bias_hh_l0).chunk(3, 1);  // r, z, n
    const Tensor<2> reset = activation::sigmoid(gx[0] + gh[0]);
    const Tensor<2> update = activation::sigmoid(gx[1] + gh[1]);
    const Tensor<2> candidate = (gx[2] + reset * gh[2]).tanh();
    h = candidate + update * (h - candidate);  // (1 - z) n + z h
    outputs.push_back(h);
  }
  return detail::stack_steps(outputs, x, h_size);
}

Gru GruConfig::init(const TensorCreationOptions& options) const {
  auto p = detail::init_gate_params("GruConfig", d_input, d_hidden, 3, bias, initializer, options);
  return Gru{std::move(p.weight_ih), std::move(p.weight_hh), std::move(p.bias_ih), std::move(p.bias_hh)};
}

}  // namespace burn::nn
