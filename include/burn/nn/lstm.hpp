// Lstm: a single-layer, unidirectional long short-term memory over
// batch-first sequences.
//
//   auto lstm = burn::nn::LstmConfig{16, 32}.init(device);
//   auto [hidden_seq, state] = lstm.forward(x);   // x [batch, seq, 16] -> [batch, seq, 32]
//   auto [next, state2] = lstm.forward(more, state);
//
// Per step, with gates computed from x_t and the previous hidden state h:
//   i = sigmoid(x W_ii + b_ii + h W_hi + b_hi)     input gate
//   f = sigmoid(x W_if + b_if + h W_hf + b_hf)     forget gate
//   g = tanh   (x W_ig + b_ig + h W_hg + b_hg)     cell candidate
//   o = sigmoid(x W_io + b_io + h W_ho + b_ho)     output gate
//   c' = f * c + i * g,   h' = o * tanh(c')
//
// Parameter layout = PyTorch's nn.LSTM (num_layers=1, batch_first=True), so a
// torch state_dict maps 1:1 by name: weight_ih_l0, weight_hh_l0, bias_ih_l0,
// bias_hh_l0, with the four gates stacked in torch's order i, f, g, o. As for
// Linear, the matrices are stored transposed relative to torch
// ([d_input, 4 d_hidden] and [d_hidden, 4 d_hidden]; torch: [4 d_hidden, ...])
// and flagged is_pytorch_transposed, so the PyTorch record adapter converts
// them: our weight_ih_l0[:, k*h:(k+1)*h] = torch weight_ih_l0[k*h:(k+1)*h, :]^T
// for gate k in (i, f, g, o). Both biases are kept, as in torch.
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <cstddef>
#include <optional>
#include <utility>

namespace burn::nn {

/// The recurrent state between steps (Burn's order: cell first).
struct LstmState {
  Tensor<2> cell;    // [batch, d_hidden]
  Tensor<2> hidden;  // [batch, d_hidden]
};

struct Lstm {
  module::Param<Tensor<2>> weight_ih_l0;               // [d_input, 4 d_hidden], gate blocks i | f | g | o
  module::Param<Tensor<2>> weight_hh_l0;               // [d_hidden, 4 d_hidden]
  std::optional<module::Param<Tensor<1>>> bias_ih_l0;  // [4 d_hidden]
  std::optional<module::Param<Tensor<1>>> bias_hh_l0;  // [4 d_hidden]
  BURN_MODULE(weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0)

  std::size_t d_input() const { return weight_ih_l0->dims()[0]; }
  std::size_t d_hidden() const { return weight_hh_l0->dims()[0]; }

  /// x [batch, seq, d_input]; `state` defaults to zeros. Returns every step's
  /// hidden state [batch, seq, d_hidden] and the final state. Throws
  /// burn::Error("[Lstm] ...") for an input or state of the wrong shape.
  std::pair<Tensor<3>, LstmState> forward(const Tensor<3>& x,
                                          const std::optional<LstmState>& state = std::nullopt) const;
};

struct LstmConfig {
  std::size_t d_input = 0;
  std::size_t d_hidden = 0;
  bool bias = true;
  /// nullopt = PyTorch's default: every weight and bias uniform in ±1/sqrt(d_hidden).
  /// Otherwise fans are those of one gate (fan_in d_input or d_hidden, fan_out d_hidden).
  std::optional<Initializer> initializer = std::nullopt;

  LstmConfig with_bias(bool b) const {
    auto c = *this;
    c.bias = b;
    return c;
  }
  LstmConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }
  /// Throws burn::Error("[LstmConfig] ...") for a zero size.
  Lstm init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
