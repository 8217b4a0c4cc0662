// Tensor<D, K> type checks: rank and kind of wrapped handles, nested-list
// creation, into_scalar, dims() and shape(). Runs on every CPU device.
#include <gtest/gtest.h>

#include <burn_test.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace {

using burn::Bool;
using burn::DType;
using burn::Int;
using burn::Shape;
using burn::Tensor;
using burn::testing::expect_error;

class TensorTypes : public ::testing::TestWithParam<burn::Device> {};

TEST_P(TensorTypes, RankMismatchThrows) {
  const auto t3 = Tensor<3>::zeros({2, 3, 4}, GetParam());
  expect_error([&] { Tensor<2> t(t3.ref()); }, "[Tensor]");
  expect_error([&] { Tensor<2> t(t3.ref()); }, "rank-2");
  EXPECT_NO_THROW(Tensor<3> t(t3.ref()));
}

TEST_P(TensorTypes, KindMismatchThrows) {
  const auto f = Tensor<2>::zeros({2, 2}, GetParam());
  expect_error([&] { Tensor<2, Int> t(f.ref()); }, "[Tensor]");
  expect_error([&] { Tensor<2, Bool> t(f.ref()); }, "f32");
  const auto i = Tensor<1, Int>::zeros({3}, GetParam());
  expect_error([&] { Tensor<1> t(i.ref()); }, "Float");
}

TEST_P(TensorTypes, FromFloatsNested) {
  const auto t = Tensor<2>::from_floats({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, GetParam());
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.device(), GetParam());
  t.to_data().assert_eq(burn::TensorData(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}));

  const auto t3 = Tensor<3>::from_floats({{{1.0}, {2.0}}, {{3.0}, {4.0}}, {{5.0}, {6.0}}}, GetParam());
  EXPECT_EQ(t3.shape(), (Shape{3, 2, 1}));
  t3.to_data().assert_eq(burn::TensorData(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{3, 2, 1}));
}

TEST_P(TensorTypes, FromIntsAndBoolsNested) {
  const auto i = Tensor<2, Int>::from_ints({{1, 2}, {3, 4}}, GetParam());
  EXPECT_EQ(i.dtype(), DType::I64);
  i.to_data().assert_eq(burn::TensorData(std::vector<std::int64_t>{1, 2, 3, 4}, Shape{2, 2}));
  const auto b = Tensor<1, Bool>::from_bools({true, false}, GetParam());
  EXPECT_EQ(b.dtype(), DType::Bool);
  b.to_data().assert_eq(burn::TensorData(std::vector<bool>{true, false}, Shape{2}));
}

TEST_P(TensorTypes, FromNestedWithExplicitDType) {
  const auto h = Tensor<1>::from_floats({1.5, 2.5}, {GetParam(), DType::F16});
  EXPECT_EQ(h.dtype(), DType::F16);
  h.to_data().assert_eq(burn::TensorData(std::vector<double>{1.5, 2.5}).convert(DType::F16));
  const auto u = Tensor<1, Int>::from_ints({1, 200}, {GetParam(), DType::U8});
  EXPECT_EQ(u.dtype(), DType::U8);
  u.to_data().assert_eq(burn::TensorData(std::vector<std::uint8_t>{1, 200}));
}

TEST_P(TensorTypes, RaggedNestedListsThrow) {
  expect_error([&] { (void)Tensor<2>::from_floats({{1.0, 2.0}, {3.0}}, GetParam()); }, "ragged");
  expect_error([&] { (void)Tensor<2, Int>::from_ints({{1}, {2, 3}}, GetParam()); }, "ragged");
  expect_error([&] { (void)Tensor<3>::from_floats({{{1.0}, {2.0}}, {{3.0}}}, GetParam()); }, "ragged");
  expect_error([&] { (void)Tensor<2, Bool>::from_bools({{true, false}, {true}}, GetParam()); }, "ragged");
}

TEST_P(TensorTypes, EmptyNestedList) {
  const auto e = Tensor<2>::from_floats({}, GetParam());
  EXPECT_EQ(e.shape(), (Shape{0, 0}));
  EXPECT_EQ(e.num_elements(), 0u);
  const auto rows = Tensor<2>::from_floats({{}, {}}, GetParam());
  EXPECT_EQ(rows.shape(), (Shape{2, 0}));
}

TEST_P(TensorTypes, IntoScalar) {
  const auto t = Tensor<1>::from_floats({3.5}, GetParam());
  EXPECT_EQ(t.into_scalar<float>(), 3.5f);
  EXPECT_EQ(t.into_scalar<double>(), 3.5);
  EXPECT_EQ(t.into_scalar<std::int64_t>(), 3);
  const auto i = Tensor<2, Int>::from_ints({{-7}}, GetParam());
  EXPECT_EQ(i.into_scalar<std::int64_t>(), -7);
  EXPECT_EQ(i.into_scalar<double>(), -7.0);
  EXPECT_TRUE((Tensor<1, Bool>::from_bools({true}, GetParam()).into_scalar<bool>()));
  expect_error([&] { (void)Tensor<1>::from_floats({1.0, 2.0}, GetParam()).into_scalar<float>(); }, "[into_scalar]");
  expect_error([&] { (void)Tensor<1>::zeros({0}, GetParam()).into_scalar<float>(); }, "[0]");
}

TEST_P(TensorTypes, DimsAndShape) {
  const auto t = Tensor<3>::zeros({2, 0, 4}, GetParam());
  const std::array<std::size_t, 3> dims = t.dims();
  EXPECT_EQ(dims, (std::array<std::size_t, 3>{2, 0, 4}));
  EXPECT_EQ(t.shape(), (Shape{2, 0, 4}));
  EXPECT_EQ(t.num_elements(), 0u);
  EXPECT_EQ(Tensor<3>::rank, 3u);
  static_assert(std::is_same_v<Tensor<2, Int>::kind, Int>);
  static_assert(std::is_same_v<Tensor<2>::kind, burn::Float>);
}

TEST_P(TensorTypes, FromDataConvertsToTheKindsDefault) {
  // Int data given to a Float tensor takes the device's default float dtype.
  const auto f = Tensor<1>::from_data(burn::TensorData(std::vector<std::int64_t>{1, 2}), GetParam());
  EXPECT_EQ(f.dtype(), DType::F32);
  f.to_data().assert_eq(burn::TensorData(std::vector<float>{1, 2}));
  expect_error(
      [&] {
        (void)Tensor<1>::from_data(burn::TensorData(std::vector<float>{1}), {GetParam(), DType::I32});
      },
      "i32");
}

TEST_P(TensorTypes, CopiesShareStorage) {
  const auto a = Tensor<1>::from_floats({1.0, 2.0}, GetParam());
  const Tensor<1> b = a;  // NOLINT: the copy is the point
  EXPECT_EQ(a.ref(), b.ref());
}

INSTANTIATE_TEST_SUITE_P(AllDevices, TensorTypes, ::testing::ValuesIn(burn::testing::all_devices()),
                         [](const ::testing::TestParamInfo<burn::Device>& info) {
                           return std::string(info.param.type().name());
                         });

}  // namespace
