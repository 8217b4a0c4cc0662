// Lstm: a long short-term memory over batch-first sequences, with one or
// more layers in one or both directions (PyTorch's nn.LSTM with
// batch_first=True).
//
//   auto lstm = burn::nn::LstmConfig{16, 32}.init(device);
//   auto [hidden_seq, state] = lstm.forward(x);   // x [batch, seq, 16] -> [batch, seq, 32]
//   auto [next, state2] = lstm.forward(more, state);
//
//   auto deep = burn::nn::LstmConfig{16, 32}.with_num_layers(2).with_bidirectional(true).init(device);
//   auto [y, states] = deep.forward_states(x);    // y [batch, seq, 64]; 4 states: l0, l0_reverse, l1, l1_reverse
//
// Per step, with gates computed from x_t and the previous hidden state h:
//   i = sigmoid(x W_ii + b_ii + h W_hi + b_hi)     input gate
//   f = sigmoid(x W_if + b_if + h W_hf + b_hf)     forget gate
//   g = tanh   (x W_ig + b_ig + h W_hg + b_hg)     cell candidate
//   o = sigmoid(x W_io + b_io + h W_ho + b_ho)     output gate
//   c' = f * c + i * g,   h' = o * tanh(c')
// The reverse direction runs the same recurrence from the last step to the
// first; a bidirectional layer's output is [forward | reverse] along the
// last dim, which the next layer takes as its input.
//
// Parameter names = PyTorch's nn.LSTM, so a torch state_dict maps 1:1:
// weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, and the same
// with "_reverse" for the reverse direction (nn/recurrent.hpp has the layout).
// Both biases are kept, as in torch.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <burn/nn/recurrent.hpp>

namespace burn::nn {

/// The recurrent state between steps (Burn's order: cell first).
struct LstmState {
  Tensor<2> cell;    // [batch, d_hidden]
  Tensor<2> hidden;  // [batch, d_hidden]
};

struct Lstm {
  /// One entry per layer and direction, in PyTorch's order: l0, l0_reverse
  /// (when bidirectional), l1, ...
  std::vector<RecurrentWeights> layers;
  bool bidirectional = false;

  void visit_fields(module::Visitor& visitor, const std::string& prefix) {
    detail::visit_recurrent(visitor, prefix, layers, bidirectional);
  }
  BURN_MODULE_METHODS

  std::size_t num_directions() const { return bidirectional ? 2 : 1; }
  std::size_t num_layers() const { return layers.size() / num_directions(); }
  std::size_t d_input() const { return layers.front().weight_ih->dims()[0]; }
  std::size_t d_hidden() const { return layers.front().weight_hh->dims()[0]; }

  /// One layer, one direction: x [batch, seq, d_input]; `state` defaults to
  /// zeros. Returns every step's hidden state [batch, seq, d_hidden] and the
  /// final state. Throws burn::Error("[Lstm] ...") for an input or state of
  /// the wrong shape, or for a stacked or bidirectional Lstm (forward_states).
  std::pair<Tensor<3>, LstmState> forward(const Tensor<3>& x,
                                          const std::optional<LstmState>& state = std::nullopt) const;

  /// Any number of layers and directions: x [batch, seq, d_input] and one
  /// initial state per layer and direction in PyTorch's order (none: zeros).
  /// Returns the last layer's hidden states [batch, seq, D d_hidden] and the
  /// final state of every layer and direction (PyTorch's h_n[k], c_n[k]).
  std::pair<Tensor<3>, std::vector<LstmState>> forward_states(const Tensor<3>& x,
                                                              const std::vector<LstmState>& states = {}) const;
};

struct LstmConfig {
  std::size_t d_input = 0;
  std::size_t d_hidden = 0;
  bool bias = true;
  std::size_t num_layers = 1;
  bool bidirectional = false;
  /// nullopt = PyTorch's default: every weight and bias uniform in ±1/sqrt(d_hidden).
  /// Otherwise fans are those of one gate (fan_in d_input or d_hidden, fan_out d_hidden).
  std::optional<Initializer> initializer = std::nullopt;

  LstmConfig with_bias(bool b) const {
    auto c = *this;
    c.bias = b;
    return c;
  }
  LstmConfig with_num_layers(std::size_t n) const {
    auto c = *this;
    c.num_layers = n;
    return c;
  }
  LstmConfig with_bidirectional(bool b) const {
    auto c = *this;
    c.bidirectional = b;
    return c;
  }
  LstmConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }
  /// Throws burn::Error("[LstmConfig] ...") for a zero size or layer count.
  Lstm init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
