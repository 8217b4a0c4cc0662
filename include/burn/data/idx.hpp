// IDX files: the format of MNIST and Fashion-MNIST (big-endian header, then
// raw unsigned bytes), read plain or gzip-compressed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
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
/// magic number is not an IDX one, the element type is not unsigned byte, the
/// header declares more than detail::kMaxIdxElements elements, or the data
/// (after inflating) is shorter or longer than the header's dimensions say.
/// Reading stops as soon as the data goes past what the header declares, so
/// a gzip bomb or an endless device (/dev/zero) fails early.
IdxArray read_idx(const std::filesystem::path& path);

enum class IdxCompression { None, Gzip };

/// Writes `array` as an unsigned-byte IDX file (magic 0x0000080N with N =
/// dims.size()); throws burn::Error("write_idx", ...) when dims do not match
/// the data or the file cannot be written.
void write_idx(const std::filesystem::path& path, const IdxArray& array,
               IdxCompression compression = IdxCompression::None);

namespace detail {

/// The most elements an IDX file may declare (4 GiB of bytes, far above
/// MNIST's 47 MB of training images): a larger count is a corrupt header.
inline constexpr std::size_t kMaxIdxElements = std::size_t{1} << 32;

/// read_idx on bytes in memory, plain or gzip; errors name `source` where
/// read_idx names the file. Internal: the entry point of the IDX fuzz target.
IdxArray parse_idx(std::span<const std::uint8_t> bytes, std::string_view source);

}  // namespace detail

}  // namespace burn::data
