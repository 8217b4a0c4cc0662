// IDX files: the format of MNIST and Fashion-MNIST (big-endian header, then
// raw unsigned bytes), read plain or gzip-compressed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace burn::data {

/// The contents of an unsigned-byte IDX file.
struct IdxArray {
  std::vector<std::size_t> dims;   ///< e.g. {60000, 28, 28} for images, {60000} for labels
  std::vector<std::uint8_t> data;  ///< row-major, product(dims) bytes

  std::size_t num_elements() const noexcept;
};

/// Reads an IDX file of unsigned bytes (element type 0x08), plain or gzip
/// (detected from the first bytes, not the file name).
///
/// Throws burn::Error("read_idx", ...) naming the file and the problem when it
/// is missing or unreadable, the gzip stream is corrupt or truncated, the
/// magic number is not an IDX one, the element type is not unsigned byte, or
/// the data is shorter or longer than the header's dimensions say.
IdxArray read_idx(const std::filesystem::path& path);

enum class IdxCompression { None, Gzip };

/// Writes `array` as an unsigned-byte IDX file (magic 0x0000080N with N =
/// dims.size()); throws burn::Error("write_idx", ...) when dims do not match
/// the data or the file cannot be written.
void write_idx(const std::filesystem::path& path, const IdxArray& array,
               IdxCompression compression = IdxCompression::None);

}  // namespace burn::data
