// PyTorch interop through the PyTorch adapter: a torch state_dict saved with
// Python's safetensors loads into the equivalent burn module and reproduces
// torch's output; our export loads into torch (live, when python3 has torch
// and safetensors).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include <burn/activation.hpp>
#include <burn/nn/batch_norm.hpp>
#include <burn/nn/conv2d.hpp>
#include <burn/nn/embedding.hpp>
#include <burn/record/safetensors.hpp>

#include "module_record_test_util.hpp"

namespace burn::record {
namespace {

using burn::testing::expect_op_error;
using test::TempDir;

const std::filesystem::path kFixtures = std::filesystem::path(__FILE__).parent_path() / "fixtures";
// Written by fixtures/make_torch_module_fixture.py (torch 1.13, safetensors 0.8.0):
// TorchNet's state_dict after three training steps (so BatchNorm's running
// statistics and num_batches_tracked are not their defaults), and inputs
// (an image batch and token ids) with torch's eval-mode output.
const std::filesystem::path kTorchState = kFixtures / "torch_module.safetensors";
const std::filesystem::path kTorchIo = kFixtures / "torch_module_io.safetensors";
const std::filesystem::path kTorchScript = kFixtures / "make_torch_module_fixture.py";

/// The burn twin of the script's TorchNet (same attribute names, so the
/// state_dict keys are our paths).
struct TorchNet {
  nn::Embedding embed;
  nn::Conv2d conv;
  nn::BatchNorm bn;
  nn::Linear fc;
  nn::LayerNorm norm;
  nn::Linear head;
  BURN_MODULE(embed, conv, bn, fc, norm, head)

