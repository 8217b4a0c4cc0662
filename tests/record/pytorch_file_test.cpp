// torch.save files (.pt): every storage type, shared and strided storages,
// checkpoint dicts, a large file, load_module on a .pt, and the files that
// must be refused (pickles that would run code, TorchScript, whole modules,
// the legacy format, truncated and corrupt archives). The files are written
// at test time by Debian's python3-torch (fixtures/make_torch_pt_fixtures.py).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <burn/nn/linear.hpp>
#include <burn/record/module_record.hpp>
#include <burn/record/pytorch.hpp>
#include <burn/record/safetensors.hpp>

#include "burn_test.hpp"
#include "torch_fixtures.hpp"

namespace burn::record {
namespace {

using burn::testing::expect_op_error;
using test::torch_fixtures;

std::vector<std::byte> pt_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

TEST(PyTorchFile, EveryStorageTypeLoadsAsTorchHoldsIt) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto& fx = torch_fixtures();
  const SafetensorsFile expected = load_safetensors(fx / "expected.safetensors");
  for (const char* name : {"state.pt", "state_proto4.pt"}) {
    SCOPED_TRACE(name);
    const PyTorchFile file = load_pytorch(fx / name);
    ASSERT_EQ(file.tensors.size(), expected.tensors.size());
    for (const auto& [key, want] : expected.tensors) {
      SCOPED_TRACE(key);
      const TensorData& got = file.tensor(key);
      EXPECT_EQ(got.dtype(), want.dtype());
      EXPECT_EQ(got.shape(), want.shape());
      EXPECT_EQ(got, want);  // every byte
    }
    // The in-memory entry point reads the same bytes the same way.
    EXPECT_EQ(deserialize_pytorch(pt_file_bytes(fx / name)).tensors, file.tensors);
  }
}

TEST(PyTorchFile, SharedStoragesOffsetsAndStridedViewsLoadAsTheirValues) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const PyTorchFile file = load_pytorch(torch_fixtures() / "state.pt");
  // shared = arange(24) * 0.5 - 3; shared_offset = shared[2:8].view(2, 3).
  const TensorData& offset = file.tensor("shared_offset");
  EXPECT_EQ(offset.shape(), (Shape{2, 3}));
  EXPECT_EQ(offset.to_vec<float>(), (std::vector<float>{-2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f}));
  // shared.view(4, 6).t(): [6, 4] with element (i, j) = shared[6 j + i].
  const TensorData& transposed = file.tensor("shared_transposed");
  ASSERT_EQ(transposed.shape(), (Shape{6, 4}));
  const auto values = transposed.to_vec<float>();
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      EXPECT_EQ(values[i * 4 + j], static_cast<float>(6 * j + i) * 0.5f - 3.0f) << i << ", " << j;
  EXPECT_EQ(file.tensor("param").to_vec<float>(), (std::vector<float>{2.0f, -4.0f}));
  EXPECT_EQ(file.tensor("scalar").shape(), Shape{});
  EXPECT_EQ(file.tensor("empty").shape(), (Shape{0, 4}));
}

TEST(PyTorchFile, ACheckpointDictGivesDottedKeysAndLoadsIntoAModule) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto path = torch_fixtures() / "checkpoint.pt";
  const PyTorchFile file = load_pytorch(path);
  std::vector<std::string> keys;
  for (const auto& [key, _] : file.tensors) keys.push_back(key);
  // "epoch" and the param_groups list are not tensors: dropped.
  EXPECT_EQ(keys, (std::vector<std::string>{"model.bias", "model.weight", "optimizer.state.0.step"}));
  EXPECT_EQ(file.tensor("optimizer.state.0.step").to_vec<float>(), std::vector<float>{4.0f});

  // load_module reads .pt files in the PyTorch layout.
  const auto linear = load_module(nn::LinearConfig{3, 2}.init(Device::flex()), path,
                                  LoadOptions{}.with_key_remap("^model\\.", "").with_strict(false));
  const TensorData& w = file.tensor("model.weight");                // torch's [2, 3]
  const auto ours = linear.weight.val().to_data().to_vec<float>();  // burn's [3, 2]
  const auto theirs = w.to_vec<float>();
  for (std::size_t o = 0; o < 2; ++o)
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(ours[i * 2 + o], theirs[o * 3 + i]);
  EXPECT_EQ(linear.bias->val().to_data(), file.tensor("model.bias"));
  // strict: the optimizer's tensor is an unexpected key.
  expect_op_error(
      [&] {
        load_module(nn::LinearConfig{3, 2}.init(Device::flex()), path, LoadOptions{}.with_key_remap("^model\\.", ""));
      },
      "load_module", "unexpected keys (in the file, not in the module): optimizer.state.0.step");
}

struct LinearAndExtra {
  nn::Linear fc;
  nn::Linear extra;
  BURN_MODULE(fc, extra)
};

