// Hostile or pathological safetensors input ends in a clear burn::Error (or
// loads), never in a crash, a hang or an exhausted memory.
#include <gtest/gtest.h>

#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <burn/record/safetensors.hpp>

#include "record_test_util.hpp"

namespace burn::record {
namespace {

using test::expect_error;
using test::raw_file;
using test::TempDir;
using test::write_bytes;

// Expects both readers to reject `bytes` with every fragment in the message.
void expect_rejected(const std::vector<std::byte>& bytes, std::initializer_list<std::string_view> fragments) {
  TempDir dir;
  const auto path = dir / "hostile.safetensors";
  write_bytes(path, bytes);
  expect_error([&] { (void)load_safetensors(path); }, {"[load_safetensors] " + path.string() + ": "});
  expect_error([&] { (void)load_safetensors(path); }, fragments);
  expect_error([&] { (void)deserialize_safetensors(bytes); }, {"[deserialize_safetensors] "});
  expect_error([&] { (void)deserialize_safetensors(bytes); }, fragments);
}

std::string nested(std::size_t depth, std::string_view inner = "1") {
  return std::string(depth, '[') + std::string(inner) + std::string(depth, ']');
}

TEST(SafetensorsHostileInput, DeeplyNestedJsonIsRejectedWherever) {
  constexpr std::size_t kDeep = 100000;
  const std::string too_deep = "the header nests JSON values more than 8 levels deep (a safetensors header needs 3)";
  expect_rejected(raw_file(R"({"x":{"dtype":"F32","shape":)" + nested(kDeep) + R"(,"data_offsets":[0,4]}})"),
                  {too_deep});
  expect_rejected(raw_file(R"({"x":)" + nested(kDeep) + "}"), {too_deep});
  expect_rejected(raw_file(R"({"__metadata__":{"k":)" + nested(kDeep) + "}}"), {too_deep});
  std::string objects;
  for (std::size_t i = 0; i < kDeep; ++i) objects += R"({"a":)";
  expect_rejected(raw_file(R"({"__metadata__":{"k":)" + objects + "1" + std::string(kDeep, '}') + "}}"), {too_deep});
  // An unclosed nest is refused for its depth before the missing brackets.
  expect_rejected(raw_file(R"({"x":)" + std::string(kDeep, '[')), {too_deep});
}

TEST(SafetensorsHostileInput, NestingUpToTheLimitIsParsed) {
  // Unknown fields of an entry are ignored, however they nest within the
  // limit: the top-level object, the entry and six arrays are 8 levels.
  const auto data = std::vector<std::byte>{std::byte(0), std::byte(0), std::byte(0x80), std::byte(0x3f)};
  const auto ok = deserialize_safetensors(
      raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":)" + nested(6) + "}}", data));
  EXPECT_EQ(ok.tensor("x").to_vec<float>(), std::vector<float>{1.0f});
  expect_rejected(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":)" + nested(7) + "}}", data),
                  {"more than 8 levels deep"});
  // Depth within the limit but the wrong shape is the usual error.
  expect_rejected(raw_file(R"({"x":{"dtype":"F32","shape":[[1]],"data_offsets":[0,4]}})", data),
                  {"shape [[1]] must hold non-negative integers"});
}

// The message of the burn::Error deserialize_safetensors throws for `bytes`.
std::string deserialize_error(const std::vector<std::byte>& bytes) {
  try {
    (void)deserialize_safetensors(bytes);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a burn::Error";
  return {};
}

TEST(SafetensorsHostileInput, LongValuesAreCutShortInMessages) {
  std::string many = "[";
  for (int i = 0; i < 50000; ++i) many += "7,";
  many += "7]";
  std::string msg = deserialize_error(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":)" + many + "}}"));
  EXPECT_NE(msg.find("\"data_offsets\" must be [begin, end], found [7,7,7,"), std::string::npos) << msg;
  EXPECT_NE(msg.find(",7..."), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 400u) << msg;
  // nlohmann quotes a bad token whole; a 100000-digit number is cut too.
  msg = deserialize_error(raw_file(R"({"x":)" + std::string(100000, '7') + "}"));
  EXPECT_NE(msg.find("the header is not valid JSON: [json.exception.out_of_range.406] number overflow"),
            std::string::npos)
      << msg;
  EXPECT_LT(msg.size(), 500u) << msg;
}

