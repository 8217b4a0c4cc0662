// Int bitwise ops and shifts, tensor and scalar forms.
#include "conformance.hpp"

#include <limits>

namespace burn::conformance {
namespace {

class BitwiseInt : public ComboTest {};
class BitwiseSignedInt : public ComboTest {};

TEST_P(BitwiseInt, AndOrXor) {
  auto a = in<2>({3, 5, 12, 0, 7, 9}, {2, 3});
  auto b = in<2>({6, 3, 10, 1, 7, 4}, {2, 3});
  auto out = a.bitwise_and(b);
  EXPECT_EQ(out.dtype(), dt());
  expect_tensor(out, {2, 3}, {2, 1, 8, 0, 7, 0});
  expect_tensor(a.bitwise_or(b), {2, 3}, {7, 7, 14, 1, 7, 13});
  expect_tensor(a.bitwise_xor(b), {2, 3}, {5, 6, 6, 1, 0, 13});
  expect_tensor(a.bitwise_and_scalar(6), {2, 3}, {2, 4, 4, 0, 6, 0});
  expect_tensor(a.bitwise_or_scalar(1), {2, 3}, {3, 5, 13, 1, 7, 9});
  expect_tensor(a.bitwise_xor_scalar(5), {2, 3}, {6, 0, 9, 5, 2, 12});
  // Broadcast.
  expect_tensor(a.bitwise_and(in<2>({1, 4, 8}, {1, 3})), {2, 3}, {1, 4, 8, 0, 4, 8});
}

TEST_P(BitwiseInt, Shifts) {
  auto a = in<1>({1, 2, 3, 5}, {4});
  expect_tensor(a.bitwise_left_shift(in<1>({1, 2, 3, 0}, {4})), {4}, {2, 8, 24, 5});
  expect_tensor(a.bitwise_left_shift_scalar(2), {4}, {4, 8, 12, 20});
  auto c = in<1>({16, 17, 64, 5}, {4});
  expect_tensor(c.bitwise_right_shift(in<1>({1, 2, 3, 0}, {4})), {4}, {8, 4, 8, 5});
  expect_tensor(c.bitwise_right_shift_scalar(2), {4}, {4, 4, 16, 1});
}

TEST_P(BitwiseInt, Not) {
  auto a = in<1>({0, 5, 100}, {3});
  const TensorData out = a.bitwise_not().to_data();
  ASSERT_EQ(out.dtype(), dt());
  // ~x: every bit flipped in the dtype's width.
  const std::vector<std::uint64_t> x = {0, 5, 100};
  visit_dtype(dt(), [&]<class T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const auto got = out.to_vec<T>();
      for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(got[i], static_cast<T>(~static_cast<T>(x[i]))) << i;
    }
  });
  expect_tensor(a.bitwise_not().bitwise_not(), {3}, {0, 5, 100});
}

TEST_P(BitwiseSignedInt, NegativeValues) {
  auto a = in<1>({-8, -1, 6}, {3});
  expect_tensor(a.bitwise_not(), {3}, {7, 0, -7});
  expect_tensor(a.bitwise_and_scalar(3), {3}, {0, 3, 2});
  expect_tensor(a.bitwise_or(in<1>({1, 0, -8}, {3})), {3}, {-7, -1, -2});
  expect_tensor(a.bitwise_xor_scalar(-1), {3}, {7, 0, -7});
  // Right shifts of negative values are arithmetic (as in PyTorch).
  expect_tensor(a.bitwise_right_shift_scalar(1), {3}, {-4, -1, 3});
  expect_tensor(a.bitwise_left_shift_scalar(1), {3}, {-16, -2, 12});
}

TEST_P(BitwiseInt, EmptyAndErrors) {
  auto e = in<2>({}, {0, 3});
  expect_tensor(e.bitwise_and(e), {0, 3}, {});
  expect_tensor(e.bitwise_not(), {0, 3}, {});
  expect_op_error([&] { (void)in<1>({1, 2}, {2}).bitwise_and(in<1>({1, 2, 3}, {3})); }, "bitwise_and");
  expect_op_error([&] { (void)in<1>({1, 2}, {2}).bitwise_left_shift(in<1>({1, 2, 3}, {3})); }, "bitwise_left_shift");
}

TEST(BitwiseFloat, FloatTensorsAreRejected) {
  // The typed API forbids it; the IR refuses a float reaching an int-only op.
  for (const auto& d : burn::testing::all_devices()) {
    auto t = Tensor<1>::ones({2}, d);
    expect_op_error([&] { (void)burn::detail::binary(ir::BinaryOp::BitAnd, t.ref(), t.ref()); }, "bitwise_and");
  }
}

BURN_INT_SUITE(BitwiseInt);
BURN_SIGNED_INT_SUITE(BitwiseSignedInt);

}  // namespace
}  // namespace burn::conformance
