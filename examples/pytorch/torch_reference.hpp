// What the PyTorch examples share: making the reference with PyTorch
// (torch_reference.py, run by Debian's python3), picking devices from the
// command line, and comparing burn's output with PyTorch's.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include <burn/burn.hpp>
#include <burn/record/safetensors.hpp>

namespace example {

/// The exit code when PyTorch is not installed: ctest reports the example as
/// skipped, with the reason printed.
inline constexpr int kNoTorch = 4;

struct Options {
  std::vector<burn::Device> devices;
  std::size_t image = 224;  // resnet18 only
};

/// --device NAME (flex, cpu, ndarray, vulkan, libtorch, ...; default: Device(),
/// the best available) or --device all (every one this build and machine
/// have); --image N.
inline Options parse_options(int argc, char** argv, std::string_view usage) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--device" || arg == "--image") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--image") {
        o.image = std::stoul(value);
      } else if (value == "all") {
        for (const char* name : {"flex", "cpu", "ndarray", "vulkan", "libtorch"}) {
          try {
            o.devices.push_back(burn::Device::parse(name));
          } catch (const burn::Error&) {  // not in this build, or no such device here
          }
        }
      } else {
        o.devices.push_back(burn::Device::parse(value));
      }
    } else {
      std::fprintf(stderr, "usage: %s %.*s\n", argv[0], static_cast<int>(usage.size()), usage.data());
      std::exit(2);
    }
  }
  if (o.devices.empty()) o.devices.push_back(burn::Device());
  return o;
}

/// A scratch directory with PyTorch's model.pt and io.safetensors, removed
/// at exit.
class Reference {
 public:
  Reference(const std::string& model, const std::string& extra = "")
      : dir_(std::filesystem::temp_directory_path() / ("burn-example-" + model + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    const char* env = std::getenv("BURN_EXAMPLE_PYTHON");
    const std::string python = env && *env ? env : "/usr/bin/python3";
    const std::string script = std::string(BURN_EXAMPLES_PYTORCH_DIR) + "/torch_reference.py";
    if (std::system(("'" + python + "' -c 'import torch' > /dev/null 2>&1").c_str()) != 0) {
      std::printf(
          "%s cannot import torch: install python3-torch (and python3-torchvision for resnet18), as "
          "scripts/install-deps.sh does, or set BURN_EXAMPLE_PYTHON\n",
          python.c_str());
      std::exit(kNoTorch);
    }
    const std::string cmd = "'" + python + "' '" + script + "' " + model + " '" + dir_.string() + "' " + extra;
    if (std::system(cmd.c_str()) != 0) {
      std::fprintf(stderr, "PyTorch could not make the reference: %s\n", cmd.c_str());
      std::exit(1);
    }
    io_ = burn::record::load_safetensors(dir_ / "io.safetensors");
  }
  ~Reference() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Reference(const Reference&) = delete;
  Reference& operator=(const Reference&) = delete;

  /// torch.save(model.state_dict(), ...): what burn loads.
  std::filesystem::path weights() const { return dir_ / "model.pt"; }
  /// The same state dict as a safetensors file without metadata.
  std::filesystem::path safetensors_weights() const { return dir_ / "model.safetensors"; }
  const burn::TensorData& input() const { return io_.tensor("input"); }
  const burn::TensorData& output() const { return io_.tensor("output"); }

 private:
  std::filesystem::path dir_;
  burn::record::SafetensorsFile io_;
};

/// Prints whether the model loaded from model.safetensors computes exactly
/// the logits the one from model.pt did.
inline bool same_logits(const burn::TensorData& from_safetensors, const burn::TensorData& from_pt) {
  const bool ok = from_safetensors == from_pt;
  std::printf("%-10s the same weights from model.safetensors give the same logits: %s\n", "", ok ? "ok" : "MISMATCH");
  return ok;
}

/// Prints how far burn's logits [batch, classes] are from PyTorch's; true
/// when within 1e-4 of the largest logit and every row's argmax agrees.
inline bool compare(const burn::Device& device, const burn::TensorData& ours, const burn::TensorData& theirs) {
  const auto a = ours.convert(burn::DType::F32).to_vec<float>();
  const auto b = theirs.convert(burn::DType::F32).to_vec<float>();
  const std::size_t classes = theirs.shape().dims().back(), rows = b.size() / classes;
  double max_diff = 0, scale = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    max_diff = std::max(max_diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  std::size_t agree = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const auto row_a = a.begin() + static_cast<std::ptrdiff_t>(r * classes);
    const auto row_b = b.begin() + static_cast<std::ptrdiff_t>(r * classes);
    agree += std::max_element(row_a, row_a + static_cast<std::ptrdiff_t>(classes)) - row_a ==
             std::max_element(row_b, row_b + static_cast<std::ptrdiff_t>(classes)) - row_b;
  }
  const double relative = scale > 0 ? max_diff / scale : max_diff;
  const bool ok = ours.shape() == theirs.shape() && relative <= 1e-4 && agree == rows;
  std::printf("%-10s max |burn - torch| = %.3g (%.3g of the largest logit), argmax equal in %zu/%zu rows: %s\n",
              device.to_string().c_str(), max_diff, relative, agree, rows, ok ? "ok" : "MISMATCH");
  return ok;
}

}  // namespace example
