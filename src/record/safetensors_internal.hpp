// Internal helpers shared by the safetensors codec and its file front end.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include <burn/record/safetensors.hpp>

namespace burn::record::detail {

/// Parses `bytes`; errors are burn::Error(op, prefix + what is wrong), so the
/// file front end can name the file while the in-memory API does not.
SafetensorsFile parse_safetensors(std::span<const std::byte> bytes, std::string_view op, std::string_view prefix);

/// Builds the file bytes; errors are burn::Error(op, prefix + what is wrong).
std::vector<std::byte> build_safetensors(const std::map<std::string, TensorData>& tensors,
                                         const std::map<std::string, std::string>& metadata, std::string_view op,
                                         std::string_view prefix);

/// Writes `bytes` to `path` via a temporary file, fsync and rename; throws
/// burn::Error(op, ...) naming the path, leaving no temporary file behind.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes, std::string_view op);

/// The whole file; throws burn::Error(op, ...) naming the path.
std::vector<std::byte> read_whole_file(const std::filesystem::path& path, std::string_view op);

}  // namespace burn::record::detail
