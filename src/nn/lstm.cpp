#include <burn/activation.hpp>
#include <burn/nn/lstm.hpp>
#include <fmt/format.h>
#include <vector>

#include "nn/recurrent.hpp"

namespace burn::nn {

namespace {

constexpr const char* kLstmOp = "Lstm";

/// One layer in one direction from `state`; returns the hidden states and
/// the final state.
std::pair<Tensor<3>, LstmState> run_lstm(const Tensor<3>& x, const RecurrentWeights& w, const LstmState& state,
                                         bool reverse, std::size_t d_hidden) {
  Tensor<2> c = state.cell, h = state.hidden;
  const Tensor<3> y = detail::run_direction(x, w, reverse, d_hidden, [&](const Tensor<2>& x_gates) {
    const Tensor<2> gates = x_gates + detail::project_hidden(h, w.weight_hh, w.bias_hh);
    const auto g = gates.chunk(4, 1);  // torch's order: input, forget, cell candidate, output
    const Tensor<2> input_gate = activation::sigmoid(g[0]);
    const Tensor<2> forget_gate = activation::sigmoid(g[1]);
    const Tensor<2> candidate = g[2].tanh();
    const Tensor<2> output_gate = activation::sigmoid(g[3]);
    c = forget_gate * c + input_gate * candidate;
    h = output_gate * c.tanh();
    return h;
  });
  return {y, LstmState{c, h}};
}

LstmState checked_state(const std::optional<LstmState>& state, std::size_t batch, std::size_t d_hidden,
                        const Tensor<3>& x) {
  if (!state) {
    const auto zeros = Tensor<2>::zeros(Shape{batch, d_hidden}, {x.device(), x.dtype()});
    return LstmState{zeros, zeros};
  }
  detail::check_state(kLstmOp, "cell", state->cell, batch, d_hidden);
  detail::check_state(kLstmOp, "hidden", state->hidden, batch, d_hidden);
  return *state;
}

}  // namespace

std::pair<Tensor<3>, LstmState> Lstm::forward(const Tensor<3>& x, const std::optional<LstmState>& state) const {
  detail::check_built(kLstmOp, "LstmConfig", layers, bidirectional);
  if (layers.size() != 1)
    throw Error(kLstmOp, fmt::format("forward runs one layer in one direction; this Lstm has {} layer(s){}, so its "
                                     "states are one per layer and direction: call forward_states",
                                     num_layers(), bidirectional ? ", bidirectional" : ""));
  detail::check_sequence(kLstmOp, x, d_input());
  return run_lstm(x, layers.front(), checked_state(state, x.dims()[0], d_hidden(), x), false, d_hidden());
}

std::pair<Tensor<3>, std::vector<LstmState>> Lstm::forward_states(const Tensor<3>& x,
                                                                  const std::vector<LstmState>& states) const {
  detail::check_built(kLstmOp, "LstmConfig", layers, bidirectional);
  detail::check_sequence(kLstmOp, x, d_input());
  detail::check_state_count(kLstmOp, states.size(), layers.size(), bidirectional);
  const std::size_t batch = x.dims()[0];
  return detail::run_layers<LstmState>(
      x, num_layers(), bidirectional, [&](const Tensor<3>& input, std::size_t k, bool reverse) {
        const auto initial =
            checked_state(states.empty() ? std::nullopt : std::optional(states[k]), batch, d_hidden(), x);
        return run_lstm(input, layers[k], initial, reverse, d_hidden());
      });
}

Lstm LstmConfig::init(const TensorCreationOptions& options) const {
  return Lstm{detail::init_recurrent_layers("LstmConfig", d_input, d_hidden, 4, bias, num_layers, bidirectional,
                                            initializer, options),
              bidirectional};
}

}  // namespace burn::nn
