// IDX reading and writing: plain and gzip round trips, and every error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <burn/data/idx.hpp>

#include "temp_dir.hpp"

namespace {

using burn::data::IdxArray;
using burn::data::IdxCompression;
using burn::data::read_idx;
using burn::data::write_idx;
using burn::testing::error_message;
using burn::testing::TempDir;
using burn::testing::write_bytes;

IdxArray sample(std::vector<std::size_t> dims) {
  IdxArray a;
  a.dims = std::move(dims);
  a.data.resize(a.num_elements());
  for (std::size_t i = 0; i < a.data.size(); ++i) a.data[i] = static_cast<std::uint8_t>((i * 37 + 11) % 256);
  return a;
}

TEST(Idx, ReadsHandWrittenPlainFile) {
  TempDir dir;
  // Magic 0x00000801 (1-D unsigned bytes), 3 items: 5 6 255.
  write_bytes(dir / "labels", {0, 0, 0x08, 0x01, 0, 0, 0, 3, 5, 6, 255});
  const IdxArray a = read_idx(dir / "labels");
  EXPECT_EQ(a.dims, (std::vector<std::size_t>{3}));
  EXPECT_EQ(a.data, (std::vector<std::uint8_t>{5, 6, 255}));
}

TEST(Idx, PlainRoundTripWritesBigEndianHeader) {
  TempDir dir;
  const IdxArray a = sample({3, 300, 2});
  write_idx(dir / "a.idx", a);
  const auto bytes = burn::testing::read_bytes(dir / "a.idx");
  ASSERT_EQ(bytes.size(), 4 + 12 + a.data.size());
  EXPECT_EQ((std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + 16)),
            (std::vector<std::uint8_t>{0, 0, 0x08, 0x03, 0, 0, 0, 3, 0, 0, 0x01, 0x2c, 0, 0, 0, 2}));
  const IdxArray b = read_idx(dir / "a.idx");
  EXPECT_EQ(b.dims, a.dims);
  EXPECT_EQ(b.data, a.data);
}

TEST(Idx, GzipRoundTrip) {
  TempDir dir;
  const IdxArray a = sample({50, 28, 28});
  // The reader detects gzip from the content, whatever the name says.
  write_idx(dir / "images.idx", a, IdxCompression::Gzip);
  const auto bytes = burn::testing::read_bytes(dir / "images.idx");
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(bytes[0], 0x1f);
  EXPECT_EQ(bytes[1], 0x8b);
  const IdxArray b = read_idx(dir / "images.idx");
  EXPECT_EQ(b.dims, a.dims);
  EXPECT_EQ(b.data, a.data);
}

TEST(Idx, EmptyArrayRoundTrip) {
  TempDir dir;
  const IdxArray a = sample({0, 28, 28});
  write_idx(dir / "e.gz", a, IdxCompression::Gzip);
  const IdxArray b = read_idx(dir / "e.gz");
  EXPECT_EQ(b.dims, a.dims);
  EXPECT_TRUE(b.data.empty());
}

TEST(Idx, MissingFileIsNamed) {
  TempDir dir;
  const auto msg = error_message([&] { read_idx(dir / "nope.gz"); });
  EXPECT_CONTAINS(msg, "[read_idx]");
  EXPECT_CONTAINS(msg, "nope.gz");
  EXPECT_CONTAINS(msg, "not found");
}

TEST(Idx, DirectoryIsRejected) {
  TempDir dir;
  EXPECT_CONTAINS(error_message([&] { read_idx(dir.path()); }), "is a directory");
}

TEST(Idx, BadMagic) {
  TempDir dir;
  write_bytes(dir / "bad", {0x12, 0x34, 0x08, 0x03, 0, 0, 0, 0});
  const auto msg = error_message([&] { read_idx(dir / "bad"); });
  EXPECT_CONTAINS(msg, "bad magic number 0x12340803");
  EXPECT_CONTAINS(msg, "0x00000803");
  EXPECT_CONTAINS(msg, (dir / "bad").string());
}

TEST(Idx, WrongElementType) {
  TempDir dir;
  write_bytes(dir / "floats", {0, 0, 0x0D, 0x01, 0, 0, 0, 1, 0, 0, 0, 0});
  const auto msg = error_message([&] { read_idx(dir / "floats"); });
  EXPECT_CONTAINS(msg, "element type 0x0d");
  EXPECT_CONTAINS(msg, "unsigned byte");
}

