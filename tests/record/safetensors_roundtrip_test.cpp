// Safetensors round trips, exact bytes and the writer's input checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include <burn/record/safetensors.hpp>

#include "record_test_util.hpp"

namespace burn::record {
namespace {

using test::expect_error;
using test::TempDir;
using test::to_bytes;

std::map<std::string, TensorData> every_dtype() {
  std::map<std::string, TensorData> t;
  t.emplace("f64", TensorData(std::vector<double>{1.5, -2.0, std::numeric_limits<double>::max(), -0.0, 1e-300, 7},
                              Shape{2, 3}));
  t.emplace("f32", TensorData(std::vector<float>{0.25f, -1e30f, std::numeric_limits<float>::infinity()}));
  t.emplace("f16", TensorData(std::vector<f16>{f16(1.0f), f16(-0.5f), f16::from_bits(0x7bff)}));
  t.emplace("bf16", TensorData(std::vector<bf16>{bf16(3.0f), bf16::from_bits(0x7f80), bf16(-2.5f), bf16(0.0f)},
                               Shape{2, 1, 2}));
  t.emplace("i64", TensorData(std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), 0, 42}));
  t.emplace("i32", TensorData(std::vector<std::int32_t>{-1, std::numeric_limits<std::int32_t>::max()}));
  t.emplace("i16", TensorData(std::vector<std::int16_t>{-32768, 32767, 1}));
  t.emplace("i8", TensorData(std::vector<std::int8_t>{-128, 127}));
  t.emplace("u64", TensorData(std::vector<std::uint64_t>{std::numeric_limits<std::uint64_t>::max(), 1}));
  t.emplace("u32", TensorData(std::vector<std::uint32_t>{4000000000u}));
  t.emplace("u16", TensorData(std::vector<std::uint16_t>{65535, 0, 3}));
  t.emplace("u8", TensorData(std::vector<std::uint8_t>{255, 0, 17, 4}, Shape{2, 2}));
  t.emplace("bool", TensorData(std::vector<bool>{true, false, true}));
  return t;
}

TEST(Safetensors, RoundTripsEveryDTypeThroughAFile) {
  TempDir dir;
  const auto tensors = every_dtype();
  save_safetensors(dir / "all.safetensors", tensors);
  const SafetensorsFile loaded = load_safetensors(dir / "all.safetensors");
  EXPECT_EQ(loaded.tensors, tensors);
  EXPECT_TRUE(loaded.metadata.empty());
}

TEST(Safetensors, RoundTripsEveryDTypeInMemory) {
  const auto tensors = every_dtype();
  const auto bytes = serialize_safetensors(tensors);
  EXPECT_EQ(deserialize_safetensors(bytes).tensors, tensors);
  // Same input, same bytes: the output does not depend on anything else.
  EXPECT_EQ(serialize_safetensors(tensors), bytes);
}

TEST(Safetensors, RoundTripsEmptyTensorsAndScalars) {
  std::map<std::string, TensorData> t;
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16, DType::I8,
                  DType::U64, DType::U32, DType::U16, DType::U8, DType::Bool}) {
    const std::string name(safetensors_dtype_name(d));
    t.emplace("empty_" + name, TensorData::zeros(Shape{0, 3}, d));
    t.emplace("empty1_" + name, TensorData::zeros(Shape{0}, d));
  }
  t.emplace("scalar_as_1", TensorData(std::vector<float>{42.0f}, Shape{1}));
  t.emplace("scalar_rank0", TensorData(std::vector<std::int64_t>{-3}, Shape{}));
  const auto loaded = deserialize_safetensors(serialize_safetensors(t));
  EXPECT_EQ(loaded.tensors, t);
  EXPECT_EQ(loaded.tensors.at("scalar_as_1").shape(), (Shape{1}));
  EXPECT_EQ(loaded.tensors.at("scalar_rank0").shape().rank(), 0u);
  EXPECT_EQ(loaded.tensors.at("empty_F32").shape(), (Shape{0, 3}));
  // A file with no tensors at all is valid too.
  EXPECT_TRUE(deserialize_safetensors(serialize_safetensors({})).tensors.empty());
}

