// ONNX export: models recorded on Device::capture(), written as ONNX, checked
// by ONNX's own checker (in export), read back with the protobuf classes and
// run again through import on flex.
#include <burn/onnx.hpp>
#include <gtest/gtest.h>

#include "../../bench/resnet18.hpp"
#include "onnx_models.hpp"

namespace burn {
namespace {

using namespace onnx_test;

std::vector<std::string> initializer_names(const ::onnx::ModelProto& m) {
  std::vector<std::string> names;
  for (const auto& i : m.graph().initializer()) names.push_back(i.name());
  return names;
}

bool has_name(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

TEST(OnnxExport, MlpIsGemmReluWithTheModulesParameterNames) {
  const Device device = Device::flex();
  device.seed(3);
  const Mlp model = make_mlp(device);
  const auto x = Tensor<2>::random({4, 6}, Distribution::normal(0, 1), device);
  const std::string path = temp_path("mlp.onnx");
  onnx::export_model(model, x, path, onnx::ExportOptions{}.with_names({"x"}, {"y"}));

  const auto m = read_model(path);
  ASSERT_EQ(m.opset_import_size(), 1);
  EXPECT_EQ(m.opset_import(0).version(), onnx::kOpsetVersion);
  EXPECT_EQ(m.producer_name(), "burn-cpp");
  ASSERT_EQ(m.graph().input_size(), 1);
  EXPECT_EQ(m.graph().input(0).name(), "x");
  const auto& in_shape = m.graph().input(0).type().tensor_type().shape();
  ASSERT_EQ(in_shape.dim_size(), 2);
  EXPECT_EQ(in_shape.dim(0).dim_value(), 4);
  EXPECT_EQ(in_shape.dim(1).dim_value(), 6);
  ASSERT_EQ(m.graph().output_size(), 1);
  EXPECT_EQ(m.graph().output(0).name(), "y");
  // Linear layers are ONNX's Gemm, relu its Relu: one node each, no primitive soup.
  EXPECT_EQ(count_nodes(m, "Gemm"), 2);
  EXPECT_EQ(count_nodes(m, "Relu"), 1);
  EXPECT_EQ(m.graph().node_size(), 4);  // and the output's Identity
  const auto names = initializer_names(m);
  for (const char* n : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}) EXPECT_TRUE(has_name(names, n)) << n;

  // The file's weights are the module's, bit for bit.
  for (const auto& init : m.graph().initializer()) {
    if (init.name() != "fc1.weight") continue;
    EXPECT_EQ(init.raw_data().size(), 6u * 16u * 4u);
    const auto w = model.fc1.weight->to_data().to_vec<float>();
    EXPECT_EQ(std::memcmp(init.raw_data().data(), w.data(), init.raw_data().size()), 0);
  }

  // Imported back: the same ops on the same device give the same bits.
  const auto imported = onnx::Model::load(path, device);
  EXPECT_EQ(imported.input_names(), std::vector<std::string>{"x"});
  EXPECT_EQ(imported.output_names(), std::vector<std::string>{"y"});
  const auto out = imported.run({x.to_data()});
  ASSERT_EQ(out.size(), 1u);
  out[0].assert_eq(model.forward(x).to_data());
}

TEST(OnnxExport, ParametersCanLiveInAnExternalDataFileBesideTheModel) {
  const Device device = Device::flex();
  device.seed(4);
  // fc1.weight has 1,536 bytes, fc2.weight 768: one goes out, one stays in.
  const Mlp model{nn::LinearConfig{6, 64}.init(device), nn::LinearConfig{64, 3}.init(device)};
  const auto x = Tensor<2>::random({3, 6}, Distribution::normal(0, 1), device);
  const std::filesystem::path dir = std::filesystem::path(temp_path("external-export")) / "out";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "mlp.onnx").string();
  std::filesystem::remove(path + ".data");
  onnx::export_model(model, x, path, onnx::ExportOptions{}.with_external_data());
  ASSERT_TRUE(std::filesystem::exists(path + ".data"));

  // Every tensor of 1 KiB or more is external, the rest inline.
  const auto m = read_model(path);
  std::vector<std::string> external;
  for (const auto& init : m.graph().initializer()) {
    const bool is_external = init.data_location() == ::onnx::TensorProto::EXTERNAL;
    EXPECT_EQ(is_external, init.external_data_size() > 0) << init.name();
    if (!is_external) {
      EXPECT_LT(init.raw_data().size(), 1024u) << init.name();
      continue;
    }
    external.push_back(init.name());
    EXPECT_FALSE(init.has_raw_data()) << init.name();
    std::map<std::string, std::string> entries;
    for (const auto& e : init.external_data()) entries[e.key()] = e.value();
    EXPECT_EQ(entries["location"], "mlp.onnx.data");
    EXPECT_EQ(std::stoull(entries["offset"]) % 4096, 0u) << init.name();
  }
  EXPECT_EQ(external, std::vector<std::string>{"fc1.weight"});

