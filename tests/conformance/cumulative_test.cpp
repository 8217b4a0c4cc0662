// Inclusive scans: cumsum, cumprod, cummax, cummin.
#include "conformance.hpp"

namespace burn::conformance {
namespace {

class CumulativeFloat : public ComboTest {};
class CumulativeInt : public ComboTest {};
class CumulativeSignedInt : public ComboTest {};

// Shared by the float and int suites: every value here fits every dtype.
template <class Fixture, class Make>
void check_scans(const Fixture&, Make make) {
  auto a = make(std::vector<double>{0, 1, 2, 3, 4, 5});
  auto cs = a.cumsum(0);
  EXPECT_EQ(cs.dtype(), a.dtype());
  expect_tensor(cs, {2, 3}, {0, 1, 2, 3, 5, 7});
  expect_tensor(a.cumsum(1), {2, 3}, {0, 1, 3, 3, 7, 12});
  expect_tensor(a.cumsum(-1), {2, 3}, {0, 1, 3, 3, 7, 12});
  auto p = make(std::vector<double>{1, 2, 3, 4, 5, 6});
  expect_tensor(p.cumprod(1), {2, 3}, {1, 2, 6, 4, 20, 120});
  expect_tensor(p.cumprod(0), {2, 3}, {1, 2, 3, 4, 10, 18});
  auto m = make(std::vector<double>{3, 1, 4, 1, 5, 9});
  expect_tensor(m.cummax(1), {2, 3}, {3, 3, 4, 1, 5, 9});
  expect_tensor(m.cummin(1), {2, 3}, {3, 1, 1, 1, 1, 1});
  expect_tensor(m.cummax(0), {2, 3}, {3, 1, 4, 3, 5, 9});
  expect_tensor(m.cummin(0), {2, 3}, {3, 1, 4, 1, 1, 4});
}

TEST_P(CumulativeFloat, Scans) {
  check_scans(*this, [&](const std::vector<double>& v) { return f<2>(v, {2, 3}); });
}

TEST_P(CumulativeFloat, NegativeAndFractional) {
  auto a = f<1>({0.5, -1.5, 2, -0.25}, {4});
  expect_tensor(a.cumsum(0), {4}, {0.5, -1, 1, 0.75});
  expect_tensor(a.cumprod(0), {4}, {0.5, -0.75, -1.5, 0.375});
  expect_tensor(a.cummax(0), {4}, {0.5, 0.5, 2, 2});
  expect_tensor(a.cummin(0), {4}, {0.5, -1.5, -1.5, -1.5});
}

TEST_P(CumulativeFloat, ThreeDims) {
  std::vector<double> v(12);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  auto a = f<3>(v, {2, 3, 2});
  expect_tensor(a.cumsum(1), {2, 3, 2}, {0, 1, 2, 4, 6, 9, 6, 7, 14, 16, 24, 27});
}

TEST_P(CumulativeFloat, EmptyAndErrors) {
  auto e = f<2>({}, {0, 3});
  expect_tensor(e.cumsum(0), {0, 3}, {});
  expect_tensor(e.cumprod(1), {0, 3}, {});
  auto a = f<2>({1, 2, 3, 4}, {2, 2});
  expect_op_error([&] { (void)a.cumsum(2); }, "cumsum");
  expect_op_error([&] { (void)a.cumprod(-3); }, "cumprod");
  expect_op_error([&] { (void)a.cummax(5); }, "cummax");
  expect_op_error([&] { (void)a.cummin(2); }, "cummin");
}

TEST_P(CumulativeInt, Scans) {
  check_scans(*this, [&](const std::vector<double>& v) {
    std::vector<std::int64_t> iv(v.begin(), v.end());
    return in<2>(iv, {2, 3});
  });
}

TEST_P(CumulativeSignedInt, Negative) {
  auto a = in<1>({2, -3, 4, -1}, {4});
  expect_tensor(a.cumsum(0), {4}, {2, -1, 3, 2});
  expect_tensor(a.cumprod(0), {4}, {2, -6, -24, 24});
  expect_tensor(a.cummax(0), {4}, {2, 2, 4, 4});
  expect_tensor(a.cummin(0), {4}, {2, -3, -3, -3});
}

BURN_FLOAT_SUITE(CumulativeFloat);
BURN_INT_SUITE(CumulativeInt);
BURN_SIGNED_INT_SUITE(CumulativeSignedInt);

}  // namespace
}  // namespace burn::conformance
