// Shapes whose element count or byte size does not fit in 64 bits: reshape,
// creation, data and broadcasting refuse them with a burn::Error instead of
// building a tensor whose size wrapped around (which the next op crashes on).
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include <burn_test.hpp>

namespace {

using namespace burn;
using burn::testing::all_devices;
using burn::testing::expect_op_error;

// 2^62 + 1: times 4 it wraps around to 4, the count of a 4-element tensor.
constexpr std::int64_t kBig = (std::int64_t{1} << 62) + 1;
constexpr auto kBigU = static_cast<std::size_t>(kBig);

TEST(SizeOverflow, CheckedNumElements) {
  EXPECT_EQ((Shape{2, 3, 4}).checked_num_elements("op"), 24u);
  EXPECT_EQ((Shape{}).checked_num_elements("op"), 1u);
  // A zero dim makes the count 0 however large the others are.
  EXPECT_EQ((Shape{kBigU, 0, kBigU}).checked_num_elements("op", 8), 0u);
  // The largest count and byte size that fit.
  constexpr auto max = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ((Shape{max}).checked_num_elements("op"), max);
  EXPECT_EQ((Shape{std::size_t{1} << 60}).checked_num_elements("op", 4), std::size_t{1} << 60);

  expect_op_error(
      [] {
        (void)(Shape{kBigU, 4}).checked_num_elements("reshape");
      },
      "reshape", "shape [4611686018427387905, 4] is too large: its element count overflows 64 bits");
  expect_op_error([] { (void)(Shape{max + 1}).checked_num_elements("op"); }, "op", "element count overflows");
  expect_op_error(
      [] {
        (void)(Shape{std::size_t{1} << 32, std::size_t{1} << 32}).checked_num_elements("op");
      },
      "op", "element count overflows");
  expect_op_error([] { (void)(Shape{std::size_t{1} << 62}).checked_num_elements("zeros", 4); }, "zeros",
                  "4611686018427387904 elements of 4 bytes overflow 64 bits");
}

TEST(SizeOverflow, ReshapeToAnOverflowingShapeThrows) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const auto t = Tensor<1>::from_floats({1, 2, 3, 4}, device);
    expect_op_error(
        [&] {
          (void)t.reshape({kBig, 4});
        },
        "reshape",
        "cannot reshape [4] (4 elements) into [4611686018427387905, 4]: the dims' element count "
        "overflows 64 bits");
    expect_op_error(
        [&] {
          (void)t.reshape(std::array<std::size_t, 2>{kBigU, 4});
        },
        "reshape", "shape [4611686018427387905, 4] is too large: its element count overflows 64 bits");
    // With an inferred dim the product of the others used to wrap to 0 or 4.
    expect_op_error([&] { (void)t.reshape({-1, kBig, 4}); }, "reshape", "overflows 64 bits");
    expect_op_error(
        [&] {
          (void)t.reshape({std::int64_t{1} << 32, -1, std::int64_t{1} << 32});
        },
        "reshape", "overflows 64 bits");
    // The tensor is untouched, and ordinary reshapes still work.
    t.reshape({2, -1}).to_data().assert_eq(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{2, 2}));
    t.reshape({0, -1}).to_data().assert_eq(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{4, 1}));
  }
}

TEST(SizeOverflow, CreationWithAnOverflowingShapeThrows) {
  for (const auto& device : all_devices()) {
    SCOPED_TRACE(device.to_string());
    const Shape big{kBigU, 4};
    expect_op_error([&] { (void)Tensor<2>::zeros(big, device); }, "full", "element count overflows 64 bits");
    expect_op_error([&] { (void)Tensor<2>::ones(big, device); }, "full", "element count overflows 64 bits");
    expect_op_error([&] { (void)Tensor<2>::full(big, 3.0, device); }, "full", "element count overflows 64 bits");
    expect_op_error([&] { (void)Tensor<2>::empty(big, device); }, "full", "element count overflows 64 bits");
    expect_op_error([&] { (void)Tensor<2, Int>::zeros(big, device); }, "full", "element count overflows 64 bits");
    expect_op_error([&] { (void)Tensor<2, Bool>::full(big, true, device); }, "full", "element count overflows 64 bits");
    expect_op_error([&] { (void)Tensor<2>::random(big, Distribution::uniform(0, 1), device); }, "random",
                    "element count overflows 64 bits");
    // The count fits, the bytes (2^62 f32 values) do not.
    expect_op_error(
        [&] {
          (void)Tensor<1>::zeros({std::size_t{1} << 62}, {device, DType::F32});
        },
        "full", "4611686018427387904 elements of 4 bytes overflow 64 bits");
    // n * n overflows.
    expect_op_error([&] { (void)Tensor<2>::eye(std::size_t{1} << 32, device); }, "eye",
                    "element count overflows 64 bits");
    // The device still creates ordinary tensors.
    Tensor<2>::full({2, 2}, 3.0, device).to_data().assert_eq(TensorData(std::vector<float>{3, 3, 3, 3}, Shape{2, 2}));
  }
}

