// Internal helpers shared by the safetensors codec and its file front end.
#pragma once

#include <burn/record/safetensors.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace burn::record::detail {

/// The largest header length accepted, as in the reference Python and Rust
/// readers: a larger one is refused before the rest of the file is read.
inline constexpr std::uint64_t kMaxHeaderSize = 100'000'000;

/// How deeply the header's JSON may nest (the top-level object counts as 1).
/// A valid header needs 3 (object, tensor entry, shape); deeper values can
/// only be unknown extra fields. The limit keeps hostile nesting from
/// exhausting the stack in code that walks JSON values recursively.
inline constexpr std::size_t kMaxHeaderDepth = 8;

/// One tensor of a parsed header.
struct HeaderEntry {
  std::string name;
  std::string_view dtype_name;  ///< as the file spells it: "F32", "F8_E4M3", ...
  DType dtype;                  ///< what the loaded TensorData holds (F32 for the FP8 formats)
  std::size_t element_size;     ///< bytes per element in the file
  std::vector<std::uint64_t> dims;
  std::uint64_t begin = 0, end = 0;
};

/// A checked header: its tensors tile [0, data_size) of the data buffer.
struct SafetensorsHeader {
  std::map<std::string, std::string> metadata;
  std::vector<HeaderEntry> entries;  ///< in file order
  std::uint64_t data_size = 0;
};

// Every function below throws burn::Error(op, prefix + what is wrong), so the
// file front end can name the file while the in-memory API does not.

/// The header length the first 8 bytes (little-endian) declare, checked
/// against kMaxHeaderSize and, when known, against the total size of the
/// file or buffer.
std::uint64_t header_length(std::span<const std::byte, 8> first, std::optional<std::uint64_t> total_size,
                            std::string_view op, std::string_view prefix);

/// Parses and checks the JSON header (without recursion, nesting limited to
/// kMaxHeaderDepth): entries, dtypes, offsets against shapes, and that the
/// tensors tile the data buffer with no overlap or gap.
SafetensorsHeader parse_safetensors_header(std::string_view text, std::string_view op, std::string_view prefix);

/// Throws unless a data buffer of `available` bytes is exactly what `header`
/// describes (a tensor running past it: truncated; bytes after the last
/// tensor: trailing garbage).
void check_data_size(const SafetensorsHeader& header, std::uint64_t available, std::string_view op,
                     std::string_view prefix);

/// The tensors of `data` (the buffer after the header), in host byte order;
/// FP8 tensors decoded to F32.
SafetensorsFile decode_safetensors(const SafetensorsHeader& header, std::span<const std::byte> data,
                                   std::string_view op, std::string_view prefix);

/// Parses a whole file held in memory: header_length, the header, the data.
SafetensorsFile parse_safetensors(std::span<const std::byte> bytes, std::string_view op, std::string_view prefix);

/// Builds the file bytes.
std::vector<std::byte> build_safetensors(const std::map<std::string, TensorData>& tensors,
                                         const std::map<std::string, std::string>& metadata, std::string_view op,
                                         std::string_view prefix);

/// Writes `bytes` to `path` via a temporary file, fsync and rename; throws
/// burn::Error(op, ...) naming the path, leaving no temporary file behind.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes, std::string_view op);

/// The tensor called `name` in `tensors`; throws burn::Error(op, ...) listing
/// the names present if there is none (SafetensorsFile::tensor,
/// PyTorchFile::tensor).
const TensorData& named_tensor(const std::map<std::string, TensorData>& tensors, std::string_view name,
                               std::string_view op);

/// Reads and parses a safetensors file; errors name the path. The header is
/// read and checked first, and only the data it describes is read after it,
/// so a hostile length, a corrupt header or an endless non-regular file (a
/// pipe, /dev/zero) fails early instead of filling memory.
SafetensorsFile read_safetensors_file(const std::filesystem::path& path, std::string_view op);

}  // namespace burn::record::detail
