// PyTorch's own file format: what torch.save writes (`.pt`, `.pth`, `.bin`),
// a zip archive holding a pickle (data.pkl) and one entry per tensor storage.
//
//   auto weights = burn::record::load_pytorch("resnet18.pth");
//   const burn::TensorData& w = weights.tensor("conv1.weight");   // [64, 3, 7, 7]
//
//   // Straight into a module, as a safetensors file would:
//   auto model = burn::record::load_module(ResNetConfig{...}.init(device), "resnet18.pth");
//
// Loading never runs the pickle: a restricted reader interprets the few
// objects a state dict is made of (dicts, OrderedDict, tensors, parameters,
// typed storages of f64, f32, f16, bf16, i64, i32, i16, i8, u8 and bool) and
// refuses any other object the pickle names — the way a .pt file runs code —
// with burn::Error naming it. Shared storages (two tensors viewing one
// buffer), storage offsets and strided views load as the tensors they are.
// A checkpoint dict of dicts ({"model": state_dict, "epoch": 3}) gives
// dotted keys ("model.fc.weight") and drops everything that is not a tensor.
// Not read: the pre-1.6 (non-zip) format and TorchScript archives
// (torch.jit.save), each refused with what to do instead.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include <burn/dtype.hpp>
#include <burn/tensor_data.hpp>

namespace burn::record {

/// The tensors of a torch.save file, by state-dict key, each contiguous and
/// row-major in host byte order.
struct PyTorchFile {
  std::map<std::string, TensorData> tensors;

  /// The tensor called `name`; throws burn::Error listing the names present
  /// if there is none.
  const TensorData& tensor(std::string_view name) const;
};

/// Whether `bytes` start as a zip archive (which torch.save has written
/// since PyTorch 1.6) rather than as something else, e.g. a safetensors file.
bool looks_like_pytorch_archive(std::span<const std::byte> first_bytes) noexcept;

/// Reads a torch.save archive held in memory; throws burn::Error
/// ("[deserialize_pytorch] ...") for anything else, a corrupt archive, a
/// pickle naming objects a state dict does not hold, or storages whose sizes
/// disagree with their tensors.
PyTorchFile deserialize_pytorch(std::span<const std::byte> bytes);

/// Reads a torch.save file; errors ("[load_pytorch] <path>: ...") as above.
/// Storages are read one at a time, only as large as the pickle declares.
PyTorchFile load_pytorch(const std::filesystem::path& path);

}  // namespace burn::record
