#include <burn/activation.hpp>
#include <burn/nn/gru.hpp>
#include <fmt/format.h>
#include <vector>

#include "nn/recurrent.hpp"

namespace burn::nn {

namespace {

constexpr const char* kGruOp = "Gru";

/// One layer in one direction from hidden state `h`; returns the hidden
/// states and the final one.
std::pair<Tensor<3>, Tensor<2>> run_gru(const Tensor<3>& x, const RecurrentWeights& w, Tensor<2> h, bool reverse,
                                        std::size_t d_hidden) {
  const Tensor<3> y = detail::run_direction(x, w, reverse, d_hidden, [&](const Tensor<2>& x_gates) {
    const auto gx = x_gates.chunk(3, 1);
    const auto gh = detail::project_hidden(h, w.weight_hh, w.bias_hh).chunk(3, 1);  // r, z, n
    const Tensor<2> reset = activation::sigmoid(gx[0] + gh[0]);
    const Tensor<2> update = activation::sigmoid(gx[1] + gh[1]);
    const Tensor<2> candidate = (gx[2] + reset * gh[2]).tanh();
    h = candidate + update * (h - candidate);  // (1 - z) n + z h
    return h;
  });
  return {y, h};
}

Tensor<2> checked_state(const std::optional<Tensor<2>>& state, std::size_t batch, std::size_t d_hidden,
                        const Tensor<3>& x) {
  if (!state) return Tensor<2>::zeros(Shape{batch, d_hidden}, {x.device(), x.dtype()});
  detail::check_state(kGruOp, "hidden", *state, batch, d_hidden);
  return *state;
}

}  // namespace

Tensor<3> Gru::forward(const Tensor<3>& x, const std::optional<Tensor<2>>& state) const {
  detail::check_built(kGruOp, "GruConfig", layers, bidirectional);
  if (state && layers.size() != 1)
    throw Error(kGruOp, fmt::format("forward takes an initial state for one layer in one direction; this Gru has {} "
                                    "layer(s){}, so its states are one per layer and direction: call forward_states",
                                    num_layers(), bidirectional ? ", bidirectional" : ""));
  if (state) {
    detail::check_sequence(kGruOp, x, d_input());
    return run_gru(x, layers.front(), checked_state(state, x.dims()[0], d_hidden(), x), false, d_hidden()).first;
  }
  return forward_states(x).first;
}

std::pair<Tensor<3>, std::vector<Tensor<2>>> Gru::forward_states(const Tensor<3>& x,
                                                                 const std::vector<Tensor<2>>& states) const {
  detail::check_built(kGruOp, "GruConfig", layers, bidirectional);
  detail::check_sequence(kGruOp, x, d_input());
  detail::check_state_count(kGruOp, states.size(), layers.size(), bidirectional);
  const std::size_t batch = x.dims()[0];
  return detail::run_layers<Tensor<2>>(
      x, num_layers(), bidirectional, [&](const Tensor<3>& input, std::size_t k, bool reverse) {
        const auto initial =
            checked_state(states.empty() ? std::nullopt : std::optional(states[k]), batch, d_hidden(), x);
        return run_gru(input, layers[k], initial, reverse, d_hidden());
      });
}

Gru GruConfig::init(const TensorCreationOptions& options) const {
  return Gru{detail::init_recurrent_layers("GruConfig", d_input, d_hidden, 3, bias, num_layers, bidirectional,
                                           initializer, options),
             bidirectional};
}

}  // namespace burn::nn
