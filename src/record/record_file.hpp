// The file front end load_module reads through: safetensors, or PyTorch's
// torch.save archive, told apart by their first bytes.
#pragma once

#include <filesystem>
#include <string_view>

#include <burn/record/pytorch.hpp>
#include <burn/record/safetensors.hpp>

namespace burn::record::detail {

/// Reads a torch.save archive; errors are burn::Error(op, "<path>: ...").
PyTorchFile read_pytorch_file(const std::filesystem::path& path, std::string_view op);

/// A safetensors file, or a torch.save archive's tensors with the metadata a
/// PyTorch-written safetensors file carries ({"format": "pt"}), so loading
/// takes the PyTorch layout.
SafetensorsFile read_record_file(const std::filesystem::path& path, std::string_view op);

}  // namespace burn::record::detail
