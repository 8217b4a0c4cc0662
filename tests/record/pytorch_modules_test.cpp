// PyTorch's modules load as torch saves them and reproduce torch's forward
// on every device: torch.nn.TransformerEncoder (fused in_proj_weight and
// in_proj_bias, self_attn, linear1, norm1 ...) from .pt and from bare
// safetensors, whose PyTorch-adapter export fuses them again, byte for byte
// what torch saved, and loads into torch with load_state_dict(strict=True);
// two-layer bidirectional nn.LSTM and nn.GRU; and an nn.Sequential MLP
// trained for 5 steps by torch.optim's SGD, momentum SGD and Adam, whose
// losses and final weights burn's optimisers reproduce.
#include <gtest/gtest.h>

#include <burn/nn/gru.hpp>
#include <burn/nn/layer_norm.hpp>
#include <burn/nn/loss/cross_entropy.hpp>
#include <burn/nn/lstm.hpp>
#include <burn/nn/sequential.hpp>
#include <burn/nn/transformer.hpp>
#include <burn/optim/adam.hpp>
#include <burn/optim/sgd.hpp>
#include <burn/record/module_record.hpp>
#include <burn/record/safetensors.hpp>

#include "burn_test.hpp"
#include "torch_fixtures.hpp"

namespace burn::record {
namespace {

using burn::testing::expect_op_error;
using test::torch_fixtures;

const LoadOptions kTorchNames = LoadOptions{}.with_adapter(Adapter::PyTorch);

// The script's encoder: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
// batch_first=True), 2).
nn::TransformerEncoder torch_twin_encoder(const Device& device) {
  return nn::TransformerEncoderConfig::pytorch_defaults(8, 2, 2, 16).with_dropout(0.0).init(device);
}

TEST(PyTorchModules, TorchEncoderWeightsLoadAsSavedAndReproduceTorchsForward) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto& fx = torch_fixtures();
  const SafetensorsFile io = load_safetensors(fx / "encoder_io.safetensors");
  for (const char* file : {"encoder.pt", "encoder.safetensors"}) {
    SCOPED_TRACE(file);
    for (const auto& device : burn::testing::all_devices()) {
      SCOPED_TRACE(device.to_string());
      // encoder.safetensors declares no layout: its fused projections show it is PyTorch's.
      const auto encoder = load_module(torch_twin_encoder(device), fx / file);
      const auto y = encoder.forward(nn::TransformerEncoderInput(Tensor<3>::from_data(io.tensor("input"), device)));
      y.to_data().assert_approx_eq(io.tensor("output"), Tolerance::rel_abs(1e-4, 1e-5));
    }
  }
}

TEST(PyTorchModules, TheFusedProjectionSplitsIntoQueryKeyAndValue) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const SafetensorsFile torch = load_safetensors(torch_fixtures() / "encoder.safetensors");
  const auto encoder = load_module(torch_twin_encoder(Device::flex()), torch_fixtures() / "encoder.pt");
  const auto fused = torch.tensor("layers.1.self_attn.in_proj_weight").to_vec<float>();  // [24, 8]
  const auto& mha = encoder.layers[1].mha;
  int k = 0;
  for (const auto* projection : {&mha.query, &mha.key, &mha.value}) {
    const auto ours = projection->weight.val().to_data().to_vec<float>();  // burn's [8, 8], [in, out]
    for (std::size_t o = 0; o < 8; ++o)
      for (std::size_t i = 0; i < 8; ++i)
        ASSERT_EQ(ours[i * 8 + o], fused[(8 * k + o) * 8 + i]) << "projection " << k << " (" << o << ", " << i << ")";
    ++k;
  }
  const auto fused_bias = torch.tensor("layers.1.self_attn.in_proj_bias").to_vec<float>();  // [24]
  const auto value_bias = mha.value.bias->val().to_data().to_vec<float>();
  EXPECT_EQ(value_bias, std::vector<float>(fused_bias.begin() + 16, fused_bias.end()));
  EXPECT_NE(value_bias, std::vector<float>(8, 0.0f));  // the fixture's biases are not torch's zeros
}

