// Lstm and Gru: forward against PyTorch 1.13, state passing, configs,
// errors, and finite-difference gradients.
//
// Reference values: torch.nn.LSTM(3, 2, batch_first=True) and
// torch.nn.GRU(3, 2, batch_first=True) in float64, parameters set from wave()
// below in torch's layout (gates stacked i, f, g, o / r, z, n):
//   weight_ih_l0 = wave(G*2*3, base, 0.5).reshape(G*2, 3)
//   weight_hh_l0 = wave(G*2*2, base + 0.1, 0.5).reshape(G*2, 2)
//   bias_ih_l0 = wave(G*2, base + 0.2, 0.3), bias_hh_l0 = wave(G*2, base + 0.3, 0.3)
// with G = 4, base = 2.1, x = wave(18, 2.5, 1).reshape(2, 3, 3),
//      h0 = wave(4, 2.6, 0.5), c0 = wave(4, 2.7, 0.5) for the LSTM;
//      G = 3, base = 3.1, x = wave(18, 3.5, 1).reshape(2, 3, 3), h0 = wave(4, 3.6, 0.5) for the GRU;
// outputs printed with "%.8g".
#include <burn/nn/gru.hpp>
#include <burn/nn/lstm.hpp>
#include <cmath>

#include "../autodiff/grad_check.hpp"
#include "burn_test.hpp"
#include "seq_test_support.hpp"

namespace {

using namespace burn;
using burn::testing::all_devices;
using burn::testing::expect_op_error;
using burn::testing::expect_values;
using burn::testing::seq::seq_wave;
using burn::testing::seq::tensor;

const Tolerance kRecurrentTol = Tolerance::rel_abs(1e-4, 1e-5);

std::vector<double> values(const Tensor<3>& t) { return t.to_data().convert<double>().to_vec<double>(); }

/// Parameters from torch's layout ([G h, in], transposed into ours).
template <class Rnn>
Rnn torch_rnn(std::size_t gates, double base, const Device& device) {
  const std::size_t h = 2, in = 3;
  return Rnn{{nn::RecurrentWeights{
      module::Param(tensor<2>(seq_wave(gates * h * in, base, 0.5), Shape{gates * h, in}, device).transpose()),
      module::Param(tensor<2>(seq_wave(gates * h * h, base + 0.1, 0.5), Shape{gates * h, h}, device).transpose()),
      module::Param(tensor<1>(seq_wave(gates * h, base + 0.2, 0.3), Shape{gates * h}, device)),
      module::Param(tensor<1>(seq_wave(gates * h, base + 0.3, 0.3), Shape{gates * h}, device))}}};
}

nn::Lstm reference_lstm(const Device& device) { return torch_rnn<nn::Lstm>(4, 2.1, device); }
nn::Gru reference_gru(const Device& device) { return torch_rnn<nn::Gru>(3, 3.1, device); }

TEST(Lstm, MatchesPyTorchFromAZeroState) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto [y, state] = reference_lstm(device).forward(tensor<3>(seq_wave(18, 2.5, 1.0), Shape{2, 3, 3}, device));
    expect_values(y.to_data(),
                  {-0.052728783, 0.062651813, 0.16841755, -0.0059187805, 0.13963957, 0.079639301, -0.10383131,
                   0.04697249, 0.12264567, -0.074218662, 0.074230556, 0.05588411},
                  Shape{2, 3, 2}, kRecurrentTol);
    expect_values(state.hidden.to_data(), {0.13963957, 0.079639301, 0.074230556, 0.05588411}, Shape{2, 2},
                  kRecurrentTol);
    expect_values(state.cell.to_data(), {0.57019825, 0.14251707, 0.28036606, 0.13261031}, Shape{2, 2}, kRecurrentTol);
  }
}

TEST(Lstm, MatchesPyTorchFromAGivenState) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const nn::LstmState initial{tensor<2>(seq_wave(4, 2.7, 0.5), Shape{2, 2}, device),
                                tensor<2>(seq_wave(4, 2.6, 0.5), Shape{2, 2}, device)};
    const auto [y, state] =
        reference_lstm(device).forward(tensor<3>(seq_wave(18, 2.5, 1.0), Shape{2, 3, 3}, device), initial);
    expect_values(y.to_data(),
                  {-0.058988327, -0.0056765787, 0.15961371, -0.04032352, 0.13698373, 0.06113464, -0.14684807,
                   0.057735832, 0.11322758, -0.059479382, 0.072710848, 0.061811138},
                  Shape{2, 3, 2}, kRecurrentTol);
    expect_values(state.cell.to_data(), {0.55715676, 0.1095498, 0.27309357, 0.14709087}, Shape{2, 2}, kRecurrentTol);
  }
}

