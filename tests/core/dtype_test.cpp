// DType helpers: names, sizes, classification, the enum mappings and the
// storage-type tables (include/burn/dtype.hpp).
#include <burn/burn.hpp>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

using burn::DType;

struct DTypeRow {
  DType dtype;
  const char* name;
  std::size_t size;
  bool is_float, is_half, is_int, is_signed, is_unsigned, is_bool;
};

// One row per dtype, written out by hand so a mistake in the tables shows.
const std::vector<DTypeRow>& rows() {
  static const std::vector<DTypeRow> r{
      {DType::F64, "f64", 8, true, false, false, false, false, false},
      {DType::F32, "f32", 4, true, false, false, false, false, false},
      {DType::F16, "f16", 2, true, true, false, false, false, false},
      {DType::BF16, "bf16", 2, true, true, false, false, false, false},
      {DType::I64, "i64", 8, false, false, true, true, false, false},
      {DType::I32, "i32", 4, false, false, true, true, false, false},
      {DType::I16, "i16", 2, false, false, true, true, false, false},
      {DType::I8, "i8", 1, false, false, true, true, false, false},
      {DType::U64, "u64", 8, false, false, true, false, true, false},
      {DType::U32, "u32", 4, false, false, true, false, true, false},
      {DType::U16, "u16", 2, false, false, true, false, true, false},
      {DType::U8, "u8", 1, false, false, true, false, true, false},
      {DType::Bool, "bool", 1, false, false, false, false, false, true},
  };
  return r;
}

TEST(DType, NamesSizesAndClassification) {
  ASSERT_EQ(rows().size(), 13u) << "every DType enumerator has a row";
  for (const auto& r : rows()) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(burn::dtype_name(r.dtype), r.name);
    EXPECT_EQ(burn::dtype_size(r.dtype), r.size);
    EXPECT_EQ(burn::is_float(r.dtype), r.is_float);
    EXPECT_EQ(burn::is_half(r.dtype), r.is_half);
    EXPECT_EQ(burn::is_int(r.dtype), r.is_int);
    EXPECT_EQ(burn::is_signed_int(r.dtype), r.is_signed);
    EXPECT_EQ(burn::is_unsigned_int(r.dtype), r.is_unsigned);
    EXPECT_EQ(burn::is_bool(r.dtype), r.is_bool);
    std::ostringstream os;
    os << r.dtype;
    EXPECT_EQ(os.str(), r.name);
  }
}

TEST(DType, SizesMatchStorageTypes) {
  for (const auto& r : rows()) {
    burn::visit_dtype(r.dtype, [&]<class T>() {
      EXPECT_EQ(sizeof(T), r.size) << r.name;
      EXPECT_EQ(burn::dtype_of<T>(), r.dtype) << r.name;
    });
  }
  static_assert(std::is_same_v<burn::dtype_storage<DType::F16>::type, burn::f16>);
  static_assert(std::is_same_v<burn::dtype_storage<DType::BF16>::type, burn::bf16>);
  static_assert(std::is_same_v<burn::dtype_storage<DType::U16>::type, std::uint16_t>);
  static_assert(std::is_same_v<burn::compute_t<burn::f16>, float>);
  static_assert(std::is_same_v<burn::compute_t<burn::bf16>, float>);
  static_assert(std::is_same_v<burn::compute_t<std::int8_t>, std::int8_t>);
}

TEST(DType, KindEnumsMapToDType) {
  using burn::FloatDType;
  using burn::IntDType;
  EXPECT_EQ(burn::to_dtype(FloatDType::F64), DType::F64);
  EXPECT_EQ(burn::to_dtype(FloatDType::F32), DType::F32);
  EXPECT_EQ(burn::to_dtype(FloatDType::F16), DType::F16);
  EXPECT_EQ(burn::to_dtype(FloatDType::BF16), DType::BF16);
  EXPECT_EQ(burn::to_dtype(IntDType::I64), DType::I64);
  EXPECT_EQ(burn::to_dtype(IntDType::I32), DType::I32);
  EXPECT_EQ(burn::to_dtype(IntDType::I16), DType::I16);
  EXPECT_EQ(burn::to_dtype(IntDType::I8), DType::I8);
  EXPECT_EQ(burn::to_dtype(IntDType::U64), DType::U64);
  EXPECT_EQ(burn::to_dtype(IntDType::U32), DType::U32);
  EXPECT_EQ(burn::to_dtype(IntDType::U16), DType::U16);
  EXPECT_EQ(burn::to_dtype(IntDType::U8), DType::U8);
  EXPECT_EQ(burn::to_dtype(burn::BoolDType::Bool), DType::Bool);

  std::ostringstream os;
  os << FloatDType::BF16 << " " << IntDType::U32;
  EXPECT_EQ(os.str(), "bf16 u32");
}

TEST(DType, KindMembership) {
  using burn::TensorKind;
  for (const auto& r : rows()) {
    EXPECT_EQ(burn::dtype_matches_kind(r.dtype, TensorKind::Float), r.is_float) << r.name;
    EXPECT_EQ(burn::dtype_matches_kind(r.dtype, TensorKind::Int), r.is_int) << r.name;
    EXPECT_EQ(burn::dtype_matches_kind(r.dtype, TensorKind::Bool), r.is_bool) << r.name;
  }
}

}  // namespace