  Tensor<2> forward(const Tensor<4>& x, const Tensor<2, Int>& tokens) const {
    const auto h = activation::relu(bn.forward(conv.forward(x)));
    const auto e = embed.forward(tokens).mean_dim(1).squeeze<2>(1);
    return head.forward(norm.forward(fc.forward(h.flatten<2>(1, 3)) + e));
  }
};

TorchNet make_torch_net(const TensorCreationOptions& o) {
  return TorchNet{nn::EmbeddingConfig{10, 5}.init(o),
                  nn::Conv2dConfig{{2, 3}, {3, 3}}.with_padding(nn::PaddingConfig2d::explicit_(1, 1)).init(o),
                  nn::BatchNormConfig{3}.init(o),
                  nn::LinearConfig{48, 5}.init(o),
                  nn::LayerNormConfig{5}.init(o),
                  nn::LinearConfig{5, 5}.init(o)}
      .eval();
}

const LoadOptions kTorch = LoadOptions{}.with_adapter(Adapter::PyTorch);

TEST(ModuleRecordPyTorch, TorchStateDictReproducesTorchsForward) {
  const SafetensorsFile io = load_safetensors(kTorchIo);
  for (const auto& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    // strict: bn.num_batches_tracked is in the file and ignored by the adapter.
    const TorchNet net = load_module(make_torch_net(device), kTorchState, kTorch);
    const auto y = net.forward(Tensor<4>::from_data(io.tensor("input"), device),
                               Tensor<2, Int>::from_data(io.tensor("tokens"), device));
    y.to_data().assert_approx_eq(io.tensor("output"), Tolerance::rel_abs(1e-4, 1e-5));
  }
}

TEST(ModuleRecordPyTorch, TorchLinearWeightsAreTransposedAndTheRestIsCopied) {
  const SafetensorsFile torch = load_safetensors(kTorchState);
  ASSERT_TRUE(torch.tensors.contains("bn.num_batches_tracked"));
  const TorchNet net = load_module(make_torch_net(Device::flex()), kTorchState, kTorch);

  // fc.weight is torch's [5, 48]; ours is [48, 5] with w[i][j] = torch[j][i].
  const auto theirs = torch.tensor("fc.weight").to_vec<float>();
  const auto ours = net.fc.weight->to_data();
  ASSERT_EQ(ours.shape(), (Shape{48, 5}));
  const auto values = ours.to_vec<float>();
  for (std::size_t i = 0; i < 48; ++i)
    for (std::size_t j = 0; j < 5; ++j) ASSERT_EQ(values[i * 5 + j], theirs[j * 48 + i]) << i << "," << j;
  // Conv2d and the norms share torch's layout: copied as they are.
  EXPECT_EQ(net.conv.weight->to_data(), torch.tensor("conv.weight"));
  EXPECT_EQ(net.bn.running_var->to_data(), torch.tensor("bn.running_var"));
  EXPECT_EQ(net.norm.bias->to_data(), torch.tensor("norm.bias"));
  EXPECT_EQ(net.embed.weight->to_data(), torch.tensor("embed.weight"));  // [n, d] in both
}

TEST(ModuleRecordPyTorch, ATorchCheckpointLoadsInTheLayoutItDeclares) {
  const auto declared = test::snapshot(load_module(make_torch_net(Device::flex()), kTorchState));
  const auto named = test::snapshot(load_module(make_torch_net(Device::flex()), kTorchState, kTorch));
  for (std::size_t i = 0; i < named.size(); ++i) EXPECT_EQ(declared[i].data, named[i].data) << named[i].path;
  // Named as Burn's layout, it is refused: the square head weight would load transposed.
  expect_op_error(
      [] { load_module(make_torch_net(Device::flex()), kTorchState, LoadOptions{}.with_adapter(Adapter::Burn)); },
      "load_module",
      "is a PyTorch checkpoint (metadata \"format\": \"pt\"); load it with "
      "LoadOptions{}.with_adapter(Adapter::PyTorch)");
}

TEST(ModuleRecordPyTorch, AFileWithoutMetadataLoadsInTheLayoutItsShapesShow) {
  // safetensors.torch.save_file without metadata: the torch file's tensors alone.
  TempDir dir;
  save_safetensors(dir / "bare.safetensors", load_safetensors(kTorchState).tensors);
  const auto shown = test::snapshot(load_module(make_torch_net(Device::flex()), dir / "bare.safetensors"));
  const auto named = test::snapshot(load_module(make_torch_net(Device::flex()), kTorchState, kTorch));
  for (std::size_t i = 0; i < named.size(); ++i) EXPECT_EQ(shown[i].data, named[i].data) << named[i].path;
  // Square weights alone show nothing: fc1(e0) would be a row in one layout
  // and a column in the other, so the load is refused, not guessed.
  const std::vector<float> w{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  save_safetensors(dir / "square.safetensors",
                   {{"weight", TensorData(w, Shape{4, 4})}, {"bias", TensorData(std::vector<float>(4, 0.0f))}});
  const auto square = [] { return nn::LinearConfig{4, 4}.init(Device::flex()); };
  expect_op_error([&] { load_module(square(), dir / "square.safetensors"); }, "load_module",
                  "declares no layout (no \"burn.layout\" or \"format\" metadata) and its transposable weights are "
                  "all square (weight)");
  // Named, it loads: PyTorch's [out, in] rows become burn's [in, out] columns.
  const auto fc = load_module(square(), dir / "square.safetensors", kTorch);
  const auto e0 = Tensor<2>::from_data(TensorData(std::vector<float>{1, 0, 0, 0}, Shape{1, 4}), Device::flex());
  EXPECT_EQ(fc.forward(e0).to_data().to_vec<float>(), (std::vector<float>{0, 4, 8, 12}));
}

struct TwoLinears {
  nn::Linear a;  // 3 -> 2
  nn::Linear b;  // 2 -> 4
  BURN_MODULE(a, b)
};

TEST(ModuleRecordPyTorch, WeightsThatDisagreeOnTheLayoutAreAnError) {
  TempDir dir;
  // a.weight in Burn's [d_in, d_out], b.weight in PyTorch's [d_out, d_in].
  save_safetensors(dir / "mixed.safetensors", {{"a.weight", TensorData(std::vector<float>(6, 1.0f), Shape{3, 2})},
                                               {"a.bias", TensorData(std::vector<float>(2, 0.0f))},
                                               {"b.weight", TensorData(std::vector<float>(8, 1.0f), Shape{4, 2})},
                                               {"b.bias", TensorData(std::vector<float>(4, 0.0f))}});
  const TwoLinears fresh{nn::LinearConfig{3, 2}.init(Device::flex()), nn::LinearConfig{2, 4}.init(Device::flex())};
  expect_op_error([&] { load_module(fresh, dir / "mixed.safetensors"); }, "load_module",
                  "its weights disagree on one: a.weight in Burn's ([d_input, d_output]), b.weight in PyTorch's");
}

TEST(ModuleRecordPyTorch, ExportWritesTorchNamesLayoutsAndMetadata) {
  TempDir dir;
  const TorchNet net = load_module(make_torch_net(Device::flex()), kTorchState, kTorch);
  save_module(net, dir / "export.safetensors", {}, SaveOptions{}.with_adapter(Adapter::PyTorch));
  const SafetensorsFile ours = load_safetensors(dir / "export.safetensors");
  SafetensorsFile torch = load_safetensors(kTorchState);
  torch.tensors.erase("bn.num_batches_tracked");  // a torch counter with no burn counterpart
  EXPECT_EQ(ours.tensors, torch.tensors);         // every key, shape, dtype and byte
  EXPECT_EQ(ours.metadata.at("format"), "pt");
  EXPECT_EQ(ours.metadata.at("burn.layout"), "pytorch");
  EXPECT_EQ(ours.metadata.at("burn.id.fc.weight"), net.fc.weight.id().to_string());
}

TEST(ModuleRecordPyTorch, ExportReloadsInItsPyTorchLayoutOnly) {
  TempDir dir;
  const TorchNet net = make_torch_net(Device::flex());
  save_module(net, dir / "export.safetensors", {}, SaveOptions{}.with_adapter(Adapter::PyTorch));
  const TorchNet back = load_module(make_torch_net(Device::flex()), dir / "export.safetensors", kTorch);
  const auto want = test::snapshot(net), got = test::snapshot(back);
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].data, want[i].data) << want[i].path;
    EXPECT_EQ(got[i].id, want[i].id) << want[i].path;
  }
  expect_op_error(
      [&] {
        load_module(make_torch_net(Device::flex()), dir / "export.safetensors",
                    LoadOptions{}.with_adapter(Adapter::Burn));
      },
      "load_module",
      "saved in the pytorch layout (\"burn.layout\": \"pytorch\"); load it with "
      "LoadOptions{}.with_adapter(Adapter::PyTorch)");
  // And a Burn-layout file is refused by the PyTorch adapter.
  save_module(net, dir / "burn.safetensors");
  expect_op_error([&] { load_module(make_torch_net(Device::flex()), dir / "burn.safetensors", kTorch); }, "load_module",
                  "saved in the burn layout");
}