TEST(PyTorchModules, ThePyTorchExportIsWhatTorchSavedAndTorchLoadsIt) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto& fx = torch_fixtures();
  const auto encoder = load_module(torch_twin_encoder(Device::flex()), fx / "encoder.pt");
  test::TempDir dir;
  save_module(encoder, dir.path() / "export.safetensors", {}, SaveOptions{}.with_adapter(Adapter::PyTorch));
  // Every key, shape and byte of torch's own state dict: fused in_proj_*,
  // out_proj, self_attn, linear1/2, norm1/2.
  EXPECT_EQ(load_safetensors(dir.path() / "export.safetensors").tensors,
            load_safetensors(fx / "encoder.safetensors").tensors);
  // It loads back with the same values and parameter ids.
  const auto back = load_module(torch_twin_encoder(Device::flex()), dir.path() / "export.safetensors");
  EXPECT_EQ(back.layers[0].mha.key.weight.id(), encoder.layers[0].mha.key.weight.id());
  EXPECT_EQ(back.layers[0].mha.key.weight.val().to_data(), encoder.layers[0].mha.key.weight.val().to_data());
  // And torch takes it with load_state_dict(strict=True), giving burn's output.
  const auto x = Tensor<3>::random(Shape{3, 4, 8}, Distribution::normal(0, 1), Device::flex());
  save_safetensors(dir.path() / "io.safetensors",
                   {{"input", x.to_data()}, {"output", encoder.forward(nn::TransformerEncoderInput(x)).to_data()}});
  EXPECT_TRUE(test::run_torch_script("check-encoder " +
                                     test::shell_quoted((dir.path() / "export.safetensors").string()) + " " +
                                     test::shell_quoted((dir.path() / "io.safetensors").string())))
      << "torch could not load burn's export or computed another output";
}

TEST(PyTorchModules, AFusedProjectionOfTheWrongShapeOrTwiceIsAnError) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto& fx = torch_fixtures();
  test::TempDir dir;
  auto tensors = load_safetensors(fx / "encoder.safetensors").tensors;
  auto bad = tensors;
  bad["layers.0.self_attn.in_proj_bias"] = TensorData(std::vector<float>(23, 0.0f));
  save_safetensors(dir.path() / "bad.safetensors", bad);
  expect_op_error([&] { load_module(torch_twin_encoder(Device::flex()), dir.path() / "bad.safetensors"); },
                  "load_module",
                  "'layers.0.self_attn.in_proj_bias' has shape [23], but a fused query/key/value projection has a "
                  "first dim divisible by 3");
  auto twice = tensors;
  twice["layers.0.mha.query.bias"] = TensorData(std::vector<float>(8, 0.0f));
  save_safetensors(dir.path() / "twice.safetensors", twice);
  expect_op_error(
      [&] { load_module(torch_twin_encoder(Device::flex()), dir.path() / "twice.safetensors", kTorchNames); },
      "load_module", "the file has both 'layers.0.mha.query.bias' and 'layers.0.self_attn.in_proj_bias'");
}