TEST(SafetensorsHostileInput, HeaderLengthAboveTheLimitIsRefusedFirst) {
  // 100,000,001 bytes declared: the limit names itself, although this file
  // also ends right after the length.
  std::vector<std::byte> bytes(8);
  const std::uint64_t n = 100'000'001;
  for (int i = 0; i < 8; ++i) bytes[i] = std::byte((n >> (8 * i)) & 0xff);
  expect_rejected(bytes, {"the header length 100000001 exceeds the limit of 100000000 bytes"});
}

TEST(SafetensorsHostileInput, EndlessDeviceFailsAtItsHeader) {
  if (::access("/dev/zero", R_OK) != 0) GTEST_SKIP() << "no readable /dev/zero";
  // Eight zero bytes declare an empty header, which is not JSON: the reader
  // stops there instead of reading the endless device into memory.
  expect_error([] { (void)load_safetensors("/dev/zero"); },
               {"[load_safetensors] /dev/zero: the header is not valid JSON"});
}

// Writes `bytes` into the FIFO `path` from another thread (one write: the
// pipe buffer holds it all, so an early-closing reader cannot block it).
std::thread feed_fifo(const std::filesystem::path& path, std::vector<std::byte> bytes) {
  return std::thread([path, bytes = std::move(bytes)] {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    (void)!::write(fd, bytes.data(), bytes.size());
    ::close(fd);
  });
}

TEST(SafetensorsHostileInput, ReadsAPipeAsFarAsItsHeaderSays) {
  TempDir dir;
  const auto path = dir / "pipe.safetensors";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const auto bytes = serialize_safetensors({{"w", TensorData(std::vector<float>{1.5f, -2.0f})}}, {{"k", "v"}});
  {
    auto writer = feed_fifo(path, bytes);
    const auto file = load_safetensors(path);
    writer.join();
    EXPECT_EQ(file.tensor("w").to_vec<float>(), (std::vector<float>{1.5f, -2.0f}));
    EXPECT_EQ(file.metadata.at("k"), "v");
  }
  {
    auto longer = bytes;
    longer.resize(bytes.size() + 100, std::byte(7));
    auto writer = feed_fifo(path, longer);
    expect_error([&] { (void)load_safetensors(path); }, {"[load_safetensors] " + path.string() + ": trailing garbage",
                                                         "more than the 8 data bytes its header describes"});
    writer.join();
  }
  {
    auto shorter = bytes;
    shorter.resize(bytes.size() - 3);
    auto writer = feed_fifo(path, shorter);
    expect_error([&] { (void)load_safetensors(path); }, {"run past the data buffer of 5 bytes (truncated file?)"});
    writer.join();
  }
}

// "t<i>", built with append: GCC 12 warns (-Wrestrict, a false positive)
// about "t" + std::string temporaries.
std::string tensor_name(int i) {
  std::string s = "t";
  return s.append(std::to_string(i));
}

TEST(SafetensorsHostileInput, TwoHundredThousandTensorsLoad) {
  // Parsing must stay near-linear in the number of entries (ctest's timeout
  // guards it).
  constexpr int kCount = 200000;
  std::map<std::string, TensorData> tensors;
  for (int i = 0; i < kCount; ++i)
    tensors.emplace(tensor_name(i), TensorData(std::vector<float>{static_cast<float>(i)}));
  TempDir dir;
  const auto path = dir / "many.safetensors";
  save_safetensors(path, tensors, {{"k", "v"}});
  const auto file = load_safetensors(path);
  ASSERT_EQ(file.tensors.size(), static_cast<std::size_t>(kCount));
  for (int i : {0, 1, 77777, kCount - 1})
    EXPECT_EQ(file.tensor(tensor_name(i)).to_vec<float>(), std::vector<float>{static_cast<float>(i)});
  EXPECT_EQ(file.metadata.at("k"), "v");
}

}  // namespace
}  // namespace burn::record
