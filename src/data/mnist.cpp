// MNIST-format datasets and their batcher.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <burn/data/idx.hpp>
#include <burn/data/mnist.hpp>
#include <burn/error.hpp>
#include <burn/tensor_data.hpp>
#include <string>
#include <system_error>

namespace burn::data {
namespace {

constexpr std::size_t kPixels = MnistItem::kHeight * MnistItem::kWidth;
constexpr std::uint8_t kClasses = 10;

// Debian ships the files gzip-compressed; an unpacked copy works as well.
std::filesystem::path locate(const std::filesystem::path& dir, const std::string& name) {
  std::error_code ec;
  auto gz = dir / (name + ".gz");
  if (std::filesystem::exists(gz, ec)) return gz;
  auto plain = dir / name;
  if (std::filesystem::exists(plain, ec)) return plain;
  throw Error("MnistDataset",
              fmt::format("Fashion-MNIST file '{}' not found (nor '{}'); install the Debian package "
                          "dataset-fashion-mnist (apt-get install dataset-fashion-mnist), or pass the directory "
                          "that holds the MNIST-format files",
                          gz.string(), plain.string()));
}

std::string dims_to_string(const std::vector<std::size_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

}  // namespace

std::filesystem::path MnistDataset::default_dir() { return "/usr/share/datasets/fashion-mnist"; }

MnistDataset MnistDataset::train(const std::filesystem::path& dir) { return split(dir, "train"); }
MnistDataset MnistDataset::test(const std::filesystem::path& dir) { return split(dir, "t10k"); }

MnistDataset MnistDataset::split(const std::filesystem::path& dir, const char* prefix) {
  const auto images = locate(dir, fmt::format("{}-images-idx3-ubyte", prefix));
  const auto labels = locate(dir, fmt::format("{}-labels-idx1-ubyte", prefix));
  return from_files(images, labels);
}

MnistDataset MnistDataset::from_files(const std::filesystem::path& images_path,
                                      const std::filesystem::path& labels_path) {
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);
  if (images.dims.size() != 3 || images.dims[1] != MnistItem::kHeight || images.dims[2] != MnistItem::kWidth)
    throw Error("MnistDataset", fmt::format("'{}' holds an array of shape {}; MNIST images are [N, 28, 28]",
                                            images_path.string(), dims_to_string(images.dims)));
  if (labels.dims.size() != 1)
    throw Error("MnistDataset", fmt::format("'{}' holds an array of shape {}; MNIST labels are [N]",
                                            labels_path.string(), dims_to_string(labels.dims)));
  if (images.dims[0] != labels.dims[0])
    throw Error("MnistDataset",
                fmt::format("'{}' has {} images but '{}' has {} labels; they must match", images_path.string(),
                            images.dims[0], labels_path.string(), labels.dims[0]));
  for (std::size_t i = 0; i < labels.data.size(); ++i)
    if (labels.data[i] >= kClasses)
      throw Error("MnistDataset", fmt::format("'{}': label {} at index {} is not a class 0..9", labels_path.string(),
                                              labels.data[i], i));
  return MnistDataset(std::move(images.data), std::move(labels.data));
}

MnistItem MnistDataset::get(std::size_t index) const {
  if (index >= size()) detail::throw_index_out_of_range("MnistDataset::get", index, size());
  MnistItem item;
  item.image.resize(kPixels);
  const std::uint8_t* src = pixels_.data() + index * kPixels;
  for (std::size_t i = 0; i < kPixels; ++i) item.image[i] = static_cast<float>(src[i]) / 255.0f;
  item.label = labels_[index];
  return item;
}

MnistBatch MnistBatcher::operator()(std::vector<MnistItem> items) const {
  const std::size_t n = items.size();
  std::vector<float> pixels;
  pixels.reserve(n * kPixels);
  std::vector<std::int64_t> targets;
  targets.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (items[i].image.size() != kPixels)
      throw Error("MnistBatcher", fmt::format("item {} of the batch has {} pixels; MNIST images have 28 * 28 = {}", i,
                                              items[i].image.size(), kPixels));
    pixels.insert(pixels.end(), items[i].image.begin(), items[i].image.end());
    targets.push_back(items[i].label);
  }
  auto images = Tensor<4>::from_data(TensorData(pixels, Shape{n, 1, MnistItem::kHeight, MnistItem::kWidth}), device);
  auto labels = Tensor<1, Int>::from_data(TensorData(targets, Shape{n}), device);
  return MnistBatch{std::move(images), std::move(labels)};
}

}  // namespace burn::data
