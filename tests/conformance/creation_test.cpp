// Creation ops: zeros, ones, full, empty, arange, linspace, eye and random.
#include "conformance.hpp"

#include <cmath>

namespace burn::conformance {
namespace {

class CreationFloat : public ComboTest {};
class CreationInt : public ComboTest {};

TEST_P(CreationFloat, ZerosOnesFullEmpty) {
  auto z = Tensor<2>::zeros({2, 3}, {dev(), dt()});
  EXPECT_EQ(z.dtype(), dt());
  EXPECT_EQ(z.device(), dev());
  expect_tensor(z, {2, 3}, {0, 0, 0, 0, 0, 0});
  expect_tensor(Tensor<2>::ones({3, 1}, {dev(), dt()}), {3, 1}, {1, 1, 1});
  expect_tensor(Tensor<1>::full({4}, 2.5, {dev(), dt()}), {4}, {2.5, 2.5, 2.5, 2.5});
  expect_tensor(Tensor<1>::full({2}, -7, {dev(), dt()}), {2}, {-7, -7});
  auto e = Tensor<3>::empty({2, 1, 2}, {dev(), dt()});
  EXPECT_EQ(e.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(e.dtype(), dt());
  auto like = Tensor<2>::ones_like(z);
  EXPECT_EQ(like.dtype(), dt());
  expect_tensor(like, {2, 3}, {1, 1, 1, 1, 1, 1});
  expect_tensor(Tensor<2>::full_like(z, 0.5), {2, 3}, {0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
}

TEST_P(CreationFloat, ZeroSizeShapes) {
  auto z = Tensor<2>::zeros({0, 3}, {dev(), dt()});
  EXPECT_EQ(z.shape(), (Shape{0, 3}));
  EXPECT_EQ(z.num_elements(), 0u);
  EXPECT_EQ(z.to_data().num_elements(), 0u);
  auto f = Tensor<3>::full({2, 0, 4}, 1.0, {dev(), dt()});
  EXPECT_EQ(f.shape(), (Shape{2, 0, 4}));
  auto r = Tensor<1>::random({0}, Distribution::Default, {dev(), dt()});
  EXPECT_EQ(r.shape(), (Shape{0}));
}

TEST_P(CreationFloat, Arange) {
  expect_tensor(Tensor<1>::arange(0, 5, {dev(), dt()}), {5}, {0, 1, 2, 3, 4});
  expect_tensor(Tensor<1>::arange(-2, 2, {dev(), dt()}), {4}, {-2, -1, 0, 1});
  expect_tensor(Tensor<1>::arange_step(0, 10, 3, {dev(), dt()}), {4}, {0, 3, 6, 9});
  expect_tensor(Tensor<1>::arange_step(5, 0, -2, {dev(), dt()}), {3}, {5, 3, 1});
  expect_tensor(Tensor<1>::arange(3, 3, {dev(), dt()}), {0}, {});
  EXPECT_EQ(Tensor<1>::arange(0, 3, {dev(), dt()}).dtype(), dt());
}

TEST_P(CreationFloat, Linspace) {
  expect_tensor(Tensor<1>::linspace(0.0, 1.0, 5, {dev(), dt()}), {5}, {0, 0.25, 0.5, 0.75, 1});
  expect_tensor(Tensor<1>::linspace(-1.0, 2.0, 4, {dev(), dt()}), {4}, {-1, 0, 1, 2});
  expect_tensor(Tensor<1>::linspace(3.0, -3.0, 3, {dev(), dt()}), {3}, {3, 0, -3});
  expect_tensor(Tensor<1>::linspace(2.0, 5.0, 1, {dev(), dt()}), {1}, {2});
  expect_tensor(Tensor<1>::linspace(2.0, 5.0, 0, {dev(), dt()}), {0}, {});
}

TEST_P(CreationFloat, Eye) {
  auto e = Tensor<2>::eye(3, {dev(), dt()});
  EXPECT_EQ(e.dtype(), dt());
  expect_tensor(e, {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  expect_tensor(Tensor<2>::eye(1, {dev(), dt()}), {1, 1}, {1});
  expect_tensor(Tensor<2>::eye(0, {dev(), dt()}), {0, 0}, {});
}

TEST_P(CreationFloat, FromDataConvertsToTheRequestedDType) {
  auto t = Tensor<2>::from_floats({{1.0, 2.0}, {3.0, 4.0}}, {dev(), dt()});
  EXPECT_EQ(t.dtype(), dt());
  expect_tensor(t, {2, 2}, {1, 2, 3, 4});
  auto data = TensorData(std::vector<double>{0.5, -1.5}, Shape{2});
  expect_tensor(Tensor<1>::from_data(data, {dev(), dt()}), {2}, {0.5, -1.5});
}

// Data the caller keeps is copied once, straight into the tensor's storage
// where the device has host memory; data handed over is moved in. Either
// way the tensor owns its values: the caller's data stays as it was and
// later tensors made from it are independent.
TEST_P(CreationFloat, FromDataCopiesKeptDataAndMovesHandedOverData) {
  const std::vector<double> values{0.25, -2, 3.5, 7, -0.5, 1};
  const TensorData kept = TensorData(values, Shape{2, 3}).convert(dt());
  const TensorData before = kept;
  auto a = Tensor<2>::from_data(kept, {dev(), dt()});
  auto b = Tensor<2>::from_data(kept, {dev(), dt()});
  a = a * 2.0;
  expect_tensor(a, {2, 3}, {0.5, -4, 7, 14, -1, 2});
  expect_tensor(b, {2, 3}, values);
  kept.assert_eq(before);
  TensorData handed = kept;
  expect_tensor(Tensor<2>::from_data(std::move(handed), {dev(), dt()}), {2, 3}, values);
  const TensorData empty(std::vector<float>{}, Shape{0, 3});
  expect_tensor(Tensor<2>::from_data(empty, {dev(), dt()}), {0, 3}, {});
}

TEST_P(CreationFloat, RandomIsReproducibleWithASeed) {
  dev().seed(42);
  auto a = Tensor<2>::random({8, 16}, Distribution::Default, {dev(), dt()});
  auto b = Tensor<2>::random({8, 16}, Distribution::Default, {dev(), dt()});
  dev().seed(42);
  auto c = Tensor<2>::random({8, 16}, Distribution::Default, {dev(), dt()});
  a.to_data().assert_eq(c.to_data());
  EXPECT_NE(values_of(a), values_of(b)) << "two draws after one seed must differ";
  dev().seed(7);
  auto d = Tensor<2>::random({8, 16}, Distribution::Default, {dev(), dt()});
  EXPECT_NE(values_of(a), values_of(d)) << "different seeds must give different values";
}

// Loose statistical bounds: with n = 20000 the standard error of the mean is
// below 0.01 for every case here, so 0.05 never fails by chance.
constexpr std::size_t kStatN = 20000;

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double std_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

TEST_P(CreationFloat, RandomUniformDefaultAndRange) {
  dev().seed(1);
  auto u = values_of(Tensor<1>::random({kStatN}, Distribution::Default, {dev(), dt()}));
  for (double x : u) {
    ASSERT_GE(x, 0.0);
    ASSERT_LE(x, 1.0);  // half types may round values near 1 up to 1
  }
  EXPECT_NEAR(mean_of(u), 0.5, 0.05);
  EXPECT_NEAR(std_of(u), std::sqrt(1.0 / 12.0), 0.05);

  auto r = values_of(Tensor<1>::random({kStatN}, Distribution::uniform(-3.0, 5.0), {dev(), dt()}));
  for (double x : r) {
    ASSERT_GE(x, -3.0);
    ASSERT_LE(x, 5.0);
  }
  EXPECT_NEAR(mean_of(r), 1.0, 0.1);
  EXPECT_NEAR(std_of(r), 8.0 / std::sqrt(12.0), 0.1);
}

TEST_P(CreationFloat, RandomNormal) {
  dev().seed(2);
  auto n = values_of(Tensor<1>::random({kStatN}, Distribution::normal(2.0, 0.5), {dev(), dt()}));
  for (double x : n) ASSERT_TRUE(std::isfinite(x));
  EXPECT_NEAR(mean_of(n), 2.0, 0.05);
  EXPECT_NEAR(std_of(n), 0.5, 0.05);
  auto s = values_of(Tensor<1>::random({kStatN}, Distribution::normal(0.0, 1.0), {dev(), dt()}));
  EXPECT_NEAR(mean_of(s), 0.0, 0.05);
  EXPECT_NEAR(std_of(s), 1.0, 0.05);
}

TEST_P(CreationFloat, RandomBernoulli) {
  dev().seed(3);
  auto v = values_of(Tensor<1>::random({kStatN}, Distribution::bernoulli(0.3), {dev(), dt()}));
  for (double x : v) ASSERT_TRUE(x == 0.0 || x == 1.0) << x;
  EXPECT_NEAR(mean_of(v), 0.3, 0.05);
  auto zero = values_of(Tensor<1>::random({100}, Distribution::bernoulli(0.0), {dev(), dt()}));
  for (double x : zero) ASSERT_EQ(x, 0.0);
  auto one = values_of(Tensor<1>::random({100}, Distribution::bernoulli(1.0), {dev(), dt()}));
  for (double x : one) ASSERT_EQ(x, 1.0);
}

TEST_P(CreationInt, ZerosOnesFullArangeEye) {
  auto z = Tensor<2, Int>::zeros({2, 2}, {dev(), dt()});
  EXPECT_EQ(z.dtype(), dt());
  expect_tensor(z, {2, 2}, {0, 0, 0, 0});
  expect_tensor(Tensor<1, Int>::ones({3}, {dev(), dt()}), {3}, {1, 1, 1});
  expect_tensor(Tensor<1, Int>::full({2}, 7, {dev(), dt()}), {2}, {7, 7});
  expect_tensor(Tensor<1, Int>::arange(0, 5, {dev(), dt()}), {5}, {0, 1, 2, 3, 4});
  expect_tensor(Tensor<1, Int>::arange_step(1, 12, 4, {dev(), dt()}), {3}, {1, 5, 9});
  expect_tensor(Tensor<1, Int>::arange_step(9, 0, -3, {dev(), dt()}), {3}, {9, 6, 3});
  auto e = Tensor<2, Int>::eye(2, {dev(), dt()});
  EXPECT_EQ(e.dtype(), dt());
  expect_tensor(e, {2, 2}, {1, 0, 0, 1});
  expect_tensor(Tensor<2, Int>::from_ints({{1, 2}, {3, 4}}, {dev(), dt()}), {2, 2}, {1, 2, 3, 4});
  expect_tensor(Tensor<2, Int>::zeros({3, 0}, {dev(), dt()}), {3, 0}, {});
}

TEST_P(CreationInt, RandomUniformInts) {
  dev().seed(11);
  auto v = values_of(Tensor<1, Int>::random({kStatN}, Distribution::uniform(0, 10), {dev(), dt()}));
  for (double x : v) {
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 10.0);
    ASSERT_EQ(x, std::floor(x));
  }
  EXPECT_NEAR(mean_of(v), 4.5, 0.1);
}

TEST_P(CreationInt, Errors) {
  expect_op_error([&] { (void)Tensor<1, Int>::arange_step(0, 5, 0, {dev(), dt()}); }, "arange");
  // A float dtype for an Int tensor is rejected, naming the creation op.
  expect_op_error([&] { (void)Tensor<1, Int>::zeros({2}, {dev(), DType::F32}); }, "full");
  expect_op_error([&] { (void)Tensor<1>::zeros({2}, {dev(), dt()}); }, "full");
}

TEST(CreationBool, FromBoolsAndFull) {
  for (const auto& d : burn::testing::all_devices()) {
    SCOPED_TRACE(d.to_string());
    auto t = Tensor<2, Bool>::from_bools({{true, false}, {false, true}}, d);
    EXPECT_EQ(t.dtype(), DType::Bool);
    expect_tensor(t, {2, 2}, {1, 0, 0, 1});
    expect_tensor(Tensor<1, Bool>::full({3}, true, d), {3}, {1, 1, 1});
    expect_tensor(Tensor<1, Bool>::zeros({2}, d), {2}, {0, 0});
  }
}

BURN_FLOAT_SUITE(CreationFloat);
BURN_INT_SUITE(CreationInt);

}  // namespace
}  // namespace burn::conformance
