// TensorData: construction, size checks, to_vec/convert, and the assertion
// helpers' readable diffs.
#include <burn/burn.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace {

using burn::DType;
using burn::Shape;
using burn::TensorData;

/// The message of the burn::Error `body` throws; fails the test if none.
template <class F>
std::string error_of(F&& body) {
  try {
    body();
  } catch (const burn::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a burn::Error";
  return {};
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "\"" << text << "\" lacks \"" << part << "\"";
}

TEST(TensorData, FromVector) {
  const TensorData d(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(d.shape(), (Shape{2, 3}));
  EXPECT_EQ(d.dtype(), DType::F32);
  EXPECT_EQ(d.num_elements(), 6u);
  EXPECT_EQ(d.bytes().size(), 24u);
  EXPECT_EQ(d.to_vec<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(d.value_as_double(4), 5.0);

  const TensorData one_d(std::vector<std::int64_t>{7, 8});
  EXPECT_EQ(one_d.shape(), (Shape{2}));
  EXPECT_EQ(one_d.dtype(), DType::I64);

  const TensorData b(std::vector<bool>{true, false, true}, Shape{3});
  EXPECT_EQ(b.dtype(), DType::Bool);
  EXPECT_EQ(b.bytes().size(), 3u);
  EXPECT_EQ(b.to_vec<bool>(), (std::vector<bool>{true, false, true}));
}

TEST(TensorData, EmptyAndZeros) {
  const TensorData e(std::vector<float>{}, Shape{0, 3});
  EXPECT_EQ(e.num_elements(), 0u);
  EXPECT_TRUE(e.to_vec<float>().empty());
  const TensorData z = TensorData::zeros(Shape{2, 2}, DType::I16);
  EXPECT_EQ(z.dtype(), DType::I16);
  EXPECT_EQ(z.to_vec<std::int16_t>(), (std::vector<std::int16_t>{0, 0, 0, 0}));
}

TEST(TensorData, CountMismatchIsAnError) {
  const std::string m = error_of([] { TensorData(std::vector<float>{1, 2, 3}, Shape{2, 2}); });
  EXPECT_EQ(m.rfind("[TensorData]", 0), 0u) << m;
  expect_contains(m, "[2, 2]");
  expect_contains(m, "3");
}

TEST(TensorData, ByteSizeMismatchIsAnError) {
  const std::string m = error_of([] { TensorData(std::vector<std::byte>(10), Shape{2, 2}, DType::F32); });
  EXPECT_EQ(m.rfind("[TensorData]", 0), 0u) << m;
  expect_contains(m, "10");
  expect_contains(m, "16");
  EXPECT_NO_THROW(TensorData(std::vector<std::byte>(16), Shape{2, 2}, DType::F32));
  EXPECT_NO_THROW(TensorData(std::vector<std::byte>(4), Shape{2, 2}, DType::Bool));
}

TEST(TensorData, ToVecDtypeMismatchIsAnError) {
  const TensorData d(std::vector<float>{1, 2});
  const std::string m = error_of([&] { (void)d.to_vec<double>(); });
  EXPECT_EQ(m.rfind("[TensorData::to_vec]", 0), 0u) << m;
  expect_contains(m, "f32");
  expect_contains(m, "f64");
  EXPECT_THROW((void)d.to_vec<std::int32_t>(), burn::Error);
  EXPECT_THROW((void)TensorData(std::vector<bool>{true}).to_vec<std::uint8_t>(), burn::Error);
}

TEST(TensorData, Convert) {
  const TensorData d(std::vector<double>{1.5, -2.5, 0.0, 3.0}, Shape{2, 2});
  const TensorData f = d.convert<float>();
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(f.shape(), (Shape{2, 2}));
  EXPECT_EQ(f.to_vec<float>(), (std::vector<float>{1.5f, -2.5f, 0.0f, 3.0f}));
  EXPECT_EQ(d.convert(DType::I64).to_vec<std::int64_t>(), (std::vector<std::int64_t>{1, -2, 0, 3}));
  EXPECT_EQ(d.convert(DType::Bool).to_vec<bool>(), (std::vector<bool>{true, true, false, true}));
  const auto h = d.convert(DType::F16).to_vec<burn::f16>();
  EXPECT_EQ(h[0].bits, burn::f16(1.5f).bits);
  EXPECT_EQ(h[1].bits, burn::f16(-2.5f).bits);
  EXPECT_EQ(d.convert(DType::BF16).convert<double>().to_vec<double>(), d.to_vec<double>());
  // Converting to the stored dtype is a plain copy.
  EXPECT_EQ(d.convert(DType::F64), d);
  // The source is untouched.
  EXPECT_EQ(d.dtype(), DType::F64);
}

TEST(TensorData, EqualityAndBytes) {
  const TensorData a(std::vector<std::int32_t>{1, 2});
  TensorData b = a;
  EXPECT_EQ(a, b);
  std::int32_t nine = 9;
  std::memcpy(b.bytes_mut().data(), &nine, 4);
  EXPECT_EQ(b.to_vec<std::int32_t>()[0], 9);
  EXPECT_FALSE(a == b);
  EXPECT_EQ(TensorData(a).into_bytes().size(), 8u);
}

TEST(TensorData, ToString) {
  const TensorData d(std::vector<float>{1, 2.5}, Shape{2});
  EXPECT_EQ(d.to_string(), "TensorData { shape: [2], dtype: f32, values: [1, 2.5] }");
  const TensorData b(std::vector<bool>{true, false});
  EXPECT_EQ(b.to_string(), "TensorData { shape: [2], dtype: bool, values: [true, false] }");
  const TensorData big(std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max()});
  expect_contains(big.to_string(), "9223372036854775807");
  const TensorData many(std::vector<float>(100, 0.0f));
  expect_contains(many.to_string(4), "0, 0, 0, 0, ...");
}

TEST(TensorData, AssertEqPasses) {
  const TensorData a(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  EXPECT_NO_THROW(a.assert_eq(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{2, 2})));
  // -0 equals 0 and NaN equals NaN for assertions.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NO_THROW(TensorData(std::vector<float>{-0.0f, nan}).assert_eq(TensorData(std::vector<float>{0.0f, nan})));
  // check_dtype = false compares values across dtypes.
  EXPECT_NO_THROW(a.assert_eq(TensorData(std::vector<double>{1, 2, 3, 4}, Shape{2, 2}), false));
}

TEST(TensorData, AssertEqFailureNamesIndexAndBothValues) {
  const TensorData got(std::vector<float>{1, 2, 5, 4}, Shape{2, 2});
  const TensorData want(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  const std::string m = error_of([&] { got.assert_eq(want); });
  EXPECT_EQ(m.rfind("[assert_eq]", 0), 0u) << m;
  expect_contains(m, "[1, 0]");  // the multi-dimensional index of the mismatch
  expect_contains(m, "got 5");
  expect_contains(m, "expected 3");
  expect_contains(m, "1 of 4");
}

TEST(TensorData, AssertEqShapeAndDtypeMismatch) {
  const TensorData a(std::vector<float>{1, 2, 3, 4}, Shape{2, 2});
  const std::string shape_msg = error_of([&] { a.assert_eq(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{4})); });
  expect_contains(shape_msg, "[2, 2]");
  expect_contains(shape_msg, "[4]");
  const std::string dtype_msg = error_of([&] {
    a.assert_eq(TensorData(std::vector<double>{1, 2, 3, 4}, Shape{2, 2}));
  });
  expect_contains(dtype_msg, "f32");
  expect_contains(dtype_msg, "f64");
}

TEST(TensorData, AssertEqIntegersExact) {
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  const TensorData a(std::vector<std::int64_t>{big});
  const std::string m = error_of([&] { a.assert_eq(TensorData(std::vector<std::int64_t>{big - 1})); });
  expect_contains(m, "got 9007199254740993");
  expect_contains(m, "expected 9007199254740992");
}

TEST(TensorData, AssertEqReportsManyMismatchesBriefly) {
  const TensorData a(std::vector<float>(50, 1.0f));
  const std::string m = error_of([&] { a.assert_eq(TensorData(std::vector<float>(50, 2.0f))); });
  expect_contains(m, "50 of 50");
  expect_contains(m, "...");
}

TEST(TensorData, AssertApproxEq) {
  const TensorData a(std::vector<float>{1.0f, 2.0f, 3.0f});
  EXPECT_NO_THROW(a.assert_approx_eq(TensorData(std::vector<float>{1.001f, 2.0f, 3.0f})));
  EXPECT_NO_THROW(a.assert_approx_eq(TensorData(std::vector<double>{1.0, 2.0, 3.0})));
  EXPECT_NO_THROW(
      a.assert_approx_eq(TensorData(std::vector<float>{1.5f, 2.0f, 3.0f}), burn::Tolerance::absolute_only(0.6)));

  const std::string m = error_of([&] { a.assert_approx_eq(TensorData(std::vector<float>{1.0f, 2.5f, 3.0f})); });
  EXPECT_EQ(m.rfind("[assert_approx_eq]", 0), 0u) << m;
  expect_contains(m, "[1]");
  expect_contains(m, "got 2");
  expect_contains(m, "expected 2.5");

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_NO_THROW(
      TensorData(std::vector<float>{nan, inf, -inf}).assert_approx_eq(TensorData(std::vector<float>{nan, inf, -inf})));
  EXPECT_THROW(TensorData(std::vector<float>{nan}).assert_approx_eq(TensorData(std::vector<float>{1.0f})), burn::Error);
  EXPECT_THROW(TensorData(std::vector<float>{inf}).assert_approx_eq(TensorData(std::vector<float>{-inf})), burn::Error);
  EXPECT_THROW(TensorData(std::vector<float>{1e30f}).assert_approx_eq(TensorData(std::vector<float>{inf})),
               burn::Error);
  const std::string shape_msg = error_of([&] {
    a.assert_approx_eq(TensorData(std::vector<float>{1, 2, 3}, Shape{3, 1}));
  });
  expect_contains(shape_msg, "[3, 1]");
}

TEST(Tolerance, DefaultsPerDType) {
  EXPECT_EQ(burn::Tolerance::default_for(DType::F32).relative, burn::Tolerance{}.relative);
  EXPECT_GT(burn::Tolerance::default_for(DType::F16).relative, burn::Tolerance{}.relative);
  EXPECT_GT(burn::Tolerance::default_for(DType::BF16).relative, burn::Tolerance::default_for(DType::F16).relative);
  const auto t = burn::Tolerance::rel_abs(0.1, 0.2);
  EXPECT_EQ(t.relative, 0.1);
  EXPECT_EQ(t.absolute, 0.2);
}

}  // namespace