TEST(PyTorchModules, StackedBidirectionalLstmAndGruMatchTorch) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto& fx = torch_fixtures();
  const SafetensorsFile io = load_safetensors(fx / "rnn_io.safetensors");
  const auto tol = Tolerance::rel_abs(1e-4, 1e-5);
  for (const auto& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto x = Tensor<3>::from_data(io.tensor("input"), device);
    const auto lstm =
        load_module(nn::LstmConfig{3, 4}.with_num_layers(2).with_bidirectional(true).init(device), fx / "lstm.pt");
    const auto [y, states] = lstm.forward_states(x);
    y.to_data().assert_approx_eq(io.tensor("lstm_output"), tol);  // [2, 5, 8]: forward | reverse
    ASSERT_EQ(states.size(), 4u);
    const auto h_n = Tensor<3>::from_data(io.tensor("lstm_h"), device);  // [4, 2, 4]: l0, l0_reverse, l1, l1_reverse
    const auto c_n = Tensor<3>::from_data(io.tensor("lstm_c"), device);
    for (std::int64_t k = 0; k < 4; ++k) {
      states[k].hidden.to_data().assert_approx_eq(h_n.narrow(0, k, 1).squeeze<2>(0).to_data(), tol);
      states[k].cell.to_data().assert_approx_eq(c_n.narrow(0, k, 1).squeeze<2>(0).to_data(), tol);
    }
    // Its own states back in: the sequence continues as torch's would from (h_n, c_n).
    EXPECT_EQ(lstm.forward_states(x, states).first.shape(), (Shape{2, 5, 8}));

    const auto gru =
        load_module(nn::GruConfig{3, 4}.with_num_layers(2).with_bidirectional(true).init(device), fx / "gru.pt");
    const auto [gy, g_states] = gru.forward_states(x);
    gy.to_data().assert_approx_eq(io.tensor("gru_output"), tol);
    gru.forward(x).to_data().assert_approx_eq(io.tensor("gru_output"), tol);
    const auto gh_n = Tensor<3>::from_data(io.tensor("gru_h"), device);
    for (std::int64_t k = 0; k < 4; ++k)
      g_states[k].to_data().assert_approx_eq(gh_n.narrow(0, k, 1).squeeze<2>(0).to_data(), tol);
  }
}

TEST(PyTorchModules, StackedRecurrentLayersNameTheirWeightsAsTorchDoes) {
  const auto lstm = nn::LstmConfig{3, 4}.with_num_layers(2).with_bidirectional(true).init(Device::flex());
  std::vector<std::string> paths;
  module::for_each_param(lstm, [&](const std::string& p, const module::ParamBase&) { paths.push_back(p); });
  EXPECT_EQ(paths, (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                             "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                             "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1",
                                             "bias_hh_l1", "weight_ih_l1_reverse", "weight_hh_l1_reverse",
                                             "bias_ih_l1_reverse", "bias_hh_l1_reverse"}));
  // Layer 1 reads both directions of layer 0: [2 d_hidden, 4 d_hidden].
  EXPECT_EQ(lstm.layers[2].weight_ih->shape(), (Shape{8, 16}));
  EXPECT_EQ(lstm.num_params(), std::size_t(2 * (3 * 16 + 4 * 16 + 32) + 2 * (8 * 16 + 4 * 16 + 32)));
  const auto x = Tensor<3>::ones(Shape{2, 3, 3}, Device::flex());
  expect_op_error([&] { lstm.forward(x); }, "Lstm", "this Lstm has 2 layer(s), bidirectional");
  const auto zeros = Tensor<2>::zeros(Shape{2, 4}, Device::flex());
  expect_op_error(
      [&] {
        lstm.forward_states(x, {nn::LstmState{zeros, zeros}});
      },
      "Lstm", "1 initial states given; this Lstm takes one per layer and direction (4)");
  const auto gru = nn::GruConfig{3, 4}.with_num_layers(3).init(Device::flex());
  EXPECT_EQ(gru.forward(x).shape(), (Shape{2, 3, 4}));
  expect_op_error(
      [&] {
        gru.forward(x, Tensor<2>::zeros(Shape{2, 4}, Device::flex()));
      },
      "Gru", "this Gru has 3 layer(s)");
  expect_op_error(
      [] {
        nn::GruConfig{3, 4}.with_num_layers(0).init(Device::flex());
      },
      "GruConfig", "num_layers must be at least 1");
}

// nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3)): the same children 0, 1, 2.
using TorchMlp = nn::Sequential<nn::Linear, nn::Relu, nn::Linear>;
TorchMlp torch_mlp(const Device& device) {
  return nn::sequential(nn::LinearConfig{4, 8}.init(device), nn::Relu{}, nn::LinearConfig{8, 3}.init(device));
}