TEST(Idx, TooShortForMagic) {
  TempDir dir;
  write_bytes(dir / "empty", {});
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "empty"); }), "too short");
}

TEST(Idx, ZeroDimensions) {
  TempDir dir;
  write_bytes(dir / "rank0", {0, 0, 0x08, 0x00});
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "rank0"); }), "0 dimensions");
}

TEST(Idx, TruncatedHeader) {
  TempDir dir;
  write_bytes(dir / "h", {0, 0, 0x08, 0x03, 0, 0, 0, 2, 0, 0});
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "h"); }), "truncated");
}

TEST(Idx, TruncatedData) {
  TempDir dir;
  write_bytes(dir / "d", {0, 0, 0x08, 0x02, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3});
  const auto msg = error_message([&] { read_idx(dir / "d"); });
  EXPECT_CONTAINS(msg, "truncated");
  EXPECT_CONTAINS(msg, "need 4 data bytes, only 3");
}

TEST(Idx, TrailingBytes) {
  TempDir dir;
  write_bytes(dir / "t", {0, 0, 0x08, 0x01, 0, 0, 0, 1, 7, 8});
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "t"); }), "1 unexpected bytes");
}

TEST(Idx, TruncatedGzip) {
  TempDir dir;
  write_idx(dir / "x.gz", sample({20, 28, 28}), IdxCompression::Gzip);
  auto bytes = burn::testing::read_bytes(dir / "x.gz");
  for (std::size_t cut : {std::size_t{4}, bytes.size() / 2, std::size_t{12}}) {
    write_bytes(dir / "cut.gz", std::vector<std::uint8_t>(bytes.begin(), bytes.end() - static_cast<long>(cut)));
    const auto msg = error_message([&] { read_idx(dir / "cut.gz"); });
    EXPECT_CONTAINS(msg, "gzip stream is truncated") << "cut " << cut;
    EXPECT_CONTAINS(msg, "cut.gz");
  }
}

TEST(Idx, CorruptGzip) {
  TempDir dir;
  write_idx(dir / "x.gz", sample({4, 5}), IdxCompression::Gzip);
  auto bytes = burn::testing::read_bytes(dir / "x.gz");
  bytes[bytes.size() - 8] ^= 0xff;  // the CRC-32 of the trailer
  write_bytes(dir / "crc.gz", bytes);
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "crc.gz"); }), "gzip data is corrupt");
}

// A gzip member holding `data` in one stored (uncompressed) deflate block, so
// the test can wrap arbitrary bytes without zlib.
std::vector<std::uint8_t> gzip_stored(const std::vector<std::uint8_t>& data) {
  std::uint32_t crc = 0xffffffffu;
  for (auto b : data) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  crc ^= 0xffffffffu;
  const auto n = static_cast<std::uint16_t>(data.size());
  // Header: gzip magic, deflate, no flags/time, unknown OS; then one final
  // stored block with its length and the length's complement.
  const std::uint8_t head[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0x01};
  std::vector<std::uint8_t> out(std::begin(head), std::end(head));
  for (int s : {0, 8}) out.push_back(std::uint8_t(n >> s));
  for (int s : {0, 8}) out.push_back(std::uint8_t(~n >> s));
  for (auto b : data) out.push_back(b);
  for (int s : {0, 8, 16, 24}) out.push_back(std::uint8_t(crc >> s));
  for (int s : {0, 8, 16, 24}) out.push_back(std::uint8_t(data.size() >> s));
  return out;
}

TEST(Idx, GzipWrappedHeaderErrors) {
  TempDir dir;
  write_bytes(dir / "good.gz", gzip_stored({0, 0, 0x08, 0x01, 0, 0, 0, 2, 9, 4}));
  EXPECT_EQ(read_idx(dir / "good.gz").data, (std::vector<std::uint8_t>{9, 4}));
  write_bytes(dir / "magic.gz", gzip_stored({0xde, 0xad, 0x08, 0x01, 0, 0, 0, 0}));
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "magic.gz"); }), "bad magic number 0xdead0801");
  write_bytes(dir / "dtype.gz", gzip_stored({0, 0, 0x0B, 0x01, 0, 0, 0, 0}));
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "dtype.gz"); }), "element type 0x0b");
  write_bytes(dir / "short.gz", gzip_stored({0, 0, 0x08, 0x01, 0, 0, 0, 3, 1}));
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "short.gz"); }), "need 3 data bytes, only 1");
}