// The interpreter for the live check: $BURN_TEST_PYTHON, else /usr/bin/python3.
std::string python() {
  const char* env = std::getenv("BURN_TEST_PYTHON");
  return env && *env ? env : "/usr/bin/python3";
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

TEST(ModuleRecordPyTorch, LiveExportLoadsIntoTorchAndMatchesItsForward) {
  const std::string py = python();
  if (std::system((quoted(py) + " -c 'import torch' > /dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << py
                 << " cannot import torch: install python3-torch (scripts/install-deps.sh does) or set "
                    "BURN_TEST_PYTHON; TorchStateDictReproducesTorchsForward still checks a torch-written "
                    "fixture";
  // A burn-initialised model with every tensor random (running_var positive).
  const Device device = Device::flex();
  const TorchNet net =
      module::map_tensors(make_torch_net(device), [](const std::string& path, const module::ParamBase& p) {
        const auto& t = *p.ref();
        if (!is_float(t.spec.dtype)) return p.ref();
        const auto dist =
            path.ends_with("running_var") ? Distribution::uniform(0.5, 2.0) : Distribution::uniform(-1, 1);
        return burn::detail::random(t.spec.shape, dist, {t.device, t.spec.dtype}, TensorKind::Float);
      });
  const auto x = Tensor<4>::random(Shape{3, 2, 4, 4}, Distribution::normal(0, 1), device);
  const auto tokens = Tensor<2, Int>::from_data(TensorData(std::vector<std::int64_t>{3, 3, 0, 9, 1, 5}, Shape{3, 2}),
                                                {device, DType::I64});
  TempDir dir;
  save_module(net, dir / "burn_export.safetensors", {}, SaveOptions{}.with_adapter(Adapter::PyTorch));
  save_safetensors(
      dir / "io.safetensors",
      {{"input", x.to_data()}, {"tokens", tokens.to_data()}, {"output", net.forward(x, tokens).to_data()}});
  const std::string cmd = quoted(py) + " " + quoted(kTorchScript.string()) + " check " +
                          quoted((dir / "burn_export.safetensors").string()) + " " +
                          quoted((dir / "io.safetensors").string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "torch could not load our export or computed another output: " << cmd;
}

}  // namespace
}  // namespace burn::record
