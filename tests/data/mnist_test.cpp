// MnistDataset from small generated files, MnistBatcher tensors on every
// device, and (when Debian's dataset-fashion-mnist is installed) the real files.
#include <gtest/gtest.h>

#include <burn/data/dataloader.hpp>
#include <burn/data/idx.hpp>
#include <burn/data/mnist.hpp>

#include "burn_test.hpp"
#include "temp_dir.hpp"

namespace {

using burn::data::IdxArray;
using burn::data::IdxCompression;
using burn::data::MnistBatch;
using burn::data::MnistBatcher;
using burn::data::MnistDataset;
using burn::data::MnistItem;
using burn::testing::error_message;
using burn::testing::TempDir;

constexpr std::size_t kPixels = 28 * 28;

std::uint8_t pixel(std::size_t item, std::size_t i) { return static_cast<std::uint8_t>((item * 31 + i * 7) % 256); }

// Writes `n` images and labels with the MNIST names for `prefix` into `dir`.
void write_split(const std::filesystem::path& dir, const std::string& prefix, std::size_t n,
                 IdxCompression compression) {
  IdxArray images{{n, 28, 28}, {}};
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < kPixels; ++i) images.data.push_back(pixel(k, i));
  IdxArray labels{{n}, {}};
  for (std::size_t k = 0; k < n; ++k) labels.data.push_back(static_cast<std::uint8_t>((k * 3) % 10));
  const std::string ext = compression == IdxCompression::Gzip ? ".gz" : "";
  burn::data::write_idx(dir / (prefix + "-images-idx3-ubyte" + ext), images, compression);
  burn::data::write_idx(dir / (prefix + "-labels-idx1-ubyte" + ext), labels, compression);
}

TEST(Mnist, TrainSplitFromGzipFiles) {
  TempDir dir;
  write_split(dir.path(), "train", 5, IdxCompression::Gzip);
  const MnistDataset ds = MnistDataset::train(dir.path());
  ASSERT_EQ(ds.size(), 5u);
  for (std::size_t k = 0; k < 5; ++k) {
    const MnistItem item = ds.get(k);
    ASSERT_EQ(item.image.size(), kPixels);
    EXPECT_EQ(item.label, (k * 3) % 10);
    for (std::size_t i = 0; i < kPixels; i += 97) EXPECT_FLOAT_EQ(item.image[i], pixel(k, i) / 255.0f);
  }
  EXPECT_CONTAINS(error_message([&] { ds.get(5); }), "[MnistDataset::get] index 5 is out of range");
}

TEST(Mnist, TestSplitFromPlainFiles) {
  TempDir dir;
  write_split(dir.path(), "t10k", 3, IdxCompression::None);
  EXPECT_EQ(MnistDataset::test(dir.path()).size(), 3u);
}

TEST(Mnist, MissingFilesNameTheDebianPackage) {
  TempDir dir;
  const auto msg = error_message([&] { MnistDataset::train(dir.path()); });
  EXPECT_CONTAINS(msg, "[MnistDataset]");
  EXPECT_CONTAINS(msg, (dir / "train-images-idx3-ubyte.gz").string());
  EXPECT_CONTAINS(msg, "apt-get install dataset-fashion-mnist");
}

TEST(Mnist, RejectsMismatchedFiles) {
  TempDir dir;
  write_split(dir.path(), "a", 4, IdxCompression::None);
  write_split(dir.path(), "b", 3, IdxCompression::None);
  EXPECT_CONTAINS(
      error_message([&] { MnistDataset::from_files(dir / "a-images-idx3-ubyte", dir / "b-labels-idx1-ubyte"); }),
      "has 4 images but");
  // Labels passed as images and vice versa.
  EXPECT_CONTAINS(
      error_message([&] { MnistDataset::from_files(dir / "a-labels-idx1-ubyte", dir / "a-images-idx3-ubyte"); }),
      "MNIST images are [N, 28, 28]");
  burn::data::write_idx(dir / "bad-labels", IdxArray{{4}, {0, 1, 10, 2}});
  EXPECT_CONTAINS(error_message([&] { MnistDataset::from_files(dir / "a-images-idx3-ubyte", dir / "bad-labels"); }),
                  "label 10 at index 2 is not a class 0..9");
}