TEST(Idx, GzipBombStopsAtTheDeclaredSize) {
  TempDir dir;
  // A valid gzip IDX of 4 labels, then 4096 more gzip members of 1 MiB of
  // zeros each: 4 MB of file that inflate to 4 GiB, far beyond the 12 bytes
  // (8 of header, 4 of data) the header declares.
  IdxArray labels;
  labels.dims = {4};
  labels.data = {1, 2, 3, 4};
  write_idx(dir / "labels.gz", labels, IdxCompression::Gzip);
  IdxArray zeros;
  zeros.dims = {(std::size_t{1} << 20) - 8};
  zeros.data.resize(zeros.dims[0]);
  write_idx(dir / "zeros.gz", zeros, IdxCompression::Gzip);
  auto bomb = burn::testing::read_bytes(dir / "labels.gz");
  const auto member = burn::testing::read_bytes(dir / "zeros.gz");
  for (int i = 0; i < 4096; ++i) bomb.insert(bomb.end(), member.begin(), member.end());
  write_bytes(dir / "bomb.gz", bomb);
  const auto msg = error_message([&] { read_idx(dir / "bomb.gz"); });
  EXPECT_CONTAINS(msg, "[read_idx] '" + (dir / "bomb.gz").string() + "'");
  EXPECT_CONTAINS(msg,
                  "the gzip data inflates to more than the 12 bytes its IDX header declares (8 bytes of header "
                  "and 4 of data); the file is corrupt or a decompression bomb");
  // The bytes-level entry point behaves the same.
  EXPECT_CONTAINS(error_message([&] { burn::data::detail::parse_idx(bomb, "bomb"); }),
                  "[read_idx] 'bomb': the gzip data inflates to more than the 12 bytes");
}

TEST(Idx, HeaderDeclaringTooManyElementsIsRefused) {
  TempDir dir;
  // 65536 x 65536 x 2 = 2^33 bytes: more than read_idx accepts, refused from
  // the header alone, plain or gzip.
  const std::vector<std::uint8_t> header{0, 0, 0x08, 0x03, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2};
  write_bytes(dir / "huge", header);
  write_bytes(dir / "huge.gz", gzip_stored(header));
  for (const char* name : {"huge", "huge.gz"})
    EXPECT_CONTAINS(error_message([&] { read_idx(dir / name); }),
                    "the header declares dimensions [65536, 65536, 2], 8589934592 elements, more than the "
                    "4294967296 this reader accepts");
  // Dimensions whose product overflows 64 bits.
  const std::vector<std::uint8_t> wrap{0,    0,    0x08, 0x03, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  write_bytes(dir / "wrap", wrap);
  EXPECT_CONTAINS(error_message([&] { read_idx(dir / "wrap"); }), "over 2^64 elements");
}

TEST(Idx, EndlessDeviceEndsInAnError) {
  if (::access("/dev/zero", R_OK) != 0) GTEST_SKIP() << "no readable /dev/zero";
  // Zeros are no IDX magic: the reader stops at the header instead of
  // reading the device forever.
  EXPECT_CONTAINS(error_message([] { read_idx("/dev/zero"); }),
                  "[read_idx] '/dev/zero': element type 0x00 (magic 0x00000000) is not supported");
}

TEST(Idx, BytesEntryPointMatchesTheFileReader) {
  const std::vector<std::uint8_t> plain{0, 0, 0x08, 0x02, 0, 0, 0, 2, 0, 0, 0, 1, 7, 9};
  for (const auto& bytes : {plain, gzip_stored(plain)}) {
    const IdxArray a = burn::data::detail::parse_idx(bytes, "memory");
    EXPECT_EQ(a.dims, (std::vector<std::size_t>{2, 1}));
    EXPECT_EQ(a.data, (std::vector<std::uint8_t>{7, 9}));
  }
  auto longer = plain;
  longer.push_back(1);
  EXPECT_CONTAINS(error_message([&] { burn::data::detail::parse_idx(longer, "memory"); }),
                  "[read_idx] 'memory': has 1 unexpected bytes after the 2 data bytes");
}

TEST(Idx, WriteRejectsMismatchedData) {
  TempDir dir;
  IdxArray a = sample({2, 3});
  a.data.pop_back();
  EXPECT_CONTAINS(error_message([&] { write_idx(dir / "w", a); }), "[write_idx]");
  a.dims.clear();
  EXPECT_CONTAINS(error_message([&] { write_idx(dir / "w", a); }), "1 to 255 dimensions");
}

}  // namespace
