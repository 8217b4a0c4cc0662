// burn's side of the ONNX inference benchmark (bench/onnx_compare.sh):
// exports ResNet-18 (bench/resnet18.hpp, 1000 classes) to one .onnx file,
// then times loading it and running it at batch 1 and 32 on Device::cpu()
// and Device::flex(). Run through Model::run: host data in, host data out,
// as ONNX Runtime's session.run takes and returns numpy arrays. Writes the
// inputs and flex's outputs beside the file, so the ONNX Runtime side times
// the same inputs and checks its outputs against ours. Each device runs the
// model at the default Float32Precision::Highest and again at High
// (Winograd convolutions). One JSON object per line on stdout.
//
//   burn-onnx-bench OUT_DIR [--reps N] [--image PIXELS] [--device cpu|flex] [--batch N]
//
// --device and --batch narrow the run to one device and one batch size (for
// profiling one case, e.g. under DNNL_VERBOSE=1 or perf).
#include <burn/burn.hpp>
#include <burn/onnx.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resnet18.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void write_bytes(const std::filesystem::path& path, const burn::TensorData& data) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(data.bytes().data()), static_cast<std::streamsize>(data.bytes().size()));
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage =
      "usage: burn-onnx-bench OUT_DIR [--reps N] [--image PIXELS] [--device cpu|flex] [--batch N]\n";
  if (argc < 2 || std::string_view(argv[1]).starts_with("-")) {
    fmt::print(stderr, "{}", kUsage);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::size_t reps = 10, image = 224;
  std::string only_device;
  std::vector<std::size_t> batches{1, 32};
  // A positive count, or nullopt (then the usage is printed).
  const auto count = [](std::string_view text) -> std::optional<std::size_t> {
    std::size_t v = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (error != std::errc() || end != text.data() + text.size() || v == 0) return std::nullopt;
    return v;
  };
  for (int i = 2; i < argc; i += 2) {
    const std::string_view flag = argv[i];
    const std::string_view value = i + 1 < argc ? argv[i + 1] : "";
    std::optional<std::size_t> n = count(value);
    if (flag == "--device" && (value == "cpu" || value == "flex")) {
      only_device = value;
      continue;
    }
    if (n && flag == "--reps") reps = *n;
    else if (n && flag == "--image") image = *n;
    else if (n && flag == "--batch") batches = {*n};
    else {
      fmt::print(stderr, "burn-onnx-bench: bad argument '{}{}{}'\n{}", flag, value.empty() ? "" : " ", value, kUsage);
      return 2;
    }
  }
  std::filesystem::create_directories(dir);
  const auto path = (dir / "resnet18.onnx").string();

  const burn::Device flex = burn::Device::flex();
  flex.seed(1);
  const auto native = burn_bench::ResNet18::init(1000, flex).valid();
  {
    const auto& model = native;
    const auto t0 = Clock::now();
    burn::onnx::export_model(model, burn::Tensor<4>::zeros({1, 3, image, image}, flex), path,
                             burn::onnx::ExportOptions{}.with_names({"images"}, {"logits"}).with_dynamic_batch());
    fmt::print("{{\"side\": \"burn\", \"what\": \"export\", \"seconds\": {:.4f}, \"bytes\": {}}}\n", seconds_since(t0),
               std::filesystem::file_size(path));
  }

  std::vector<burn::Device> devices;
#if BURN_HAS_CPU
  devices.push_back(burn::Device::cpu());
#endif
  devices.push_back(flex);
  if (!only_device.empty())
    std::erase_if(devices, [&](const burn::Device& d) { return d.type().name() != only_device; });
  for (const burn::Device& device : devices) {
    std::vector<double> loads;
    for (int i = 0; i < 3; ++i) {
      const auto t0 = Clock::now();
      const auto m = burn::onnx::Model::load(path, device, /*trainable=*/false);
      loads.push_back(seconds_since(t0));
    }
    fmt::print("{{\"side\": \"burn\", \"what\": \"load\", \"device\": \"{}\", \"seconds\": {:.4f}}}\n",
               device.type().name(), median(loads));
  }

  for (const std::size_t batch : batches) {
    const auto x = burn::Tensor<4>::random({batch, 3, image, image}, burn::Distribution::normal(0, 1), flex).to_data();
    write_bytes(dir / fmt::format("input.b{}.bin", batch), x);
    // Made once: `model.run({x})` would copy the input into a fresh vector
    // on every call, a cost of this harness (ONNX Runtime's side reads its
    // array as it is).
    const std::vector<burn::TensorData> inputs{x};
    for (const burn::Device& device : devices) {
      const auto model = burn::onnx::Model::load(path, device, /*trainable=*/false);
      burn::TensorData out;
      for (int i = 0; i < 2; ++i) out = model.run(inputs)[0];  // warm-up: plans, caches, primitives
      if (device == flex) write_bytes(dir / fmt::format("expected.b{}.bin", batch), out);
      std::vector<double> times;
      for (std::size_t r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        out = model.run(inputs)[0];
        times.push_back(seconds_since(t0));
      }
      fmt::print("{{\"side\": \"burn\", \"what\": \"run\", \"device\": \"{}\", \"batch\": {}, \"seconds\": {:.5f}}}\n",
                 device.type().name(), batch, median(times));
      // The same with Float32Precision::High (Winograd 3x3 convolutions):
      // faster, with more rounding, so timed and compared separately.
      device.set_float32_precision(burn::Float32Precision::High);
      burn::TensorData fast;
      for (int i = 0; i < 2; ++i) fast = model.run(inputs)[0];
      if (device == flex) write_bytes(dir / fmt::format("expected_high.b{}.bin", batch), fast);
      times.clear();
      for (std::size_t r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        fast = model.run(inputs)[0];
        times.push_back(seconds_since(t0));
      }
      device.set_float32_precision(burn::Float32Precision::Highest);
      fmt::print(
          "{{\"side\": \"burn\", \"what\": \"run_high\", \"device\": \"{}\", \"batch\": {}, \"seconds\": {:.5f}}}\n",
          device.type().name(), batch, median(times));
      // The same network as a burn module, without ONNX: what the import itself costs.
      const auto module = native.to_device(device);
      for (int i = 0; i < 2; ++i) (void)module.forward(burn::Tensor<4>::from_data(x, device)).to_data();
      times.clear();
      for (std::size_t r = 0; r < reps; ++r) {
        const auto t0 = Clock::now();
        (void)module.forward(burn::Tensor<4>::from_data(x, device)).to_data();
        times.push_back(seconds_since(t0));
      }
      fmt::print(
          "{{\"side\": \"burn\", \"what\": \"native\", \"device\": \"{}\", \"batch\": {}, \"seconds\": {:.5f}}}\n",
          device.type().name(), batch, median(times));
    }
  }
  return 0;
}
