// FP8 safetensors (F8_E4M3, F8_E5M2) load as F32, every value exact.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include <burn/nn/linear.hpp>
#include <burn/record/module_record.hpp>
#include <burn/record/safetensors.hpp>

#include "record_test_util.hpp"

namespace burn::record {
namespace {

using test::raw_file;
using test::TempDir;
using test::write_bytes;

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(std::byte(v));
  return out;
}

// Bit-exact comparison, so -0 differs from +0; any NaN matches NaN.
void expect_same_floats(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(want[i]))
          << "element " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
}

std::vector<std::byte> one_tensor_file(const char* dtype, const std::vector<std::byte>& data) {
  const std::string n = std::to_string(data.size());
  return raw_file(
      std::string(R"({"x":{"dtype":")") + dtype + R"(","shape":[)" + n + R"(],"data_offsets":[0,)" + n + "]}}", data);
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(SafetensorsFp8, E4M3DecodesEveryKindOfValue) {
  // S.EEEE.MMM, bias 7, the "FN" variant: no infinities, S.1111.111 is NaN.
  const auto data = bytes_of({
      0x00, 0x80,        // +0, -0
      0x01, 0x07,        // smallest and largest subnormal: 1/8 and 7/8 of 2^-6
      0x08, 0x38, 0x3c,  // smallest normal 2^-6, 1.0, 1.5
      0xc0, 0x78,        // -2.0; 1.1111.000 is 256, not infinity
      0x7e, 0xfe,        // largest finite: +-448
      0x7f, 0xff,        // NaN, -NaN
      0x54,              // 0.1010.100: 1.5 * 2^3 = 12
  });
  const auto file = deserialize_safetensors(one_tensor_file("F8_E4M3", data));
  const TensorData& x = file.tensor("x");
  EXPECT_EQ(x.dtype(), DType::F32);
  EXPECT_EQ(x.shape(), Shape{data.size()});
  expect_same_floats(x.to_vec<float>(), {0.0f, -0.0f, 0.001953125f, 0.013671875f, 0.015625f, 1.0f, 1.5f, -2.0f, 256.0f,
                                         448.0f, -448.0f, kNaN, kNaN, 12.0f});
  EXPECT_TRUE(std::signbit(x.to_vec<float>()[12]));
}

TEST(SafetensorsFp8, E5M2DecodesEveryKindOfValue) {
  // S.EEEEE.MM, bias 15, IEEE-like: S.11111.00 is infinity, other S.11111.xx NaN.
  const auto data = bytes_of({
      0x00, 0x80,        // +0, -0
      0x01, 0x03,        // smallest and largest subnormal: 1/4 and 3/4 of 2^-14
      0x04, 0x3c, 0x3d,  // smallest normal 2^-14, 1.0, 1.25
      0xc0,              // -2.0
      0x7b, 0xfb,        // largest finite: +-57344
      0x7c, 0xfc,        // +-infinity
      0x7d, 0x7e, 0xff,  // NaNs
  });
  const auto file = deserialize_safetensors(one_tensor_file("F8_E5M2", data));
  const TensorData& x = file.tensor("x");
  EXPECT_EQ(x.dtype(), DType::F32);
  expect_same_floats(x.to_vec<float>(), {0.0f, -0.0f, 0x1p-16f, 0x3p-16f, 0x1p-14f, 1.0f, 1.25f, -2.0f, 57344.0f,
                                         -57344.0f, kInf, -kInf, kNaN, kNaN, kNaN});
}

TEST(SafetensorsFp8, EveryByteDecodesToItsValue) {
  // All 256 patterns against the formula, written independently of the reader.
  std::vector<std::byte> data(256);
  for (int i = 0; i < 256; ++i) data[i] = std::byte(i);
  const auto e4m3 = deserialize_safetensors(one_tensor_file("F8_E4M3", data)).tensor("x").to_vec<float>();
  const auto e5m2 = deserialize_safetensors(one_tensor_file("F8_E5M2", data)).tensor("x").to_vec<float>();
  for (int i = 0; i < 256; ++i) {
    const float sign = (i & 0x80) ? -1.0f : 1.0f;
    const int e4 = (i >> 3) & 15, m3 = i & 7;
    const float want4 = (e4 == 15 && m3 == 7) ? kNaN
                        : e4 == 0
                            ? sign * static_cast<float>(m3) / 8.0f / 64.0f
                            : sign * (1.0f + static_cast<float>(m3) / 8.0f) * std::exp2(static_cast<float>(e4 - 7));
    const int e5 = (i >> 2) & 31, m2 = i & 3;
    const float want5 = e5 == 31 ? (m2 == 0 ? sign * kInf : kNaN)
                        : e5 == 0
                            ? sign * static_cast<float>(m2) / 4.0f / 16384.0f
                            : sign * (1.0f + static_cast<float>(m2) / 4.0f) * std::exp2(static_cast<float>(e5 - 15));
    expect_same_floats({e4m3[i]}, {want4});
    expect_same_floats({e5m2[i]}, {want5});
  }
}

TEST(SafetensorsFp8, LoadModuleConvertsToTheParameterDType) {
  TempDir dir;
  // A Linear 2 -> 2: weight [2, 2] in E4M3 (1.5, -2, 448, 2^-6), bias [2] in E5M2 (1.25, -57344).
  const auto file = raw_file(R"({"bias":{"dtype":"F8_E5M2","shape":[2],"data_offsets":[0,2]},)"
                             R"("weight":{"dtype":"F8_E4M3","shape":[2,2],"data_offsets":[2,6]}})",
                             bytes_of({0x3d, 0xfb, 0x3c, 0xc0, 0x7e, 0x08}));
  write_bytes(dir / "fp8.safetensors", file);
  const std::vector<float> weight{1.5f, -2.0f, 448.0f, 0.015625f}, bias{1.25f, -57344.0f};
  for (DType dtype : {DType::F32, DType::BF16, DType::F16}) {
    const TensorCreationOptions o(Device::flex(), dtype);
    // Square weights in a file that declares no layout: the layout is named.
    const auto fc =
        load_module(nn::LinearConfig{2, 2}.init(o), dir / "fp8.safetensors", LoadOptions{}.with_adapter(Adapter::Burn));
    EXPECT_EQ(fc.weight->dtype(), dtype);
    EXPECT_EQ(fc.weight->to_data().convert(DType::F32).to_vec<float>(), weight) << dtype_name(dtype);
    EXPECT_EQ(fc.bias.value()->to_data().convert(DType::F32).to_vec<float>(), bias) << dtype_name(dtype);
  }
}

TEST(SafetensorsFp8, SizeMismatchNamesTheFileDType) {
  // One byte per element: [3] needs 3 bytes, not 12.
  try {
    (void)deserialize_safetensors(
        raw_file(R"({"x":{"dtype":"F8_E4M3","shape":[3],"data_offsets":[0,12]}})", std::vector<std::byte>(12)));
    ADD_FAILURE() << "expected a burn::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor \"x\" (F8_E4M3 [3])"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("span 12 bytes but the shape and dtype need 3"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace burn::record
