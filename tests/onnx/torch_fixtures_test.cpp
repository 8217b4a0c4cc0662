// Models PyTorch exported (tests/onnx/fixtures, made by make_torch_fixtures.py
// with both of torch.onnx.export's exporters; and the same, with torchvision's
// ResNet-18, exported at test time by the PyTorch installed here), imported on
// every device and compared with PyTorch's own outputs; gradients through an
// imported model checked against PyTorch's; and the fixtures of newer opsets
// (make_opset_fixtures.py) and of ONNX Runtime's quantizer against ONNX
// Runtime's outputs.
#include <burn/onnx.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <span>

#include "burn_test.hpp"
#include "onnx_models.hpp"

namespace burn {
namespace {

const std::filesystem::path kFixtures = std::filesystem::path(__FILE__).parent_path() / "fixtures";

TensorData read_f32(const std::filesystem::path& path, const nlohmann::json& shape) {
  std::ifstream f(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::size_t> dims;
  for (const auto& d : shape) dims.push_back(d.get<std::size_t>());
  std::vector<std::byte> raw(bytes.size());
  if (!bytes.empty()) std::memcpy(raw.data(), bytes.data(), bytes.size());
  return TensorData(std::move(raw), Shape(dims), DType::F32);
}

std::vector<std::filesystem::path> manifests(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// Imports every model of `dir` on every device, in both forms, and checks
/// PyTorch's outputs; returns the models' names.
std::set<std::string> check_fixtures(const std::filesystem::path& dir) {
  std::set<std::string> seen;
  for (const auto& manifest : manifests(dir)) {
    const auto spec = nlohmann::json::parse(std::ifstream(manifest));
    const auto onnx_path = (dir / spec["onnx"].get<std::string>()).string();
    seen.insert(manifest.stem().string());
    for (const Device& device : testing::all_devices()) {
      // Both forms: trainable, and the inference form (batch norms folded
      // into their convolutions).
      for (const bool trainable : {true, false}) {
        SCOPED_TRACE(manifest.filename().string() + " on " + device.to_string() +
                     (trainable ? "" : ", inference form"));
        const auto model = onnx::Model::load(onnx_path, device, trainable);
        for (const auto& c : spec["cases"]) {
          const TensorData x = read_f32(dir / c["input"].get<std::string>(), c["input_shape"]);
          const TensorData want = read_f32(dir / c["output"].get<std::string>(), c["output_shape"]);
          const auto got = model.run({x});
          EXPECT_EQ(got.size(), 1u);
          if (got.size() == 1) got[0].assert_approx_eq(want, {1e-4, 1e-5});
        }
      }
    }
  }
  return seen;
}

TEST(OnnxTorchFixtures, EveryModelPyTorchExportedMatchesPyTorchOnEveryDevice) {
  const auto seen = check_fixtures(kFixtures);
  // The architectures the fixtures cover, each from PyTorch's TorchScript
  // exporter (opset 17) and from its default torch.export-based one (opset
  // 20, the weights in an external data file); a missing file is a failure,
  // not a skip.
  for (const std::string name : {"mlp", "cnn", "cnn_bn", "resnet_block", "transformer", "lstm", "gru", "gelu_mlp",
                                 "activations", "norms", "modules_as_functions"}) {
    EXPECT_TRUE(seen.count(name)) << name << ".json is missing from " << kFixtures;
    EXPECT_TRUE(seen.count(name + ".dynamo")) << name << ".dynamo.json is missing from " << kFixtures;
  }
  // ONNX Runtime's quantization of three of them (make_quantized_fixtures.py):
  // dynamic (DynamicQuantizeLinear, MatMulInteger, ConvInteger), QDQ, and
  // the QOperator format (QLinearConv, and com.microsoft's QLinearAdd and
  // QLinearGlobalAveragePool for the residual block); and those operators
  // and QLinearMatMul in their other forms (make_qoperator_fixtures.py).
  for (const std::string name :
       {"mlp.dynamic", "mlp.qdq", "cnn.dynamic", "cnn.qdq", "cnn.qop", "resnet_block.qop", "qlinear_matmul.opset10",
        "qlinear_matmul.opset21", "qlinear_conv.opset13", "qlinear_add.msft", "qlinear_gap.msft"})
    EXPECT_TRUE(seen.count(name)) << name << ".json is missing from " << kFixtures;
  // The operators of opsets 18 to 26 (make_opset_fixtures.py), against ONNX
  // Runtime's outputs, and PyTorch's opset-23 export of a Llama-style block
  // (Attention, RMSNormalization), against PyTorch's.
  for (const std::string name :
       {"attention.opset23", "attention_cache.opset24", "attention_nonpad.opset24", "attention_window.opset25",
        "rms_rotary.opset23", "group_norm.opset18", "group_norm.opset21", "swish.opset24", "blocked_quant.opset21",
        "quant_attrs.opset23", "resize_antialias.opset18", "scan_bitcast.opset26", "llama_block.torch23"})
    EXPECT_TRUE(seen.count(name)) << name << ".json is missing from " << kFixtures;
  // ONNX Runtime's weight-only quantizer on the Llama-style block and the
  // transformer layer (make_quantized_fixtures.py): MatMulNBits with 4-bit,
  // symmetric 4-bit, 8-bit and HQQ weights, and the QDQ format's UINT4 and
  // INT4 DequantizeLinear.
  for (const std::string name :
       {"llama_block.torch23.int4", "llama_block.torch23.int4sym", "llama_block.torch23.int8",
        "llama_block.torch23.hqq", "llama_block.torch23.int4qdq", "llama_block.torch23.int4qdqsym", "transformer.int4"})
    EXPECT_TRUE(seen.count(name)) << name << ".json is missing from " << kFixtures;
}

TEST(OnnxTorchFixtures, ModelsThePyTorchHereExportsNowMatchIt) {
  // The ctest entry burn_onnx_torch_live exports the same models, and
  // torchvision's ResNet-18, MobileNetV3-small, SqueezeNet 1.1, ShuffleNetV2
  // and RegNetY-400MF, with the PyTorch installed on this machine (Debian's
  // python3-torch), then runs this test on what it wrote.
  const char* env = std::getenv("BURN_ONNX_LIVE_FIXTURES");
  if (env == nullptr || *env == '\0')
    GTEST_SKIP() << "run by the ctest entry burn_onnx_torch_live, which exports the models with PyTorch first";
  const std::filesystem::path dir(env);
  const auto seen = check_fixtures(dir);
  for (const char* name : {"mlp", "cnn", "cnn_bn", "resnet_block", "transformer", "lstm", "gru", "gelu_mlp",
                           "activations", "norms", "modules_as_functions", "resnet18", "mobilenet_v3_small",
                           "squeezenet1_1", "shufflenet_v2_x0_5", "regnet_y_400mf"})
    EXPECT_TRUE(seen.count(name)) << name << ".json is missing from " << dir;
}

TEST(OnnxTorchFixtures, SequenceLensRunEachSequenceAsIfItWereAlone) {
  // PyTorch's bidirectional LSTM and two-layer GRU with sequence_lens [6, 3,
  // 1] set on every recurrent node: each sample's outputs are those of the
  // model run on its own first len steps, and zeros past them.
  for (const char* name : {"lstm", "gru"}) {
    SCOPED_TRACE(name);
    ::onnx::ModelProto proto;
    {
      std::ifstream f(kFixtures / (std::string(name) + ".onnx"), std::ios::binary);
      ASSERT_TRUE(proto.ParseFromIstream(&f));
    }
    const std::vector<std::int32_t> lengths{6, 3, 1};
    auto* lens = proto.mutable_graph()->add_initializer();
    lens->set_name("sequence_lens_for_test");
    lens->set_data_type(::onnx::TensorProto::INT32);
    lens->add_dims(3);
    for (const auto l : lengths) lens->add_int32_data(l);
    int recurrent = 0;
    for (auto& node : *proto.mutable_graph()->mutable_node()) {
      if (node.op_type() != "LSTM" && node.op_type() != "GRU") continue;
      while (node.input_size() < 5) node.add_input("");
      node.set_input(4, "sequence_lens_for_test");
      ++recurrent;
    }
    ASSERT_GT(recurrent, 0);
    std::string bytes;
    ASSERT_TRUE(proto.SerializeToString(&bytes));
    // The same model without sequence_lens, its sequence length left open.
    ::onnx::ModelProto open_length;
    {
      std::ifstream f(kFixtures / (std::string(name) + ".onnx"), std::ios::binary);
      ASSERT_TRUE(open_length.ParseFromIstream(&f));
    }
    open_length.mutable_graph()
        ->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(1)
        ->set_dim_param("steps");
    std::string open_bytes;
    ASSERT_TRUE(open_length.SerializeToString(&open_bytes));
    const auto spec = nlohmann::json::parse(std::ifstream(kFixtures / (std::string(name) + ".json")));
    const auto& c = spec["cases"][1];  // batch 3
    const TensorData x = read_f32(kFixtures / c["input"].get<std::string>(), c["input_shape"]);
    const std::vector<float> xs = x.to_vec<float>();  // [3, 6, 4]
    for (const Device& device : testing::all_devices()) {
      SCOPED_TRACE(device.to_string());
      const auto masked = onnx::Model::from_bytes(std::as_bytes(std::span(bytes.data(), bytes.size())), device);
      const std::vector<float> got = masked.run({x})[0].to_vec<float>();  // [3, 6, out]
      const auto whole =
          onnx::Model::from_bytes(std::as_bytes(std::span(open_bytes.data(), open_bytes.size())), device);
      const std::size_t out = got.size() / 18;
      for (std::size_t b = 0; b < 3; ++b) {
        const auto len = static_cast<std::size_t>(lengths[b]);
        const std::vector<float> alone_x(xs.begin() + static_cast<std::ptrdiff_t>(b * 24),
                                         xs.begin() + static_cast<std::ptrdiff_t>(b * 24 + len * 4));
        const std::vector<float> alone = whole.run({TensorData(alone_x, Shape{1, len, 4})})[0].to_vec<float>();
        std::vector<float> want(6 * out, 0.0F), have(got.begin() + static_cast<std::ptrdiff_t>(b * 6 * out),
                                                     got.begin() + static_cast<std::ptrdiff_t>((b + 1) * 6 * out));
        std::copy(alone.begin(), alone.end(), want.begin());
        TensorData(have, Shape{6, out}).assert_approx_eq(TensorData(want, Shape{6, out}), {1e-5, 1e-6});
      }
    }
  }
}

TEST(OnnxTorchFixtures, GradientsThroughAnImportedModelMatchPyTorchs) {
  // sum(output^2) at the fixture's input, backward through the imported model
  // on an autodiff device: every parameter's gradient is PyTorch's (for the
  // Llama-style block, through Attention and RMSNormalization; for the
  // model of local functions, through the functions' inlined bodies).
  for (const char* name : {"mlp", "cnn_bn", "llama_block.torch23", "modules_as_functions"}) {
    SCOPED_TRACE(name);
    const auto spec = nlohmann::json::parse(std::ifstream(kFixtures / (std::string(name) + ".json")));
    const auto& g = spec["gradients"];
    const Device device = Device::flex().autodiff();
    const auto model = onnx::Model::load((kFixtures / spec["onnx"].get<std::string>()).string(), device);
    const TensorData x = read_f32(kFixtures / g["input"].get<std::string>(), g["input_shape"]);
    const auto y = model.forward(std::vector<detail::TensorRef>{
        detail::from_data(x, TensorCreationOptions(device, DType::F32), TensorKind::Float)})[0];
    const auto grads = detail::backward(detail::reduce_all(ir::ReduceOp::Sum, detail::binary(ir::BinaryOp::Mul, y, y)));
    std::size_t checked = 0;
    module::for_each_param(model, [&](const std::string& param, const module::ParamBase& p) {
      if (!g["params"].contains(param)) return;  // a buffer (running statistics): no gradient in PyTorch
      const auto& want = g["params"][param];
      const auto got = detail::grad(p.ref(), grads);
      ASSERT_TRUE(got) << param;
      detail::to_data(*got).assert_approx_eq(read_f32(kFixtures / want["file"].get<std::string>(), want["shape"]),
                                             {1e-4, 1e-5});
      ++checked;
    });
    EXPECT_EQ(checked, g["params"].size());
  }
}

}  // namespace
}  // namespace burn
