// Cases for ONNX Runtime: burn's exports of the test models (an MLP,
// burn-train's CNN, an attention block, burn's Transformer encoder and LSTM,
// torchvision's ResNet-18 architecture at 32 px, its parameters in an
// external data file), with inputs at
// two batch sizes and flex's outputs, written where onnxruntime_check.sh
// (the ctest entry burn_onnx_onnxruntime) runs them in ONNX Runtime. Run
// alone, the case checks that what it wrote reads back.
#include <burn/onnx.hpp>
#include <gtest/gtest.h>

#include <cstdlib>

#include "../../bench/resnet18.hpp"
#include "onnx_models.hpp"

namespace burn {
namespace {

using namespace onnx_test;

std::string shape_json(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.rank(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

void write_bytes(const std::filesystem::path& path, const TensorData& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(data.bytes().data()), static_cast<std::streamsize>(data.bytes().size()));
  ASSERT_TRUE(f.good()) << path;
}

/// Exports `model` (its parameters in <name>.onnx.data when `external_data`),
/// runs it on flex at batch sizes 1 and 3, and writes <name>.onnx, the inputs
/// and outputs, and <name>.json describing them.
template <class M, std::size_t D>
void write_case(const std::filesystem::path& dir, const std::string& name, const M& model, Shape input_shape,
                const Device& device, bool external_data = false) {
  onnx::export_model(
      model, Tensor<D>::zeros(input_shape, device), (dir / (name + ".onnx")).string(),
      onnx::ExportOptions{}.with_names({"input"}, {"output"}).with_dynamic_batch().with_external_data(external_data));
  std::string cases;
  for (std::size_t batch : {1u, 3u}) {
    Shape shape = input_shape;
    shape.dims()[0] = batch;
    const auto x = Tensor<D>::random(shape, Distribution::normal(0, 1), device);
    const TensorData y = model.forward(x).to_data();
    const std::string stem = name + ".b" + std::to_string(batch);
    write_bytes(dir / (stem + ".input.bin"), x.to_data());
    write_bytes(dir / (stem + ".output.bin"), y);
    cases += std::string(cases.empty() ? "" : ", ") + "{\"batch\": " + std::to_string(batch) +
             ", \"input_shape\": " + shape_json(shape) + ", \"output_shape\": " + shape_json(y.shape()) +
             ", \"input\": \"" + stem + ".input.bin\", \"output\": \"" + stem + ".output.bin\"}";
  }
  std::ofstream(dir / (name + ".json")) << "{\"onnx\": \"" << name << ".onnx\", \"producer\": \"burn-cpp\", "
                                        << "\"cases\": [" << cases << "]}\n";
  // What was written reads back, and the file gives flex's outputs through import.
  EXPECT_EQ(onnx::Model::load((dir / (name + ".onnx")).string(), device).input_names(),
            std::vector<std::string>{"input"});
}

TEST(OnnxRuntimeCases, ExportsWithInputsAndFlexOutputs) {
  const char* env = std::getenv("BURN_ONNX_CASES_DIR");
  const std::filesystem::path dir =
      env && *env ? std::filesystem::path(env) : std::filesystem::path(temp_path("onnxruntime-cases"));
  std::filesystem::create_directories(dir);
  const Device device = Device::flex();
  device.seed(19);
  write_case<Mlp, 2>(dir, "mlp", make_mlp(device), Shape{1, 6}, device);
  write_case<Cnn, 4>(dir, "cnn", make_cnn(device).valid(), Shape{1, 1, 12, 12}, device);
  write_case<AttentionBlock, 3>(dir, "attention", make_attention(device), Shape{1, 5, 8}, device);
  write_case<Encoder, 3>(dir, "encoder", make_encoder(device), Shape{1, 5, 8}, device);
  write_case<LstmModel, 3>(dir, "lstm", make_lstm(device), Shape{1, 6, 4}, device);
  write_case<burn_bench::ResNet18, 4>(dir, "resnet18", burn_bench::ResNet18::init(10, device).valid(),
                                      Shape{1, 3, 32, 32}, device, /*external_data=*/true);
  for (const char* name : {"mlp", "cnn", "attention", "encoder", "lstm", "resnet18"})
    EXPECT_TRUE(std::filesystem::exists(dir / (std::string(name) + ".json"))) << name;
}

}  // namespace
}  // namespace burn
