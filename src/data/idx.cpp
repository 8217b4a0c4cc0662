// IDX reading and writing; gzip goes through zlib.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <burn/data/idx.hpp>
#include <burn/error.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>

namespace burn::data {
namespace {

constexpr std::uint8_t kUnsignedByte = 0x08;
constexpr std::size_t kMaxDims = 255;  // the header stores the rank in one byte
using detail::kMaxIdxElements;

[[noreturn]] void fail(const char* op, const std::filesystem::path& path, const std::string& what) {
  throw Error(op, fmt::format("'{}': {}", path.string(), what));
}

std::uint32_t read_be32(const std::uint8_t* p) {
  return (std::uint32_t(p[0]) << 24) | (std::uint32_t(p[1]) << 16) | (std::uint32_t(p[2]) << 8) | std::uint32_t(p[3]);
}

void put_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

// The next bytes of the input (a file or a buffer), up to `size`; 0 at the end.
using ReadFn = std::function<std::size_t(std::uint8_t* out, std::size_t size)>;

// A small window over the input, so the parser can look ahead a few bytes
// (the gzip magic) without reading the whole input first.
class Input {
 public:
  explicit Input(ReadFn read) : read_(std::move(read)) {}
  // Buffers at least `n` bytes (n <= the window) unless the input ends first;
  // returns how many are buffered.
  std::size_t fill(std::size_t n) {
    if (len_ - pos_ >= n) return len_ - pos_;
    std::memmove(buf_.data(), buf_.data() + pos_, len_ - pos_);
    len_ -= pos_;
    pos_ = 0;
    while (len_ < n && !eof_) {
      const std::size_t r = read_(buf_.data() + len_, buf_.size() - len_);
      if (r == 0) eof_ = true;
      len_ += r;
    }
    return len_ - pos_;
  }
  const std::uint8_t* data() const noexcept { return buf_.data() + pos_; }
  std::size_t size() const noexcept { return len_ - pos_; }
  void consume(std::size_t n) noexcept { pos_ += n; }

 private:
  ReadFn read_;
  std::array<std::uint8_t, 1 << 16> buf_{};
  std::size_t pos_ = 0, len_ = 0;
  bool eof_ = false;
};

// Whether the input's next bytes are the gzip magic (the start of a file or
// of a further concatenated member).
bool starts_gzip_member(Input& in) { return in.fill(2) >= 2 && in.data()[0] == 0x1f && in.data()[1] == 0x8b; }

// Collects the IDX bytes as they arrive and checks the header as soon as it
// is complete, so the total size is known before the data is stored: input
// beyond it (a gzip bomb, an endless device) is never kept.
class IdxBuilder {
 public:
  explicit IdxBuilder(std::string_view source) : source_(source) {}

  // Appends what fits the size the header declares; returns false (and keeps
  // nothing more) once the input goes past it.
  bool append(const std::uint8_t* p, std::size_t n) {
    while (n > 0) {
      if (!total_) {
        const std::size_t take = std::min(n, header_wanted() - bytes_.size());
        bytes_.insert(bytes_.end(), p, p + take);
        p += take;
        n -= take;
        check_header();
        continue;
      }
      const std::size_t room = *total_ - bytes_.size();
      bytes_.insert(bytes_.end(), p, p + std::min(n, room));
      if (n > room) return false;
      n = 0;
    }
    return true;
  }

  IdxArray finish() {
    if (!total_) check_header(true);
    if (bytes_.size() < *total_)
      fail(fmt::format("is truncated: the header's dimensions need {} data bytes, only {} follow the header",
                       *total_ - header_, bytes_.size() - header_));
    IdxArray array;
    array.dims = std::move(dims_);
    array.data.assign(bytes_.begin() + static_cast<std::ptrdiff_t>(header_), bytes_.end());
    return array;
  }

  std::size_t header_size() const noexcept { return header_; }
  std::size_t total_size() const noexcept { return total_.value_or(0); }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error("read_idx", fmt::format("'{}': {}", source_, what));
  }

 private:
  // Bytes of header needed so far: the 4-byte magic, then 4 per dimension.
  std::size_t header_wanted() const noexcept { return bytes_.size() < 4 ? 4 : 4 + 4 * std::size_t{bytes_[3]}; }

  // Checks what has arrived of the header; at the end of the input (`final`)
  // a short header is an error, otherwise it is only incomplete.
  void check_header(bool final = false) {
    if (bytes_.size() < 4) {
      if (final)
        fail(fmt::format("is too short for an IDX header ({} bytes; the magic number alone is 4)", bytes_.size()));
      return;
    }
    const std::uint32_t magic = read_be32(bytes_.data());
    if (bytes_[0] != 0 || bytes_[1] != 0)
      fail(
          fmt::format("bad magic number 0x{:08x}: not an IDX file (expected 0x00000803 for images, "
                      "0x00000801 for labels)",
                      magic));
    if (bytes_[2] != kUnsignedByte)
      fail(fmt::format("element type 0x{:02x} (magic 0x{:08x}) is not supported; only 0x08 (unsigned byte) is",
                       bytes_[2], magic));
    const std::size_t rank = bytes_[3];
    if (rank == 0) fail("the header declares 0 dimensions");
    const std::size_t header = 4 + 4 * rank;
    if (bytes_.size() < header) {
      if (final)
        fail(fmt::format("is truncated: the header of a {}-dimensional IDX file needs {} bytes, the file has {}", rank,
                         header, bytes_.size()));
      return;
    }
    std::size_t count = 1;
    bool overflow = false;
    for (std::size_t i = 0; i < rank; ++i) {
      const std::size_t d = read_be32(bytes_.data() + 4 + 4 * i);
      overflow = overflow || __builtin_mul_overflow(count, d, &count);
      dims_.push_back(d);
    }
    if (overflow || count > kMaxIdxElements)
      fail(
          fmt::format("the header declares dimensions [{}], {} elements, more than the {} this reader accepts "
                      "(the file is corrupt or not IDX)",
                      fmt::join(dims_, ", "), overflow ? "over 2^64" : std::to_string(count), kMaxIdxElements));
    header_ = header;
    total_ = header + count;
  }

