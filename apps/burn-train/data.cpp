#include "data.hpp"

#include <fmt/format.h>

#include <burn/error.hpp>
#include <string>
#include <system_error>

namespace burn_train {
namespace {

constexpr const char* kPackage = "dataset-fashion-mnist";

// Debian ships the files gzip-compressed; unpacked copies work as well.
void require_files(const std::filesystem::path& dir, const char* prefix) {
  for (const char* kind : {"images-idx3", "labels-idx1"}) {
    const std::string name = fmt::format("{}-{}-ubyte", prefix, kind);
    std::error_code ec;
    if (std::filesystem::exists(dir / (name + ".gz"), ec) || std::filesystem::exists(dir / name, ec)) continue;
    throw DataMissingError(
        "data", fmt::format("Fashion-MNIST is not installed: '{}' (or '{}') does not exist. Install the Debian package "
                            "{} (apt-get install {}), or pass --data-dir with MNIST-format files",
                            (dir / (name + ".gz")).string(), (dir / name).string(), kPackage, kPackage));
  }
}

burn::data::MnistDataset load_split(const std::filesystem::path& dir, bool train) {
  require_files(dir, train ? "train" : "t10k");
  try {
    return train ? burn::data::MnistDataset::train(dir) : burn::data::MnistDataset::test(dir);
  } catch (const burn::Error& e) {
    std::string message = fmt::format("cannot load the Fashion-MNIST {} split from '{}': {}",
                                      train ? "training" : "test", dir.string(), e.what());
    // A missing file already names the package; a corrupt one gets the remedy here.
    if (message.find(kPackage) == std::string::npos) {
      if (dir == burn::data::MnistDataset::default_dir())
        message += fmt::format(
            ". The files come from the Debian package {0}; reinstall it with "
            "'apt-get install --reinstall {0}'",
            kPackage);
      else
        message += fmt::format(
            ". Pass --data-dir with intact MNIST-format files, or install the Debian package {} "
            "and drop --data-dir",
            kPackage);
    }
    throw burn::Error("data", message);
  }
}

}  // namespace

FashionMnist load_fashion_mnist(const std::filesystem::path& dir) {
  FashionMnist data;
  data.train = std::make_shared<const burn::data::MnistDataset>(load_split(dir, true));
  data.test = std::make_shared<const burn::data::MnistDataset>(load_split(dir, false));
  return data;
}

}  // namespace burn_train
