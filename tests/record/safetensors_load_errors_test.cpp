// Every way a safetensors file can be malformed gives a clear burn::Error.
#include <gtest/gtest.h>

#include <iostream>

#include <unistd.h>

#include <burn/record/safetensors.hpp>

#include "record_test_util.hpp"

namespace burn::record {
namespace {

using test::expect_error;
using test::raw_file;
using test::TempDir;
using test::write_bytes;

std::vector<std::byte> zeros(std::size_t n) { return std::vector<std::byte>(n); }

// Writes `bytes` to a file and expects load_safetensors to name the file and
// the problem.
void expect_load_error(const std::vector<std::byte>& bytes, std::initializer_list<std::string_view> fragments) {
  TempDir dir;
  const auto path = dir / "bad.safetensors";
  write_bytes(path, bytes);
  const std::string prefix = "[load_safetensors] " + path.string() + ": ";
  expect_error([&] { (void)load_safetensors(path); }, {prefix});
  expect_error([&] { (void)load_safetensors(path); }, fragments);
  // The in-memory reader reports the same problem under its own name.
  expect_error([&] { (void)deserialize_safetensors(bytes); }, {"[deserialize_safetensors] "});
  expect_error([&] { (void)deserialize_safetensors(bytes); }, fragments);
}

constexpr const char* kF32x1 = R"({"dtype":"F32","shape":[1],"data_offsets":)";

std::string tensor(const char* name, const char* offsets) {
  std::string s = "\"";
  s.append(name).append("\":").append(kF32x1).append(offsets).append("}");
  return s;
}

// {entry,entry,...}, built with append: GCC 12 warns (-Wrestrict, a false
// positive) about "{" + std::string temporaries.
std::string header(std::initializer_list<std::string> entries) {
  std::string s = "{";
  for (const auto& e : entries) s.append(s.size() > 1 ? "," : "").append(e);
  return s.append("}");
}

TEST(SafetensorsLoadErrors, MissingFile) {
  TempDir dir;
  const auto path = dir / "nope.safetensors";
  expect_error([&] { (void)load_safetensors(path); }, {"[load_safetensors] " + path.string() + ": ", "no such file"});
}

TEST(SafetensorsLoadErrors, DirectoryInsteadOfFile) {
  TempDir dir;
  expect_error([&] { (void)load_safetensors(dir.path()); }, {"[load_safetensors]", "is a directory"});
}

TEST(SafetensorsLoadErrors, UnreadableFile) {
  TempDir dir;
  const auto path = dir / "locked.safetensors";
  save_safetensors(path, {{"w", TensorData(std::vector<float>{1})}});
  std::filesystem::permissions(path, std::filesystem::perms::none);
  if (::access(path.c_str(), R_OK) == 0) {
    // Root reads regardless of permission bits.
    std::cout << "[   NOTE   ] running as root: a mode-000 file is still readable, so this check is not run\n";
    return;
  }
  expect_error([&] { (void)load_safetensors(path); },
               {"[load_safetensors] " + path.string() + ": ", "cannot open the file for reading", "Permission denied"});
}

TEST(SafetensorsLoadErrors, TooShort) {
  expect_load_error({std::byte(1), std::byte(0), std::byte(0)}, {"too short", "3 bytes"});
  expect_load_error({}, {"too short", "0 bytes"});
}

TEST(SafetensorsLoadErrors, HeaderLengthBeyondTheFile) {
  auto bytes = raw_file("{}");
  bytes[0] = std::byte(200);
  expect_load_error(bytes, {"header length 200 runs past the end"});
  auto huge = raw_file("{}");
  huge[7] = std::byte(0xff);  // ~2^64: refused by the size limit before anything else
  expect_load_error(huge, {"header length 18374686479671623682 exceeds the limit of 100000000 bytes"});
}

TEST(SafetensorsLoadErrors, InvalidJson) {
  expect_load_error(raw_file(R"({"x":)"), {"header is not valid JSON"});
  expect_load_error(raw_file("\xff\xfe"), {"header is not valid JSON"});
  expect_load_error(raw_file("[1, 2]"), {"must be a JSON object", "array"});
}

TEST(SafetensorsLoadErrors, UnknownDType) {
  expect_load_error(raw_file(R"({"x":{"dtype":"F8_E8M0","shape":[1],"data_offsets":[0,1]}})", zeros(1)),
                    {"tensor \"x\" has unknown dtype \"F8_E8M0\"", "supported: F64", "F8_E4M3 F8_E5M2"});
  expect_load_error(raw_file(R"({"x":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}})", zeros(4)),
                    {"unknown dtype \"f32\""});
}

TEST(SafetensorsLoadErrors, MalformedEntries) {
  expect_load_error(raw_file(R"({"x":{"shape":[1],"data_offsets":[0,4]}})", zeros(4)), {"no \"dtype\" field"});
  expect_load_error(raw_file(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", zeros(4)),
                    {"shape [-1] must hold non-negative integers"});
  expect_load_error(raw_file(R"({"x":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})", zeros(4)),
                    {"must hold non-negative integers"});
  expect_load_error(raw_file(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})", zeros(8)),
                    {"\"data_offsets\" must be [begin, end]"});
  expect_load_error(raw_file(R"({"x":[1]})"), {"tensor \"x\" must be described by an object"});
  expect_load_error(raw_file(R"({"__metadata__":{"k":1}})"), {"metadata value of key \"k\" must be a string"});
  expect_load_error(raw_file(R"({"__metadata__":[]})"), {"\"__metadata__\" must be an object"});
  expect_load_error(
      raw_file(R"({"b":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", {std::byte(1), std::byte(2)}),
      {"BOOL tensor \"b\" holds the byte 2 at element 1"});
}

TEST(SafetensorsLoadErrors, OffsetsOutOfRange) {
  expect_load_error(raw_file(header({tensor("x", "[0,4]")}), zeros(3)),
                    {"tensor \"x\" (F32 [1])", "run past the data buffer of 3 bytes"});
  expect_load_error(raw_file(header({tensor("x", "[4,0]")}), zeros(4)), {"end before they begin"});
}

TEST(SafetensorsLoadErrors, OffsetsNotMatchingShapeTimesDTypeSize) {
  expect_load_error(raw_file(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", zeros(8)),
                    {"tensor \"x\" (F32 [3])", "span 8 bytes but the shape and dtype need 12"});
  expect_load_error(
      raw_file(R"({"x":{"dtype":"F64","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})", zeros(8)),
      {"overflows 64 bits"});
}

TEST(SafetensorsLoadErrors, OverlappingTensors) {
  expect_load_error(raw_file(header({tensor("a", "[0,4]"), tensor("b", "[2,6]")}), zeros(6)),
                    {"tensors \"a\" and \"b\" overlap"});
  expect_load_error(raw_file(header({tensor("a", "[0,4]"), tensor("b", "[0,4]")}), zeros(4)), {"overlap"});
}

TEST(SafetensorsLoadErrors, GapBetweenTensors) {
  expect_load_error(raw_file(header({tensor("a", "[0,4]"), tensor("b", "[6,10]")}), zeros(10)),
                    {"bytes [4, 6) of the data buffer belong to no tensor"});
}

TEST(SafetensorsLoadErrors, DuplicateNames) {
  expect_load_error(raw_file(header({tensor("a", "[0,4]"), tensor("a", "[4,8]")}), zeros(8)),
                    {"duplicate tensor name \"a\""});
  expect_load_error(raw_file(R"({"__metadata__":{"k":"1","k":"2"}})"), {"duplicate key \"k\""});
}

TEST(SafetensorsLoadErrors, TrailingGarbage) {
  expect_load_error(raw_file(header({tensor("a", "[0,4]")}), zeros(7)),
                    {"trailing garbage: 3 bytes after the last tensor's data"});
  expect_load_error(raw_file("{}", zeros(1)), {"trailing garbage: 1 bytes"});
}

TEST(SafetensorsLoadErrors, AcceptsUnpaddedHeadersAndUnsortedOffsets) {
  // Other writers need not pad or order entries by offset; both are valid.
  const auto file = deserialize_safetensors(raw_file(header({tensor("a", "[4,8]"), tensor("b", "[0,4]")}),
                                                     {std::byte(0), std::byte(0), std::byte(0x80), std::byte(0x3f),
                                                      std::byte(0), std::byte(0), std::byte(0), std::byte(0x40)}));
  EXPECT_EQ(file.tensor("a").to_vec<float>(), std::vector<float>{2.0f});
  EXPECT_EQ(file.tensor("b").to_vec<float>(), std::vector<float>{1.0f});
}

}  // namespace
}  // namespace burn::record
