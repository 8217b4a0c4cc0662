// Gru: a single-layer, unidirectional gated recurrent unit over batch-first
// sequences.
//
//   auto gru = burn::nn::GruConfig{16, 32}.init(device);
//   burn::Tensor<3> hidden_seq = gru.forward(x);      // x [batch, seq, 16] -> [batch, seq, 32]
//   auto h = hidden_seq.narrow(1, -1, 1).squeeze<2>(1);  // last step; continue with gru.forward(more, h)
//
// Per step (PyTorch's formulation, the reset gate applied after the hidden
// projection, which is Burn's default `reset_after`):
//   r = sigmoid(x W_ir + b_ir + h W_hr + b_hr)        reset gate
//   z = sigmoid(x W_iz + b_iz + h W_hz + b_hz)        update gate
//   n = tanh   (x W_in + b_in + r * (h W_hn + b_hn))  candidate
//   h' = (1 - z) * n + z * h
//
// Parameter layout = PyTorch's nn.GRU (num_layers=1, batch_first=True):
// weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, gates stacked in torch's
// order r, z, n. The matrices are stored transposed relative to torch
// ([d_input, 3 d_hidden], [d_hidden, 3 d_hidden]) and flagged
// is_pytorch_transposed: our weight_ih_l0[:, k*h:(k+1)*h] =
// torch weight_ih_l0[k*h:(k+1)*h, :]^T for gate k in (r, z, n).
#pragma once

#include <burn/module/module.hpp>
#include <burn/nn/initializer.hpp>
#include <cstddef>
#include <optional>

namespace burn::nn {

struct Gru {
  module::Param<Tensor<2>> weight_ih_l0;               // [d_input, 3 d_hidden], gate blocks r | z | n
  module::Param<Tensor<2>> weight_hh_l0;               // [d_hidden, 3 d_hidden]
  std::optional<module::Param<Tensor<1>>> bias_ih_l0;  // [3 d_hidden]
  std::optional<module::Param<Tensor<1>>> bias_hh_l0;  // [3 d_hidden]
  BURN_MODULE(weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0)

  std::size_t d_input() const { return weight_ih_l0->dims()[0]; }
  std::size_t d_hidden() const { return weight_hh_l0->dims()[0]; }

  /// x [batch, seq, d_input]; `state` [batch, d_hidden] is the initial hidden
  /// state (zeros by default). Returns every step's hidden state
  /// [batch, seq, d_hidden]. Throws burn::Error("[Gru] ...") for wrong shapes.
  Tensor<3> forward(const Tensor<3>& x, const std::optional<Tensor<2>>& state = std::nullopt) const;
};

struct GruConfig {
  std::size_t d_input = 0;
  std::size_t d_hidden = 0;
  bool bias = true;
  /// nullopt = PyTorch's default: every weight and bias uniform in ±1/sqrt(d_hidden).
  /// Otherwise fans are those of one gate (fan_in d_input or d_hidden, fan_out d_hidden).
  std::optional<Initializer> initializer = std::nullopt;

  GruConfig with_bias(bool b) const {
    auto c = *this;
    c.bias = b;
    return c;
  }
  GruConfig with_initializer(Initializer i) const {
    auto c = *this;
    c.initializer = i;
    return c;
  }
  /// Throws burn::Error("[GruConfig] ...") for a zero size.
  Gru init(const TensorCreationOptions& options) const;
};

}  // namespace burn::nn
