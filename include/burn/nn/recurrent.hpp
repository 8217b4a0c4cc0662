// What Lstm and Gru share: the weights of one layer in one direction, and
// the PyTorch names they are visited under.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <burn/module/module.hpp>

namespace burn::nn {

/// One recurrent layer's weights in one direction, its G gates stacked in
/// PyTorch's order (Lstm: i, f, g, o; Gru: r, z, n). The matrices are
/// PyTorch's transposed and flagged is_pytorch_transposed, so the PyTorch
/// record adapter converts them:
///   weight_ih [d_layer_input, G d_hidden]   (torch: [G d_hidden, d_layer_input])
///   weight_hh [d_hidden, G d_hidden]        (torch: [G d_hidden, d_hidden])
/// d_layer_input is d_input for the first layer and D d_hidden above it
/// (D = 2 when bidirectional: the layer below's two directions, concatenated).
struct RecurrentWeights {
  module::Param<Tensor<2>> weight_ih;
  module::Param<Tensor<2>> weight_hh;
  std::optional<module::Param<Tensor<1>>> bias_ih;  // [G d_hidden]
  std::optional<module::Param<Tensor<1>>> bias_hh;  // [G d_hidden]
};

namespace detail {

/// Visits `layers` (PyTorch's order: l0, l0_reverse when bidirectional, l1,
/// ...) under nn.LSTM's / nn.GRU's names: weight_ih_l0, weight_hh_l0,
/// bias_ih_l0, bias_hh_l0, weight_ih_l0_reverse, ..., weight_ih_l1, ...
void visit_recurrent(module::Visitor& visitor, const std::string& prefix, std::vector<RecurrentWeights>& layers,
                     bool bidirectional);

}  // namespace detail

}  // namespace burn::nn
