// IDX reading and writing; gzip goes through zlib.
#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <burn/data/idx.hpp>
#include <burn/error.hpp>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <system_error>

namespace burn::data {
namespace {

constexpr std::uint8_t kUnsignedByte = 0x08;
constexpr std::size_t kMaxDims = 255;  // the header stores the rank in one byte

[[noreturn]] void fail(const char* op, const std::filesystem::path& path, const std::string& what) {
  throw Error(op, fmt::format("'{}': {}", path.string(), what));
}

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail("read_idx", path, "file not found");
  if (std::filesystem::is_directory(path, ec)) fail("read_idx", path, "is a directory, not an IDX file");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("read_idx", path, "cannot be opened for reading (check its permissions)");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail("read_idx", path, "an I/O error occurred while reading it");
  return bytes;
}

bool is_gzip(const std::vector<std::uint8_t>& bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// Inflates every gzip member in `in` (concatenated members are legal gzip).
std::vector<std::uint8_t> gunzip(const std::vector<std::uint8_t>& in, const std::filesystem::path& path) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) fail("read_idx", path, "zlib could not be initialised");
  std::vector<std::uint8_t> out;
  std::array<std::uint8_t, 1 << 16> chunk{};
  std::size_t pos = 0;
  int rc = Z_OK;
  while (true) {
    // zlib counts in uInt; feed large files in pieces it can represent.
    const std::size_t avail = std::min<std::size_t>(in.size() - pos, std::numeric_limits<uInt>::max());
    zs.next_in = const_cast<Bytef*>(in.data() + pos);
    zs.avail_in = static_cast<uInt>(avail);
    zs.next_out = chunk.data();
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    pos += avail - zs.avail_in;
    out.insert(out.end(), chunk.data(), chunk.data() + (chunk.size() - zs.avail_out));
    if (rc == Z_STREAM_END) {
      if (pos < in.size() && in.size() - pos >= 2 && in[pos] == 0x1f && in[pos + 1] == 0x8b) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR) {  // no progress possible: the input ran out first
      inflateEnd(&zs);
      fail("read_idx", path, "the gzip stream is truncated (the file ends before the compressed data does)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string msg = zs.msg ? zs.msg : "unknown zlib error";
      inflateEnd(&zs);
      fail("read_idx", path, fmt::format("the gzip data is corrupt ({})", msg));
    }
  }
  inflateEnd(&zs);
  return out;
}

std::uint32_t read_be32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

void put_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

IdxArray parse(const std::vector<std::uint8_t>& bytes, const std::filesystem::path& path) {
  if (bytes.size() < 4)
    fail("read_idx", path,
         fmt::format("is too short for an IDX header ({} bytes; the magic number alone is 4)", bytes.size()));
  const std::uint32_t magic = read_be32(bytes.data());
  if (bytes[0] != 0 || bytes[1] != 0)
    fail("read_idx", path,
         fmt::format("bad magic number 0x{:08x}: not an IDX file (expected 0x00000803 for images, "
                     "0x00000801 for labels)",
                     magic));
  if (bytes[2] != kUnsignedByte)
    fail("read_idx", path,
         fmt::format("element type 0x{:02x} (magic 0x{:08x}) is not supported; only 0x08 (unsigned byte) is", bytes[2],
                     magic));
  const std::size_t rank = bytes[3];
  if (rank == 0) fail("read_idx", path, "the header declares 0 dimensions");
  const std::size_t header = 4 + 4 * rank;
  if (bytes.size() < header)
    fail("read_idx", path,
         fmt::format("is truncated: the header of a {}-dimensional IDX file needs {} bytes, the file has {}", rank,
                     header, bytes.size()));
  IdxArray array;
  std::size_t count = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    const std::size_t d = read_be32(bytes.data() + 4 + 4 * i);
    if (d != 0 && count > std::numeric_limits<std::size_t>::max() / d)
      fail("read_idx", path, "the dimensions in the header overflow the addressable size");
    count *= d;
    array.dims.push_back(d);
  }
  const std::size_t payload = bytes.size() - header;
  if (payload < count)
    fail("read_idx", path,
         fmt::format("is truncated: the header's dimensions need {} data bytes, only {} follow the header", count,
                     payload));
  if (payload > count)
    fail("read_idx", path,
         fmt::format("has {} unexpected bytes after the {} data bytes the header's dimensions describe",
                     payload - count, count));
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return array;
}

std::vector<std::uint8_t> gzip(const std::vector<std::uint8_t>& in, const std::filesystem::path& path) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fail("write_idx", path, "zlib could not be initialised");
  std::vector<std::uint8_t> out;
  std::array<std::uint8_t, 1 << 16> chunk{};
  std::size_t pos = 0;
  int rc = Z_OK;
  do {
    const std::size_t avail = std::min<std::size_t>(in.size() - pos, std::numeric_limits<uInt>::max());
    zs.next_in = const_cast<Bytef*>(in.data() + pos);
    zs.avail_in = static_cast<uInt>(avail);
    const bool last = pos + avail == in.size();
    zs.next_out = chunk.data();
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
    pos += avail - zs.avail_in;
    out.insert(out.end(), chunk.data(), chunk.data() + (chunk.size() - zs.avail_out));
  } while (rc != Z_STREAM_END && rc != Z_STREAM_ERROR);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) fail("write_idx", path, "zlib failed to compress the data");
  return out;
}

}  // namespace

std::size_t IdxArray::num_elements() const noexcept {
  std::size_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

IdxArray read_idx(const std::filesystem::path& path) {
  std::vector<std::uint8_t> bytes = read_file(path);
  if (is_gzip(bytes)) bytes = gunzip(bytes, path);
  return parse(bytes, path);
}

void write_idx(const std::filesystem::path& path, const IdxArray& array, IdxCompression compression) {
  if (array.dims.empty() || array.dims.size() > kMaxDims)
    fail("write_idx", path, fmt::format("an IDX file has 1 to {} dimensions, got {}", kMaxDims, array.dims.size()));
  for (auto d : array.dims)
    if (d > std::numeric_limits<std::uint32_t>::max())
      fail("write_idx", path, fmt::format("dimension {} does not fit the header's 32 bits", d));
  if (array.num_elements() != array.data.size())
    fail("write_idx", path,
         fmt::format("the dimensions describe {} elements but the data has {}", array.num_elements(),
                     array.data.size()));
  std::vector<std::uint8_t> bytes{0, 0, kUnsignedByte, static_cast<std::uint8_t>(array.dims.size())};
  for (auto d : array.dims) put_be32(bytes, static_cast<std::uint32_t>(d));
  bytes.insert(bytes.end(), array.data.begin(), array.data.end());
  if (compression == IdxCompression::Gzip) bytes = gzip(bytes, path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail("write_idx", path, "cannot be opened for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) fail("write_idx", path, "an I/O error occurred while writing it");
}

}  // namespace burn::data
