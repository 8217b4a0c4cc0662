// Safetensors: the tensor file format of the Python safetensors / PyTorch
// stack, used as the storage layer of burn records.
//
// Layout: an 8-byte little-endian header length N, N bytes of JSON header
//   {"__metadata__": {"k": "v"}, "name": {"dtype": "F32", "shape": [2, 3],
//    "data_offsets": [begin, end]}, ...}
// (padded with spaces to a multiple of 8 bytes), then the data buffer holding
// every tensor's little-endian, row-major bytes at its offsets.
//
// Reading accepts every dtype below plus the FP8 formats F8_E4M3 (the "FN"
// variant: no infinities, S.1111.111 is NaN) and F8_E5M2 (IEEE-like), which
// load as F32 (every FP8 value is exact there). Files are untrusted input: a
// header longer than 100,000,000 bytes (the reference readers' limit) or
// nesting JSON deeper than 8 levels is refused (docs/records.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <burn/dtype.hpp>
#include <burn/tensor_data.hpp>

namespace burn::record {

/// The contents of a safetensors file.
struct SafetensorsFile {
  std::map<std::string, TensorData> tensors;
  std::map<std::string, std::string> metadata;

  /// The tensor called `name`; throws burn::Error listing the names present
  /// if there is none.
  const TensorData& tensor(std::string_view name) const;
  /// A copy of tensor `name` converted to `dtype` (e.g. F32 weights loaded
  /// into a BF16 model); throws like tensor(name).
  TensorData tensor(std::string_view name, DType dtype) const;
};

/// The safetensors dtype name of `d`: "F32", "BF16", "BOOL", ...
std::string_view safetensors_dtype_name(DType d) noexcept;

/// The whole file as bytes. Tensors are written sorted by name so that equal
/// inputs give identical bytes. Throws burn::Error for a tensor named
/// "__metadata__" or a name / metadata string that is not valid UTF-8.
std::vector<std::byte> serialize_safetensors(const std::map<std::string, TensorData>& tensors,
                                             const std::map<std::string, std::string>& metadata = {});

/// Parses and validates a whole file held in memory; throws burn::Error
/// ("[deserialize_safetensors] ...") if it is malformed.
SafetensorsFile deserialize_safetensors(std::span<const std::byte> bytes);

/// Writes atomically: the bytes go to a fresh temporary file in the same
/// directory, which is flushed, fsync'ed and then renamed over `path`. On any
/// failure the temporary file is removed, an existing `path` is left
/// untouched, and burn::Error ("[save_safetensors] <path>: ...") is thrown.
void save_safetensors(const std::filesystem::path& path, const std::map<std::string, TensorData>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

/// Reads and validates a file; throws burn::Error
/// ("[load_safetensors] <path>: ...") if it is missing, unreadable or
/// malformed.
SafetensorsFile load_safetensors(const std::filesystem::path& path);

}  // namespace burn::record