  // Imported back by its path: the same bits as the module, and as the
  // same model exported in one file.
  const auto out = onnx::Model::load(path, device).run({x.to_data()});
  out[0].assert_eq(model.forward(x).to_data());
  // A copy of the pair elsewhere still loads; the model without its data file does not.
  const std::filesystem::path moved = std::filesystem::path(temp_path("external-export")) / "moved";
  std::filesystem::create_directories(moved);
  std::filesystem::copy_file(path, moved / "mlp.onnx", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::remove(moved / "mlp.onnx.data");
  std::string e;
  try {
    onnx::Model::load((moved / "mlp.onnx").string(), device);
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("mlp.onnx.data"), std::string::npos) << e;
  std::filesystem::copy_file(path + ".data", moved / "mlp.onnx.data");
  onnx::Model::load((moved / "mlp.onnx").string(), device).run({x.to_data()})[0].assert_eq(out[0]);
}

TEST(OnnxExport, CnnWithADynamicBatchRunsAtAnyBatchSize) {
  const Device device = Device::flex();
  device.seed(5);
  const Cnn model = make_cnn(device).valid();
  const auto example = Tensor<4>::zeros({2, 1, 12, 12}, device);
  const std::string path = temp_path("cnn.onnx");
  onnx::export_model(model, example, path,
                     onnx::ExportOptions{}.with_names({"pixels"}, {"logits"}).with_dynamic_batch());

  const auto m = read_model(path);
  const auto& in = m.graph().input(0).type().tensor_type().shape();
  EXPECT_EQ(in.dim(0).dim_param(), "batch");
  EXPECT_EQ(in.dim(1).dim_value(), 1);
  const auto& out_shape = m.graph().output(0).type().tensor_type().shape();
  EXPECT_EQ(out_shape.dim(0).dim_param(), "batch");
  EXPECT_EQ(out_shape.dim(1).dim_value(), 10);
  EXPECT_EQ(count_nodes(m, "Conv"), 2);
  EXPECT_EQ(count_nodes(m, "BatchNormalization"), 2);
  EXPECT_EQ(count_nodes(m, "MaxPool"), 2);
  EXPECT_EQ(count_nodes(m, "Gemm"), 2);
  EXPECT_EQ(count_nodes(m, "Dropout"), 0);  // evaluation mode: dropout records nothing
  // The flatten's batch is ONNX's "copy this dim" (0), not the example's 2.
  bool flatten_copies_batch = false;
  for (const auto& node : m.graph().node())
    if (node.op_type() == "Reshape")
      for (const auto& init : m.graph().initializer())
        if (init.name() == node.input(1)) {
          std::int64_t first = 0;
          std::memcpy(&first, init.raw_data().data(), 8);
          flatten_copies_batch |= first == 0;
        }
  EXPECT_TRUE(flatten_copies_batch);

  const auto imported = onnx::Model::load(path, device);
  for (std::size_t batch : {1u, 2u, 5u}) {
    const auto x = Tensor<4>::random({batch, 1, 12, 12}, Distribution::uniform(0, 1), device);
    const auto out = imported.run({x.to_data()});
    ASSERT_EQ(out[0].shape(), Shape({batch, 10}));
    out[0].assert_eq(model.forward(x).to_data());
  }
}

TEST(OnnxExport, AttentionBlockWithLayerNormGeluAndSoftmaxRoundTrips) {
  const Device device = Device::flex();
  device.seed(7);
  const AttentionBlock model = make_attention(device);
  const std::string path = temp_path("attention.onnx");
  const auto x = Tensor<3>::random({3, 5, 8}, Distribution::normal(0, 1), device);
  onnx::export_model(model, Tensor<3>::zeros({2, 5, 8}, device), path, onnx::ExportOptions{}.with_dynamic_batch());

  const auto m = read_model(path);
  EXPECT_EQ(m.graph().input(0).name(), "input_0");
  EXPECT_EQ(m.graph().output(0).name(), "output_0");
  EXPECT_EQ(count_nodes(m, "LayerNormalization"), 2);
  EXPECT_EQ(count_nodes(m, "Softmax"), 1);
  EXPECT_EQ(count_nodes(m, "Exp"), 0);  // softmax is one operator
  EXPECT_EQ(count_nodes(m, "Erf"), 1);  // gelu: opset 17 has no Gelu operator
  const auto imported = onnx::Model::load(path, device);
  imported.run({x.to_data()})[0].assert_eq(model.forward(x).to_data());
}

TEST(OnnxExport, BurnsTransformerEncoderLstmAndResNet18RoundTripWithADynamicBatch) {
  const Device device = Device::flex();
  device.seed(23);
  {
    const Encoder model = make_encoder(device);
    const std::string path = temp_path("encoder.onnx");
    onnx::export_model(model, Tensor<3>::zeros({1, 5, 8}, device), path, onnx::ExportOptions{}.with_dynamic_batch());
    const auto x = Tensor<3>::random({3, 5, 8}, Distribution::normal(0, 1), device);
    onnx::Model::load(path, device).run({x.to_data()})[0].assert_eq(model.forward(x).to_data());
    EXPECT_EQ(count_nodes(read_model(path), "Softmax"), 1);
    EXPECT_EQ(count_nodes(read_model(path), "LayerNormalization"), 2);
  }
  {
    // The zero initial state is as large as the batch: ConstantOfShape of the running batch size.
    const LstmModel model = make_lstm(device);
    const std::string path = temp_path("lstm.onnx");
    onnx::export_model(model, Tensor<3>::zeros({2, 6, 4}, device), path, onnx::ExportOptions{}.with_dynamic_batch());
    for (std::size_t batch : {1u, 4u}) {
      const auto x = Tensor<3>::random({batch, 6, 4}, Distribution::normal(0, 1), device);
      onnx::Model::load(path, device).run({x.to_data()})[0].assert_eq(model.forward(x).to_data());
    }
    EXPECT_GE(count_nodes(read_model(path), "Shape"), 1);
  }
  {
    const auto model = burn_bench::ResNet18::init(10, device).valid();
    const std::string path = temp_path("resnet18.onnx");
    onnx::export_model(model, Tensor<4>::zeros({1, 3, 32, 32}, device), path,
                       onnx::ExportOptions{}.with_dynamic_batch());
    const auto m = read_model(path);
    EXPECT_EQ(count_nodes(m, "Conv"), 20);
    EXPECT_EQ(count_nodes(m, "BatchNormalization"), 20);
    EXPECT_EQ(count_nodes(m, "GlobalAveragePool"), 1);
    const auto x = Tensor<4>::random({2, 3, 32, 32}, Distribution::normal(0, 1), device);
    onnx::Model::load(path, device).run({x.to_data()})[0].assert_eq(model.forward(x).to_data());
  }
}

TEST(OnnxExport, ATransformerWithADynamicBatchAndSequenceLengthRunsAtOtherLengths) {
  const Device device = Device::flex();
  device.seed(29);
  const Encoder model = make_encoder(device);
  const std::string path = temp_path("encoder-tokens.onnx");
  onnx::ExportOptions options;
  options.input_names = {"tokens"};
  options.dynamic_axes = {{0, 0, "batch"}, {0, 1, "length"}};
  onnx::export_model(model, Tensor<3>::zeros({2, 5, 8}, device), path, options);
  const auto m = read_model(path);
  const auto& in = m.graph().input(0).type().tensor_type().shape();
  EXPECT_EQ(in.dim(0).dim_param(), "batch");
  EXPECT_EQ(in.dim(1).dim_param(), "length");
  EXPECT_EQ(in.dim(2).dim_value(), 8);
  const auto& out = m.graph().output(0).type().tensor_type().shape();
  EXPECT_EQ(out.dim(1).dim_param(), "length");
  const auto imported = onnx::Model::load(path, device);
  for (const auto& shape : {Shape{3, 7, 8}, Shape{1, 2, 8}, Shape{2, 5, 8}}) {
    const auto x = Tensor<3>::random(shape, Distribution::normal(0, 1), device);
    imported.run({x.to_data()})[0].assert_eq(model.forward(x).to_data());
  }
}

TEST(OnnxExport, DynamicAxesThatDoNotExistOrDisagreeAreRefused) {
  const auto fn = [](std::span<const detail::TensorRef> in) -> std::vector<detail::TensorRef> {
    return {(Tensor<2>(in[0]) + Tensor<2>(in[1])).ref()};
  };
  const std::vector<TensorData> examples{TensorData::zeros(Shape{2, 4}, DType::F32),
                                         TensorData::zeros(Shape{3, 4}, DType::F32)};
  onnx::ExportOptions bad_dim;
  bad_dim.dynamic_axes = {{0, 2, "n"}};
  try {
    onnx::export_graph(fn, std::vector<TensorData>{examples[0], examples[0]}, {}, temp_path("axes.onnx"), bad_dim);
    FAIL() << "dim 2 of a 2-D input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("names dim 2 of input 0, which does not exist"), std::string::npos)
        << e.what();
  }
  onnx::ExportOptions disagree;
  disagree.dynamic_axes = {{0, 0, "n"}, {1, 0, "n"}};
  try {
    onnx::export_graph(fn, examples, {}, temp_path("axes.onnx"), disagree);
    FAIL() << "one name, two sizes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the dims named 'n' differ in the examples (2 and 3)"), std::string::npos)
        << e.what();
  }
}