TEST(PyTorchFile, APartialLoadReportsWhatItLeftOut) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto path = torch_fixtures() / "checkpoint.pt";
  const Device device = Device::flex();
  const LinearAndExtra fresh{nn::LinearConfig{3, 2}.init(device), nn::LinearConfig{2, 2}.init(device)};
  const auto remap = LoadOptions{}.with_key_remap("^model\\.", "fc.");
  expect_op_error([&] { load_module(fresh, path, remap.with_strict(false)); }, "load_module",
                  "missing keys (in the module, not in the file): extra.weight, extra.bias");
  expect_op_error([&] { load_module(fresh, path, remap.with_strict(false)); }, "load_module",
                  "LoadOptions{}.with_partial() keeps missing tensors as they are");
  const auto [loaded, report] = load_module_with_report(fresh, path, remap.with_partial().with_strict(false));
  EXPECT_EQ(report.missing, (std::vector<std::string>{"extra.bias", "extra.weight"}));
  EXPECT_EQ(report.unexpected, std::vector<std::string>{"optimizer.state.0.step"});
  EXPECT_FALSE(report.complete());
  EXPECT_EQ(loaded.fc.bias->val().to_data(), load_pytorch(path).tensor("model.bias"));
  EXPECT_EQ(loaded.extra.weight.val().to_data(), fresh.extra.weight.val().to_data());  // kept as it was
  // A complete load reports nothing left out.
  const auto [linear, none] = load_module_with_report(nn::LinearConfig{3, 2}.init(device), path,
                                                      LoadOptions{}.with_key_remap("^model\\.", "").with_strict(false));
  EXPECT_TRUE(none.missing.empty());
  EXPECT_EQ(none.unexpected, std::vector<std::string>{"optimizer.state.0.step"});
}

TEST(PyTorchFile, ALargeFileLoadsWhole) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const PyTorchFile file = load_pytorch(torch_fixtures() / "big.pt");
  const TensorData& big = file.tensor("big");
  ASSERT_EQ(big.shape(), Shape{std::size_t(1) << 23});
  const auto values = big.to_vec<float>();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < values.size(); ++i) wrong += values[i] != static_cast<float>(i);
  EXPECT_EQ(wrong, 0u);
}

TEST(PyTorchFile, PicklesThatWouldRunCodeAreRefusedWithoutRunningIt) {
  test::TempDir dir;
  const auto sentinel = dir.path() / "ran";
  if (!test::run_torch_script("hostile " + test::shell_quoted(dir.path().string()) + " " +
                              test::shell_quoted(sentinel.string())))
    GTEST_SKIP() << test::torch_python() << " could not write the hostile files";
  expect_op_error([&] { load_pytorch(dir.path() / "evil_system.pt"); }, "load_pytorch",
                  "data.pkl names 'posix.system', which a state dict never holds");
  expect_op_error(
      [&] {
        load_module(nn::LinearConfig{2, 2}.init(Device::flex()), dir.path() / "evil_system.pt");
      },
      "load_module", "could run code");
  EXPECT_FALSE(std::filesystem::exists(sentinel)) << "the pickle's os.system ran";
  // Pickle protocol 2 spells Python 3's builtins "__builtin__".
  expect_op_error([&] { load_pytorch(dir.path() / "evil_eval.pt"); }, "load_pytorch", "names '__builtin__.eval'");
}

TEST(PyTorchFile, OtherPyTorchFilesAreRefusedWithWhatToDo) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto& fx = torch_fixtures();
  expect_op_error([&] { load_pytorch(fx / "module.pt"); }, "load_pytorch",
                  "names 'torch.nn.modules.linear.Linear', which a state dict never holds");
  expect_op_error([&] { load_pytorch(fx / "module.pt"); }, "load_pytorch", "torch.save(model.state_dict(), path)");
  expect_op_error([&] { load_pytorch(fx / "scripted.pt"); }, "load_pytorch", "TorchScript archive (torch.jit.save)");
  expect_op_error([&] { load_pytorch(fx / "legacy.pt"); }, "load_pytorch", "legacy (pre-1.6, not zip)");
  expect_op_error([&] { load_pytorch(fx / "encoder_io.safetensors"); }, "load_pytorch", "not a PyTorch file");
  expect_op_error([&] { load_pytorch(fx / "no_such.pt"); }, "load_pytorch", "no_such.pt: no such file");
}

TEST(PyTorchFile, TruncatedAndCorruptArchivesAreRefused) {
  BURN_REQUIRE_TORCH_FIXTURES();
  const auto& fx = torch_fixtures();
  const auto whole = pt_file_bytes(fx / "state.pt");
  test::TempDir dir;
  for (const std::size_t keep : {whole.size() / 2, whole.size() - 10, std::size_t(30)}) {
    SCOPED_TRACE(keep);
    const auto path = dir.path() / "truncated.pt";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(whole.data()), static_cast<std::streamsize>(keep));
    expect_op_error([&] { load_pytorch(path); }, "load_pytorch", "not a readable zip archive");
    expect_op_error([&] { deserialize_pytorch(std::span(whole).first(keep)); }, "deserialize_pytorch",
                    "not a readable zip archive");
  }
  expect_op_error([&] { load_pytorch(fx / "short_storage.pt"); }, "load_pytorch",
                  "holds 20 bytes, but the pickle declares 6 elements of f32 (24 bytes)");
  expect_op_error([&] { load_pytorch(fx / "flipped_byte.pt"); }, "load_pytorch", "fails its CRC check");
}

}  // namespace
}  // namespace burn::record