TEST(Mnist, BatcherBuildsImageAndTargetTensors) {
  TempDir dir;
  write_split(dir.path(), "train", 3, IdxCompression::Gzip);
  const MnistDataset ds = MnistDataset::train(dir.path());
  for (const auto& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    const MnistBatch batch = MnistBatcher{device}({ds.get(2), ds.get(0)});
    EXPECT_EQ(batch.images.shape(), (burn::Shape{2, 1, 28, 28}));
    EXPECT_EQ(batch.images.dtype(), burn::DType::F32);
    EXPECT_EQ(batch.images.device(), device);
    EXPECT_EQ(batch.targets.shape(), (burn::Shape{2}));
    EXPECT_EQ(batch.targets.dtype(), burn::DType::I64);
    EXPECT_EQ(batch.targets.to_data().to_vec<std::int64_t>(), (std::vector<std::int64_t>{6, 0}));
    const auto pixels = batch.images.to_data().to_vec<float>();
    ASSERT_EQ(pixels.size(), 2 * kPixels);
    for (std::size_t i = 0; i < kPixels; ++i) {
      ASSERT_FLOAT_EQ(pixels[i], pixel(2, i) / 255.0f) << i;
      ASSERT_FLOAT_EQ(pixels[kPixels + i], pixel(0, i) / 255.0f) << i;
    }
  }
}

TEST(Mnist, BatcherRejectsWrongImageSize) {
  MnistItem bad{std::vector<float>(10, 0.0f), 1};
  EXPECT_CONTAINS(error_message([&] { MnistBatcher{burn::testing::reference_device()}({bad}); }),
                  "[MnistBatcher] item 0 of the batch has 10 pixels");
}

TEST(Mnist, DataLoaderWithWorkersBuildsTensors) {
  TempDir dir;
  write_split(dir.path(), "train", 7, IdxCompression::Gzip);
  auto ds = std::make_shared<const MnistDataset>(MnistDataset::train(dir.path()));
  for (const auto& device : burn::testing::all_devices()) {
    SCOPED_TRACE(device.to_string());
    burn::data::DataLoader<MnistItem, MnistBatch> loader(
        ds, MnistBatcher{device}, {.batch_size = 3, .shuffle = true, .seed = 5, .num_workers = 2});
    std::vector<std::size_t> batch_sizes;
    std::vector<std::int64_t> labels;
    for (auto& batch : loader.iter()) {
      batch_sizes.push_back(batch.images.dims()[0]);
      EXPECT_EQ(batch.targets.dims()[0], batch.images.dims()[0]);
      for (auto l : batch.targets.to_data().to_vec<std::int64_t>()) labels.push_back(l);
    }
    EXPECT_EQ(batch_sizes, (std::vector<std::size_t>{3, 3, 1}));
    std::sort(labels.begin(), labels.end());
    EXPECT_EQ(labels, (std::vector<std::int64_t>{0, 2, 3, 5, 6, 8, 9}));
  }
}

TEST(Mnist, RealFashionMnistWhenInstalled) {
  const auto dir = MnistDataset::default_dir();
  if (!std::filesystem::exists(dir / "t10k-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << "Debian package dataset-fashion-mnist is not installed";
  const MnistDataset test = MnistDataset::test();
  ASSERT_EQ(test.size(), 10000u);
  const MnistItem first = test.get(0);
  EXPECT_EQ(first.label, 9);  // an ankle boot
  EXPECT_FLOAT_EQ(first.image[14 * 28 + 14], 110 / 255.0f);
  const MnistDataset train = MnistDataset::train();
  ASSERT_EQ(train.size(), 60000u);
  EXPECT_EQ(train.get(3).label, 3);
}

}  // namespace