TEST(OnnxExport, AnOpOnnxCannotExpressIsNamed) {
  const auto fn = [](std::span<const detail::TensorRef> in) -> std::vector<detail::TensorRef> {
    return {Tensor<2>(in[0]).unfold<3>(1, 2, 1).ref()};
  };
  const std::vector<TensorData> examples{TensorData::zeros(Shape{2, 4}, DType::F32)};
  try {
    onnx::export_graph(fn, examples, {}, temp_path("unfold.onnx"));
    FAIL() << "exporting unfold should fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "onnx::export");
    EXPECT_NE(std::string(e.what()).find("unfold"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot be exported"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(temp_path("unfold.onnx")));
}

TEST(OnnxExport, AFunctionThatBranchesOnTheBatchSizeCannotHaveADynamicBatch) {
  const auto fn = [](std::span<const detail::TensorRef> in) -> std::vector<detail::TensorRef> {
    const Tensor<2> x(in[0]);
    return {(x.dims()[0] == 2 ? x + 1.0 : x * 2.0).ref()};
  };
  const std::vector<TensorData> examples{TensorData::zeros(Shape{2, 4}, DType::F32)};
  onnx::ExportOptions options;
  options.dynamic_batch = true;
  EXPECT_THROW(
      {
        try {
          onnx::export_graph(fn, examples, {}, temp_path("branch.onnx"), options);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("at two sizes of"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
  // Without a dynamic batch the same function exports.
  onnx::export_graph(fn, examples, {}, temp_path("branch.onnx"));
  EXPECT_EQ(count_nodes(read_model(temp_path("branch.onnx")), "Add"), 1);
}

TEST(OnnxExport, ElementwiseOpsWithoutASingleOnnxOperatorAreComposedExactly) {
  // log1p, expm1, rsqrt, trunc, float remainder, not-equal and clamp, run
  // back through import on flex: ONNX's compositions give flex's values.
  const Device device = Device::flex();
  const auto fn = [](std::span<const detail::TensorRef> in) -> std::vector<detail::TensorRef> {
    const Tensor<1> x(in[0]);
    const Tensor<1> y(in[1]);
    return {x.log1p().ref(),          x.expm1().ref(),      x.abs().rsqrt().ref(),
            (x * 3.0).trunc().ref(),  x.remainder(y).ref(), x.not_equal(y).ref(),
            x.clamp(-0.5, 0.5).ref(), x.sum_dim(0).ref(),   x.argmax(0).ref()};
  };
  const TensorData x(std::vector<float>{-2.5F, -0.75F, 0.0F, 0.5F, 1.25F, 3.0F});
  const TensorData y(std::vector<float>{0.7F, -0.6F, 1.0F, 0.5F, -2.0F, 3.0F});
  const std::string path = temp_path("elementwise.onnx");
  const std::vector<TensorData> examples{x, y};
  onnx::export_graph(fn, examples, {}, path);
  const auto imported = onnx::Model::load(path, device);
  const auto got = imported.run({x, y});
  const auto in =
      std::vector<detail::TensorRef>{Tensor<1>::from_data(x, device).ref(), Tensor<1>::from_data(y, device).ref()};
  const auto want = fn(in);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) got[i].assert_approx_eq(detail::to_data(want[i]), {1e-6, 1e-6});
}

TEST(CaptureDevice, RecordsShapesWithoutComputingValues) {
  const Device capture = Device::capture();
  const auto a = Tensor<2>::ones({2, 3}, capture);
  const auto b = Tensor<2>::ones({3, 4}, capture);
  const auto c = (a.matmul(b) + 1.0).exp();
  EXPECT_EQ(c.dims(), (std::array<std::size_t, 2>{2, 4}));
  EXPECT_EQ(c.device(), capture);
  try {
    (void)c.to_data();
    FAIL() << "a captured result has no values";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("capture device"), std::string::npos) << e.what();
  }
  // A constant keeps its data: a parameter moved there and back is unchanged.
  const TensorData data(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor<2>::from_data(data, capture).to_data().assert_eq(data);
  // Shape errors are found as on any device.
  EXPECT_THROW((void)a.matmul(a), Error);
}

TEST(CaptureDevice, IsNeverTheDefaultAndIsListedOnlyWhenAskedFor) {
  EXPECT_NE(Device().type(), DeviceType::Capture);
  for (const auto& d : Device::enumerate(DeviceFilter{}).into_vec()) EXPECT_NE(d.type(), DeviceType::Capture);
  const auto named = Device::enumerate(DeviceType::Capture).into_vec();
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0], Device::capture());
  EXPECT_EQ(Device::parse("capture"), Device::capture());
}

}  // namespace
}  // namespace burn