TEST(Lstm, StateCarriesAcrossCalls) {
  const Device device = Device::flex();
  const auto lstm = reference_lstm(device);
  const auto x = tensor<3>(seq_wave(18, 2.5, 1.0), Shape{2, 3, 3}, device);
  const auto [whole, whole_state] = lstm.forward(x);
  const auto [first, mid_state] = lstm.forward(x.narrow(1, 0, 2));
  const auto [rest, end_state] = lstm.forward(x.narrow(1, 2, 1), mid_state);
  expect_values(Tensor<3>::cat({first, rest}, 1).to_data(), values(whole), Shape{2, 3, 2}, kRecurrentTol);
  expect_values(end_state.cell.to_data(), whole_state.cell.to_data().convert<double>().to_vec<double>(), Shape{2, 2},
                kRecurrentTol);
}

TEST(Gru, MatchesPyTorchFromZeroAndGivenStates) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto gru = reference_gru(device);
    const auto x = tensor<3>(seq_wave(18, 3.5, 1.0), Shape{2, 3, 3}, device);
    expect_values(gru.forward(x).to_data(),
                  {-0.055122249, 0.13773077, 0.26771902, -0.077674049, 0.38426062, 0.055910064, -0.16928546,
                   0.0025656712, 0.34720419, -0.24710466, 0.31750211, 0.10931315},
                  Shape{2, 3, 2}, kRecurrentTol);
    expect_values(gru.forward(x, tensor<2>(seq_wave(4, 3.6, 0.5), Shape{2, 2}, device)).to_data(),
                  {-0.24695426, -0.20083764, 0.16683599, -0.29675604, 0.30779048, -0.015405, -0.14066469, 0.34373358,
                   0.37661413, -0.085356324, 0.34681991, 0.18461575},
                  Shape{2, 3, 2}, kRecurrentTol);
  }
}

TEST(Gru, StateCarriesAcrossCalls) {
  const Device device = Device::flex();
  const auto gru = reference_gru(device);
  const auto x = tensor<3>(seq_wave(18, 3.5, 1.0), Shape{2, 3, 3}, device);
  const auto first = gru.forward(x.narrow(1, 0, 1));
  const auto rest = gru.forward(x.narrow(1, 1, 2), first.narrow(1, 0, 1).squeeze<2>(1));
  expect_values(Tensor<3>::cat({first, rest}, 1).to_data(), values(gru.forward(x)), Shape{2, 3, 2}, kRecurrentTol);
}

TEST(Recurrent, EmptySequencesKeepTheState) {
  for (const auto& device : all_devices()) {
    const auto x = Tensor<3>::zeros(Shape{2, 0, 3}, device);
    const nn::LstmState initial{Tensor<2>::ones(Shape{2, 2}, device), Tensor<2>::full(Shape{2, 2}, 2.0, device)};
    const auto [y, state] = reference_lstm(device).forward(x, initial);
    EXPECT_EQ(y.shape(), (Shape{2, 0, 2}));
    expect_values(state.hidden.to_data(), std::vector<double>(4, 2.0), Shape{2, 2});
    EXPECT_EQ(reference_gru(device).forward(x).shape(), (Shape{2, 0, 2}));
  }
}

TEST(Recurrent, ConfigsFollowPyTorchsLayoutAndDefaults) {
  for (const auto& device : all_devices()) {
    const auto lstm = nn::LstmConfig{5, 4}.init(device);
    EXPECT_EQ(lstm.layers[0].weight_ih->shape(), (Shape{5, 16}));
    EXPECT_EQ(lstm.layers[0].weight_hh->shape(), (Shape{4, 16}));
    EXPECT_EQ(lstm.num_params(), 5u * 16u + 4u * 16u + 2u * 16u);  // as torch's nn.LSTM(5, 4)
    EXPECT_TRUE(lstm.layers[0].weight_ih.is_pytorch_transposed());
    EXPECT_FALSE(lstm.layers[0].bias_ih->is_pytorch_transposed());
    std::vector<std::string> paths;
    module::for_each_param(lstm, [&](const std::string& p, const module::ParamBase&) { paths.push_back(p); });
    EXPECT_EQ(paths, (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}));
    // PyTorch's default initialisation: uniform in ±1/sqrt(d_hidden) = ±0.5.
    EXPECT_LE(lstm.layers[0].weight_ih->abs().max().into_scalar<double>(), 0.5);
    EXPECT_GT(lstm.layers[0].weight_ih->abs().max().into_scalar<double>(), 0.25);

    const auto gru = nn::GruConfig{5, 4}.with_bias(false).init(device);
    EXPECT_EQ(gru.layers[0].weight_ih->shape(), (Shape{5, 12}));
    EXPECT_FALSE(gru.layers[0].bias_ih.has_value());
    EXPECT_EQ(gru.num_params(), 5u * 12u + 4u * 12u);
    EXPECT_EQ(gru.forward(Tensor<3>::ones(Shape{3, 7, 5}, device)).shape(), (Shape{3, 7, 4}));

    const auto constant = nn::LstmConfig{2, 2}.with_initializer(nn::Initializer::constant(0.25)).init(device);
    expect_values(constant.layers[0].bias_hh->val().to_data(), std::vector<double>(8, 0.25), Shape{8});
  }
}

