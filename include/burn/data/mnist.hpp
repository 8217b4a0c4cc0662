// MNIST-format datasets (Fashion-MNIST from Debian's dataset-fashion-mnist
// package by default) and a batcher that turns items into tensors.
#pragma once

#include <burn/data/dataset.hpp>
#include <burn/device.hpp>
#include <burn/tensor.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

namespace burn::data {

struct MnistItem {
  static constexpr std::size_t kHeight = 28;
  static constexpr std::size_t kWidth = 28;
  std::vector<float> image;  ///< kHeight * kWidth pixels, row-major, scaled to [0, 1]
  std::uint8_t label = 0;    ///< class 0..9
};

/// Images and labels of one MNIST split, kept as bytes in memory (about 47 MB
/// for the training split); items are converted to floats on `get`.
class MnistDataset final : public Dataset<MnistItem> {
 public:
  /// Where Debian's dataset-fashion-mnist package installs its files.
  static std::filesystem::path default_dir();

  /// train-{images-idx3,labels-idx1}-ubyte[.gz] (60000 items for Fashion-MNIST).
  static MnistDataset train(const std::filesystem::path& dir = default_dir());
  /// t10k-{images-idx3,labels-idx1}-ubyte[.gz] (10000 items for Fashion-MNIST).
  static MnistDataset test(const std::filesystem::path& dir = default_dir());
  /// Any pair of files; throws burn::Error("MnistDataset", ...) when they are
  /// missing, malformed, not 28x28 images and labels, or their counts differ.
  static MnistDataset from_files(const std::filesystem::path& images, const std::filesystem::path& labels);

  std::size_t size() const override { return labels_.size(); }
  MnistItem get(std::size_t index) const override;

 private:
  MnistDataset(std::vector<std::uint8_t> pixels, std::vector<std::uint8_t> labels)
      : pixels_(std::move(pixels)), labels_(std::move(labels)) {}
  static MnistDataset split(const std::filesystem::path& dir, const char* prefix);

  std::vector<std::uint8_t> pixels_;
  std::vector<std::uint8_t> labels_;
};

struct MnistBatch {
  Tensor<4> images;        ///< [B, 1, 28, 28], the device's default float dtype
  Tensor<1, Int> targets;  ///< [B], the device's default int dtype
};

/// Stacks items into an MnistBatch on `device`. Safe to call from DataLoader
/// workers (tensor creation is thread-safe).
struct MnistBatcher {
  Device device;
  MnistBatch operator()(std::vector<MnistItem> items) const;
};

}  // namespace burn::data