TEST(Safetensors, RoundTripsMetadata) {
  TempDir dir;
  const std::map<std::string, std::string> meta{{"format", "pt"},
                                                {"epoch", "12"},
                                                {"quote\"back\\slash", "line\nbreak \xc3\xa9"},
                                                {"empty", ""}};
  const std::map<std::string, TensorData> t{{"w", TensorData(std::vector<float>{1, 2})}};
  save_safetensors(dir / "m.safetensors", t, meta);
  const auto loaded = load_safetensors(dir / "m.safetensors");
  EXPECT_EQ(loaded.metadata, meta);
  EXPECT_EQ(loaded.tensors, t);
}

TEST(Safetensors, WritesTheExactBytesOfTheReferenceFormat) {
  // Header {"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} is 54
  // bytes, padded with 2 spaces to 56 (0x38) so the data starts 8-aligned;
  // then 1.0f and 2.0f little-endian. Python's safetensors writes the same.
  const std::string expected = std::string("\x38\0\0\0\0\0\0\0", 8) +
                               R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})" + "  " +
                               std::string("\0\0\x80\x3f\0\0\0\x40", 8);
  ASSERT_EQ(expected.size(), 72u);
  const auto bytes = serialize_safetensors({{"x", TensorData(std::vector<float>{1.0f, 2.0f})}});
  EXPECT_EQ(bytes, to_bytes(expected));

  // With metadata: written first, padded with 1 space to 80 (0x50).
  const std::string with_meta = std::string("\x50\0\0\0\0\0\0\0", 8) +
                                R"({"__metadata__":{"a":"b"},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})" +
                                " " + std::string("\0\0\x80\x3f\0\0\0\x40", 8);
  EXPECT_EQ(serialize_safetensors({{"x", TensorData(std::vector<float>{1.0f, 2.0f})}}, {{"a", "b"}}),
            to_bytes(with_meta));
}

TEST(Safetensors, SortsTensorsByNameInTheHeaderAndData) {
  const auto bytes = serialize_safetensors(
      {{"b", TensorData(std::vector<std::uint8_t>{2})}, {"a", TensorData(std::vector<std::uint8_t>{1})}});
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_LT(text.find("\"a\""), text.find("\"b\""));
  EXPECT_EQ(text.substr(text.size() - 2), std::string("\x01\x02", 2));
}

TEST(Safetensors, TensorLookupAndDTypeConversion) {
  const auto file =
      deserialize_safetensors(serialize_safetensors({{"w", TensorData(std::vector<float>{1.5f, -2.0f})}}));
  EXPECT_EQ(file.tensor("w").to_vec<float>(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(file.tensor("w", DType::F64).to_vec<double>(), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(file.tensor("w", DType::BF16).dtype(), DType::BF16);
  EXPECT_EQ(file.tensor("w", DType::I32).to_vec<std::int32_t>(), (std::vector<std::int32_t>{1, -2}));
  expect_error([&] { (void)file.tensor("missing"); }, {"[SafetensorsFile::tensor]", "'missing'", "w"});
}

TEST(Safetensors, WriterRejectsBadInput) {
  expect_error(
      [] {
        (void)serialize_safetensors({{"__metadata__", TensorData(std::vector<float>{1})}});
      },
      {"[serialize_safetensors]", "__metadata__"});
  expect_error(
      [] {
        (void)serialize_safetensors({{"bad\xff", TensorData(std::vector<float>{1})}});
      },
      {"[serialize_safetensors]", "tensor name", "not valid UTF-8"});
  expect_error([] { (void)serialize_safetensors({}, {{"k", "\xc3"}}); }, {"metadata value", "not valid UTF-8"});
  expect_error([] { (void)serialize_safetensors({{"d", TensorData()}}); }, {"tensor \"d\"", "holds 0 bytes"});
}

TEST(Safetensors, WriterStoresBoolsAsZeroOrOne) {
  // Raw bytes may hold any non-zero value for true; the file holds 1.
  const TensorData raw({std::byte(0), std::byte(7)}, Shape{2}, DType::Bool);
  const auto loaded = deserialize_safetensors(serialize_safetensors({{"m", raw}}));
  EXPECT_EQ(loaded.tensor("m").to_vec<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(loaded.tensor("m").bytes()[1], std::byte(1));
}

}  // namespace
}  // namespace burn::record
