// Shape, Scalar and the Error hierarchy.
#include <burn/burn.hpp>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <sstream>
#include <stdexcept>

namespace {

using burn::Scalar;
using burn::Shape;

TEST(Shape, Basics) {
  const Shape s{2, 3, 4};
  EXPECT_EQ(s.rank(), 3u);
  EXPECT_EQ(s.num_elements(), 24u);
  EXPECT_EQ(s[1], 3u);
  EXPECT_EQ(s.dims(), (std::vector<std::size_t>{2, 3, 4}));
  EXPECT_EQ(s.contiguous_strides(), (std::vector<std::size_t>{12, 4, 1}));
  EXPECT_EQ(s.to_string(), "[2, 3, 4]");
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "[2, 3, 4]");
  EXPECT_THROW((void)s[3], std::out_of_range);

  Shape m = s;
  m[0] = 5;
  EXPECT_EQ(m, (Shape{5, 3, 4}));
  EXPECT_NE(m, s);

  std::size_t product = 1;
  for (auto d : s) product *= d;
  EXPECT_EQ(product, 24u);
}

TEST(Shape, ConstructionForms) {
  EXPECT_EQ(Shape(std::vector<std::size_t>{1, 2}), (Shape{1, 2}));
  EXPECT_EQ(Shape(std::array<std::size_t, 2>{1, 2}), (Shape{1, 2}));
  const Shape empty;
  EXPECT_EQ(empty.rank(), 0u);
  EXPECT_EQ(empty.num_elements(), 1u);  // a rank-0 shape has one element
  EXPECT_EQ(empty.to_string(), "[]");
  EXPECT_TRUE(empty.contiguous_strides().empty());
}

TEST(Shape, ZeroSizedDims) {
  const Shape s{3, 0, 2};
  EXPECT_EQ(s.num_elements(), 0u);
  EXPECT_EQ(s.contiguous_strides(), (std::vector<std::size_t>{0, 2, 1}));
}

TEST(Scalar, Kinds) {
  EXPECT_EQ(Scalar(2.5).kind(), Scalar::Kind::Float);
  EXPECT_EQ(Scalar(2.5f).kind(), Scalar::Kind::Float);
  EXPECT_EQ(Scalar(3).kind(), Scalar::Kind::Int);
  EXPECT_EQ(Scalar(std::uint8_t{3}).kind(), Scalar::Kind::Int);
  EXPECT_EQ(Scalar(true).kind(), Scalar::Kind::Bool);
  EXPECT_EQ(Scalar(burn::f16(1.5f)).kind(), Scalar::Kind::Float);
  EXPECT_EQ(Scalar().kind(), Scalar::Kind::Float);
  EXPECT_EQ(Scalar().as_double(), 0.0);
}

TEST(Scalar, Values) {
  EXPECT_EQ(Scalar(2.75).as<float>(), 2.75f);
  EXPECT_EQ(Scalar(2.75).as<std::int32_t>(), 2);
  EXPECT_EQ(Scalar(-2.75).as<std::int64_t>(), -2);
  EXPECT_EQ(Scalar(7).as<double>(), 7.0);
  EXPECT_TRUE(Scalar(0.5).as<bool>());
  EXPECT_FALSE(Scalar(0).as<bool>());
  EXPECT_TRUE(Scalar(true).as_bool());
  EXPECT_EQ(Scalar(true).as<float>(), 1.0f);
  EXPECT_EQ(Scalar(1.5).as<burn::f16>().bits, burn::f16(1.5f).bits);
  EXPECT_EQ(Scalar(burn::bf16(2.0f)).as_double(), 2.0);
  // Integer scalars stay exact beyond double precision.
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  EXPECT_EQ(Scalar(big).as<std::int64_t>(), big);
  EXPECT_EQ(Scalar(big).as_int(), big);
}

TEST(Scalar, ToString) {
  EXPECT_EQ(Scalar(2.5).to_string(), "2.5");
  EXPECT_EQ(Scalar(-3).to_string(), "-3");
  EXPECT_EQ(Scalar(true).to_string(), "true");
  EXPECT_EQ(Scalar(false).to_string(), "false");
}

TEST(Error, MessageStartsWithTheOpInBrackets) {
  const burn::Error e("matmul", "shapes [2, 3] and [4, 5] do not match");
  EXPECT_STREQ(e.what(), "[matmul] shapes [2, 3] and [4, 5] do not match");
  EXPECT_EQ(e.op(), "matmul");
}

TEST(Error, Hierarchy) {
  EXPECT_THROW(throw burn::ExecutionError("sync", "failed"), burn::Error);
  EXPECT_THROW(throw burn::ConfigurationError("Device()", "no backend"), burn::Error);
  EXPECT_THROW(throw burn::DeviceError(burn::DeviceErrorKind::NotAvailable, "Device", "x"), burn::Error);
  EXPECT_THROW(throw burn::Error("op", "m"), std::runtime_error);

  const burn::DeviceError d(burn::DeviceErrorKind::UnsupportedDType, "Device::configure", "no bf16");
  EXPECT_EQ(d.kind(), burn::DeviceErrorKind::UnsupportedDType);
  EXPECT_STREQ(d.what(), "[Device::configure] no bf16");
  EXPECT_EQ(burn::DeviceError(burn::DeviceErrorKind::AlreadyInitialized, "a", "b").kind(),
            burn::DeviceErrorKind::AlreadyInitialized);
}

}  // namespace