TEST(SizeOverflow, DataWithAnOverflowingShapeThrows) {
  // Four values "fill" [2^62 + 1, 4] when the count wraps around.
  expect_op_error(
      [] {
        (void)TensorData(std::vector<float>{1, 2, 3, 4}, Shape{kBigU, 4});
      },
      "TensorData", "element count overflows 64 bits");
  expect_op_error(
      [] {
        (void)TensorData(std::vector<std::byte>(16), Shape{kBigU, 4}, DType::F32);
      },
      "TensorData", "element count overflows 64 bits");
  expect_op_error([] { (void)TensorData::zeros(Shape{std::size_t{1} << 62}, DType::F64); }, "TensorData::zeros",
                  "elements of 8 bytes overflow 64 bits");
  // from_data can only be given data that passed these checks.
  const auto t = Tensor<2>::from_data(TensorData(std::vector<float>{1, 2, 3, 4}, Shape{2, 2}), Device::flex());
  EXPECT_EQ(t.dims(), (std::array<std::size_t, 2>{2, 2}));
}

TEST(SizeOverflow, ArangeWithFarApartBoundsCountsInUnsignedArithmetic) {
  const Device device = Device::flex();
  // end - start overflows int64 here; the count is 2 (0 and 2^62).
  Tensor<1, Int>::arange_step(0, std::numeric_limits<std::int64_t>::max(), std::int64_t{1} << 62, {device, DType::I64})
      .to_data()
      .assert_eq(TensorData(std::vector<std::int64_t>{0, std::int64_t{1} << 62}));
  Tensor<1, Int>::arange_step(std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(),
                              std::numeric_limits<std::int64_t>::min(), {device, DType::I64})
      .to_data()
      .assert_eq(TensorData(std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max(), -1}));
  // 2^64 - 1 values do not fit.
  expect_op_error(
      [&] {
        (void)Tensor<1, Int>::arange(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                                     {device, DType::I64});
      },
      "arange", "overflows 64 bits");
}

TEST(SizeOverflow, ExpandAndBroadcastToAnOverflowingShapeThrow) {
  // flex: expand is a zero-copy view, so the 2^32-element operands cost nothing.
  const Device device = Device::flex();
  const auto one = Tensor<2>::ones({1, 1}, device);
  constexpr std::int64_t k32 = std::int64_t{1} << 32;
  expect_op_error([&] { (void)one.expand({k32, k32}); }, "expand", "element count overflows 64 bits");
  const auto column = one.expand({k32, 1});
  const auto row = one.expand({1, k32});
  EXPECT_EQ(column.num_elements(), std::size_t{1} << 32);
  expect_op_error([&] { (void)(column + row); }, "add", "element count overflows 64 bits");
  expect_op_error([&] { (void)column.repeat({1, std::size_t{1} << 32}); }, "repeat", "element count overflows 64 bits");
  expect_op_error([&] { (void)column.matmul(row); }, "matmul", "element count overflows 64 bits");
  // The views themselves still work.
  column.slice({{0, 2}}).to_data().assert_eq(TensorData(std::vector<float>{1, 1}, Shape{2, 1}));
}

TEST(SizeOverflow, SlicesWithStepsNearTheInt64LimitsPickTheRightElements) {
  // Rows 0..3 of an int8 view 2^60 wide: each row holds its row number.
  const Device device = Device::flex();
  constexpr std::int64_t kWide = std::int64_t{1} << 60;
  const auto rows = Tensor<1, Int>::arange(0, 4, {device, DType::I8}).reshape({4, 1}).expand({4, kWide});
  const TensorData expected = TensorData(std::vector<std::int8_t>{0, 1, 2, 3}, Shape{4, 1});
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  // One element each: the first of [2^59, 2^60) and the last of [0, 2^60).
  Range from_middle = Range::from(kWide / 2);
  from_middle.step = kMax;
  Range backwards = Range::all();
  backwards.step = kMin;
  for (const Range& r : {from_middle, backwards}) {
    const auto picked = rows.slice({Range::all(), r});
    ASSERT_EQ(picked.shape(), Shape({4, 1}));
    picked.to_data().assert_eq(expected);
  }
}

TEST(SizeOverflow, ASliceWhoseLastElementWrapsAroundIsRefused) {
  // Hand-made IR, as burn-server receives it: start + (len - 1) * step
  // (4 * 2^62 = 2^64) wraps around to the start, inside the dim.
  const std::vector<ir::TensorSpec> in{{Shape{std::size_t{1} << 62}, DType::I8}};
  ir::Slice wraps{{{std::size_t{1} << 61, 5, std::int64_t{1} << 62}}};
  EXPECT_THROW((void)ir::infer_outputs(ir::Op{wraps}, in), Error);
  ir::Slice fits{{{std::size_t{1} << 61, 2, std::int64_t{1} << 60}}};
  EXPECT_EQ(ir::infer_outputs(ir::Op{fits}, in).at(0).shape, Shape({2}));
}

}  // namespace
