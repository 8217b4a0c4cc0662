// Fashion-MNIST for burn-train: the two splits and their loaders.
#pragma once

#include <burn/data/dataloader.hpp>
#include <burn/data/mnist.hpp>
#include <burn/error.hpp>
#include <filesystem>
#include <memory>

namespace burn_train {

using Loader = burn::data::DataLoader<burn::data::MnistItem, burn::data::MnistBatch>;

/// The data files are not installed (as opposed to present but unreadable):
/// burn-train exits with its own status for it, so a test can be skipped.
class DataMissingError : public burn::Error {
 public:
  using burn::Error::Error;
};

struct FashionMnist {
  std::shared_ptr<const burn::data::MnistDataset> train, test;
};

/// Reads both splits from `dir`. A missing file is a DataMissingError, a
/// corrupt one a burn::Error; both "[data] ...", naming the file and saying
/// how to get a good copy (the Debian package dataset-fashion-mnist).
FashionMnist load_fashion_mnist(const std::filesystem::path& dir);

}  // namespace burn_train