TEST(Recurrent, BadConfigsAndShapesGiveClearErrors) {
  const Device device = Device::flex();
  expect_op_error([&] { nn::LstmConfig{0, 4}.init(device); }, "LstmConfig", "positive");
  expect_op_error([&] { nn::GruConfig{3, 0}.init(device); }, "GruConfig", "positive");
  const auto lstm = reference_lstm(device);
  const auto gru = reference_gru(device);
  const auto x = Tensor<3>::ones(Shape{2, 3, 3}, device);
  expect_op_error([&] { lstm.forward(Tensor<3>::ones(Shape{2, 3, 4}, device)); }, "Lstm", "d_input = 3");
  expect_op_error([&] { gru.forward(Tensor<3>::ones(Shape{2, 3, 4}, device)); }, "Gru", "d_input = 3");
  expect_op_error(
      [&] {
        lstm.forward(x, nn::LstmState{Tensor<2>::ones(Shape{2, 3}, device), Tensor<2>::ones(Shape{2, 2}, device)});
      },
      "Lstm", "initial cell state has shape [2, 3]");
  expect_op_error(
      [&] {
        lstm.forward(x, nn::LstmState{Tensor<2>::ones(Shape{2, 2}, device), Tensor<2>::ones(Shape{1, 2}, device)});
      },
      "Lstm", "initial hidden state");
  expect_op_error([&] { gru.forward(x, Tensor<2>::ones(Shape{3, 2}, device)); }, "Gru", "[batch, d_hidden] = [2, 2]");
}

#if BURN_HAS_AUTODIFF
class RecurrentGrad : public burn::adtest::AdTest {};

// Gradients of the input, the initial state and every parameter through
// three steps (f64, d_input 3, d_hidden 2), against central differences.
TEST_P(RecurrentGrad, LstmMatchesFiniteDifferences) {
  using burn::adtest::Input;
  check(
      [](const Tensor<3>& x, const Tensor<2>& c0, const Tensor<2>& h0, const Tensor<2>& w_ih, const Tensor<2>& w_hh,
         const Tensor<1>& b_ih, const Tensor<1>& b_hh) {
        const nn::Lstm lstm{
            {nn::RecurrentWeights{module::Param(w_ih), module::Param(w_hh), module::Param(b_ih), module::Param(b_hh)}}};
        const auto [y, state] = lstm.forward(x, nn::LstmState{c0, h0});
        // The final cell state too, so its own path is checked.
        return std::vector<Tensor<3>>{y, state.cell.unsqueeze_dim<3>(1)};
      },
      Input<3>{rng.uniform(18, -1, 1), {2, 3, 3}}, Input<2>{rng.uniform(4, -0.5, 0.5), {2, 2}},
      Input<2>{rng.uniform(4, -0.5, 0.5), {2, 2}}, Input<2>{rng.uniform(24, -0.7, 0.7), {3, 8}},
      Input<2>{rng.uniform(16, -0.7, 0.7), {2, 8}}, Input<1>{rng.uniform(8, -0.3, 0.3), {8}},
      Input<1>{rng.uniform(8, -0.3, 0.3), {8}});
}

TEST_P(RecurrentGrad, GruMatchesFiniteDifferences) {
  using burn::adtest::Input;
  check(
      [](const Tensor<3>& x, const Tensor<2>& h0, const Tensor<2>& w_ih, const Tensor<2>& w_hh, const Tensor<1>& b_ih,
         const Tensor<1>& b_hh) {
        const nn::Gru gru{
            {nn::RecurrentWeights{module::Param(w_ih), module::Param(w_hh), module::Param(b_ih), module::Param(b_hh)}}};
        return gru.forward(x, h0);
      },
      Input<3>{rng.uniform(18, -1, 1), {2, 3, 3}}, Input<2>{rng.uniform(4, -0.5, 0.5), {2, 2}},
      Input<2>{rng.uniform(18, -0.7, 0.7), {3, 6}}, Input<2>{rng.uniform(12, -0.7, 0.7), {2, 6}},
      Input<1>{rng.uniform(6, -0.3, 0.3), {6}}, Input<1>{rng.uniform(6, -0.3, 0.3), {6}});
}

BURN_AD_MODES(RecurrentGrad);
#endif

}  // namespace