  std::string source_;
  std::vector<std::uint8_t> bytes_;  // the header, then the data
  std::vector<std::size_t> dims_;
  std::size_t header_ = 0;
  std::optional<std::size_t> total_;  // header + data bytes, once the header is known
};

// Frees the inflate state on every path, exceptions included.
struct Inflater {
  z_stream zs{};
  bool ready = false;
  ~Inflater() {
    if (ready) inflateEnd(&zs);
  }
};

// Inflates every gzip member of the input (concatenated members are legal
// gzip; bytes after the last member that do not start another are ignored,
// as gzip does) into `out`, stopping as soon as the output exceeds the size
// the IDX header declares.
void gunzip_into(Input& in, IdxBuilder& out) {
  Inflater inf;
  if (inflateInit2(&inf.zs, 15 + 16) != Z_OK) out.fail("zlib could not be initialised");
  inf.ready = true;
  std::array<std::uint8_t, 1 << 16> chunk{};
  while (true) {
    if (in.fill(1) == 0) out.fail("the gzip stream is truncated (the file ends before the compressed data does)");
    const std::size_t avail = in.size();
    inf.zs.next_in = const_cast<Bytef*>(in.data());
    inf.zs.avail_in = static_cast<uInt>(avail);
    inf.zs.next_out = chunk.data();
    inf.zs.avail_out = static_cast<uInt>(chunk.size());
    const int rc = inflate(&inf.zs, Z_NO_FLUSH);
    const std::size_t consumed = avail - inf.zs.avail_in, produced = chunk.size() - inf.zs.avail_out;
    in.consume(consumed);
    if (!out.append(chunk.data(), produced))
      out.fail(
          fmt::format("the gzip data inflates to more than the {} bytes its IDX header declares ({} bytes of "
                      "header and {} of data); the file is corrupt or a decompression bomb",
                      out.total_size(), out.header_size(), out.total_size() - out.header_size()));
    if (rc == Z_STREAM_END) {
      if (starts_gzip_member(in)) {
        inflateReset(&inf.zs);
        continue;
      }
      return;
    }
    if (rc == Z_BUF_ERROR && consumed == 0 && produced == 0)  // no progress: the input ran out first
      out.fail("the gzip stream is truncated (the file ends before the compressed data does)");
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      out.fail(fmt::format("the gzip data is corrupt ({})", inf.zs.msg ? inf.zs.msg : "unknown zlib error"));
  }
}

constexpr std::size_t kUnknownSize = std::numeric_limits<std::size_t>::max();

// The IDX array in `read`'s input, plain or gzip. `size` is the input's
// length when known (a regular file, a buffer), to count trailing bytes.
IdxArray parse_input(const ReadFn& read, std::size_t size, std::string_view source) {
  Input in(read);
  IdxBuilder out(source);
  if (starts_gzip_member(in)) {
    gunzip_into(in, out);
    return out.finish();
  }
  while (in.fill(1) > 0) {
    const std::size_t n = in.size();
    const bool fits = out.append(in.data(), n);
    in.consume(n);
    if (!fits) {
      const std::size_t data = out.total_size() - out.header_size();
      if (size != kUnknownSize)
        out.fail(fmt::format("has {} unexpected bytes after the {} data bytes the header's dimensions describe",
                             size - out.total_size(), data));
      out.fail(fmt::format("has more bytes than the {} data bytes the header's dimensions describe", data));
    }
  }
  return out.finish();
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
  const std::string source = path.string();
  const auto fail = [&](const std::string& what) { ::burn::data::fail("read_idx", path, what); };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) fail("file not found");
    fail(fmt::format("cannot be opened for reading ({}; check its permissions)", std::strerror(err)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(fmt::format("cannot stat it: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) fail("is a directory, not an IDX file");
  // A pipe or a device has no size and may never end: the parser stops
  // reading once the data goes past what the header declares.
  const std::size_t size = S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) : kUnknownSize;
  const ReadFn read = [&](std::uint8_t* out, std::size_t n) -> std::size_t {
    while (true) {
      const ssize_t r = ::read(fd, out, n);
      if (r >= 0) return static_cast<std::size_t>(r);
      if (errno != EINTR) fail(fmt::format("an I/O error occurred while reading it ({})", std::strerror(errno)));
    }
  };
  return parse_input(read, size, source);
}

namespace detail {

IdxArray parse_idx(std::span<const std::uint8_t> bytes, std::string_view source) {
  std::size_t pos = 0;
  const ReadFn read = [&](std::uint8_t* out, std::size_t n) {
    const std::size_t take = std::min(n, bytes.size() - pos);
    if (take) std::memcpy(out, bytes.data() + pos, take);
    pos += take;
    return take;
  };
  return parse_input(read, bytes.size(), source);
}

}  // namespace detail

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