TEST(PyTorchModules, AnMlpTrainsAsTorchOptimTrainsIt) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto& fx = torch_fixtures();
  const SafetensorsFile io = load_safetensors(fx / "mlp_io.safetensors");
  struct Run {
    const char* name;
    double lr;
    optim::Optimizer (*make)();
  };
  const Run runs[] = {
      {"sgd", 0.1, [] { return optim::SgdConfig{}.init(); }},
      {"momentum", 0.1,
       [] { return optim::SgdConfig{}.with_momentum(optim::MomentumConfig::pytorch_defaults(0.9)).init(); }},
      {"adam", 0.01, [] { return optim::AdamConfig::pytorch_defaults().init(); }},
  };
  const auto tol = Tolerance::rel_abs(1e-4, 1e-5);
  for (const auto& device : burn::testing::all_devices()) {
    for (const Run& run : runs) {
      SCOPED_TRACE(device.to_string() + " " + run.name);
      const Device ad = device.autodiff();
      auto model = load_module(torch_mlp(ad), fx / "mlp_initial.pt");
      auto optimizer = run.make();
      const auto x = Tensor<2>::from_data(io.tensor("x"), ad);
      const auto y = Tensor<1, Int>::from_data(io.tensor("y"), ad);
      const auto cross_entropy = nn::loss::CrossEntropyLossConfig{}.init(ad);
      std::vector<double> losses;
      for (int step = 0; step < 5; ++step) {
        const auto loss = cross_entropy.forward(model.forward(x), y);
        losses.push_back(loss.to_data().convert<double>().to_vec<double>().front());
        auto grads = loss.backward();
        auto params = optim::GradientsParams::from_grads(grads, model);
        model = optimizer.step(run.lr, std::move(model), std::move(params));
      }
      TensorData(losses).convert(DType::F32).assert_approx_eq(io.tensor(std::string(run.name) + "_losses"), tol);
      const auto want = load_module(torch_mlp(device), fx / (std::string("mlp_") + run.name + "_final.pt"));
      std::vector<TensorData> got_values, want_values;
      module::for_each_param(model, [&](const std::string&, const module::ParamBase& p) {
        got_values.push_back(burn::detail::to_data(p.ref()));
      });
      module::for_each_param(want, [&](const std::string&, const module::ParamBase& p) {
        want_values.push_back(burn::detail::to_data(p.ref()));
      });
      ASSERT_EQ(got_values.size(), 4u);
      for (std::size_t i = 0; i < got_values.size(); ++i) got_values[i].assert_approx_eq(want_values[i], tol);
    }
  }
}

// A module whose own fields carry torch's names keeps them.
struct OwnNames {
  nn::LayerNorm norm1;
  nn::LayerNorm norm_1;
  BURN_MODULE(norm1, norm_1)
};

TEST(PyTorchModules, FieldsNamedLikeTorchsKeepTheirNames) {
  const Device device = Device::flex();
  OwnNames own{nn::LayerNormConfig{3}.init(device), nn::LayerNormConfig{3}.init(device)};
  own.norm1.weight = module::Param(Tensor<1>::from_floats({1, 2, 3}, device));
  test::TempDir dir;
  save_module(own, dir.path() / "own.safetensors", {}, SaveOptions{}.with_adapter(Adapter::PyTorch));
  const auto saved = load_safetensors(dir.path() / "own.safetensors");
  EXPECT_TRUE(saved.tensors.contains("norm1.weight"));
  EXPECT_TRUE(saved.tensors.contains("norm_1.weight"));
  const auto back = load_module(OwnNames{nn::LayerNormConfig{3}.init(device), nn::LayerNormConfig{3}.init(device)},
                                dir.path() / "own.safetensors", kTorchNames);
  EXPECT_EQ(back.norm1.weight.val().to_data().to_vec<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(back.norm_1.weight.val().to_data().to_vec<float>(), (std::vector<float>{1, 1, 1}));
}

}  // namespace
}  // namespace burn::record
