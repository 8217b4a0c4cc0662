// Gru: a gated recurrent unit over batch-first sequences, with one or more
// layers in one or both directions (PyTorch's nn.GRU with batch_first=True).
//
//   auto gru = burn::nn::GruConfig{16, 32}.init(device);
//   burn::Tensor<3> hidden_seq = gru.forward(x);      // x [batch, seq, 16] -> [batch, seq, 32]
//   auto h = hidden_seq.narrow(1, -1, 1).squeeze<2>(1);  // last step; continue with gru.forward(more, h)
//
//   auto deep = burn::nn::GruConfig{16, 32}.with_num_layers(2).with_bidirectional(true).init(device);
//   auto [y, h_n] = deep.forward_states(x);   // y [batch, seq, 64]; h_n: l0, l0_reverse, l1, l1_reverse
//
// Per step (PyTorch's formulation, the reset gate applied after the hidden
// projection, which is Burn's default `reset_after`):
//   r = sigmoid(x W_ir + b_ir + h W_hr + b_hr)        reset gate
//   z = sigmoid(x W_iz + b_iz + h W_hz + b_hz)        update gate
//   n = tanh   (x W_in + b_in + r * (h W_hn + b_hn))  candidate
//   h' = (1 - z) * n + z * h
// The reverse direction and stacking are as in Lstm (nn/lstm.hpp).
//
// Parameter names = PyTorch's nn.GRU: weight_ih_l{k}, weight_hh_l{k},
// bias_ih_l{k}, bias_hh_l{k}, and "_reverse" ones (nn/recurrent.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <burn/nn/recurrent.hpp>

namespace burn::nn {

struct Gru {
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

  /// x [batch, seq, d_input] -> the last layer's hidden states
  /// [batch, seq, D d_hidden]. `state` [batch, d_hidden], the initial hidden
  /// state (zeros by default), is for a one-layer, one-direction Gru; give a
  /// stacked one its states through forward_states. Throws
  /// burn::Error("[Gru] ...") for wrong shapes.
  Tensor<3> forward(const Tensor<3>& x, const std::optional<Tensor<2>>& state = std::nullopt) const;

  /// Any number of layers and directions, with one initial hidden state per
  /// layer and direction in PyTorch's order (none: zeros). Returns the last
  /// layer's hidden states and every final state (PyTorch's h_n[k]).
  std::pair<Tensor<3>, std::vector<Tensor<2>>> forward_states(const Tensor<3>& x,
                                                              const std::vector<Tensor<2>>& states = {}) const;
};

struct GruConfig {
  std::size_t d_input = 0;
  std::size_t d_hidden = 0;
  bool bias = true;
  std::size_t num_layers = 1;
  bool bidirectional = false;
  /// nullopt = PyTorch's default: every weight and bias uniform in ±1/sqrt(d_hidden).
  /// Otherwise fans are those of one gate (fan_in d_input or d_hidden, fan_out d_hidden).
  std::optional<Initializer> initializer = std::nullopt;

  GruConfig with_bias(bool b) const {
    auto c = *this;
    c.bias = b;
    return c;
  }
  GruConfig with_num_layers(std::size_t n) const {
    auto c = *this;
    c.num_layers = n;
    return c;
  }
  GruConfig with_bidirectional(bool b) const {
    auto c = *this;
    c.bidirectional = b;
    return c;
  }
  GruConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }
  /// Throws burn::Error("[GruConfig] ...") for a zero size or layer count.
  Gru init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
