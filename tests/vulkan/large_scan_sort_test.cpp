// Scans and sorts of lines past 2^24 elements, checked at every position, and
// scans of lines long enough for several blocks against the reference.
// Lines longer than one workgroup's block are scanned as parallel blocks
// around a scan of their totals (lavapipe ends a shader after 65,535 loop
// iterations, so one workgroup cannot walk a line that long).
#include "vk_test.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace {

using burn::DType;
using burn::Int;
using burn::Shape;
using burn::Tensor;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;

constexpr std::int64_t kLarge = (std::int64_t{1} << 24) + 12345;

template <class T>
std::size_t count_wrong(const std::vector<T>& got, auto&& want) {
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want(static_cast<std::int64_t>(i))) ++wrong;
  return wrong;
}

Tensor<1, Int> arange_i32(std::int64_t n) { return Tensor<1, Int>::arange(0, n, {vk(), DType::I32}); }
std::vector<std::int32_t> i32s(const Tensor<1, Int>& t) { return t.cast(DType::I32).to_data().to_vec<std::int32_t>(); }

TEST(VulkanLargeScan, EveryPositionPast2To24) {
  const std::int64_t n = kLarge;
  const auto a = arange_i32(n);
  const auto ones = Tensor<1, Int>::ones(Shape{static_cast<std::size_t>(n)}, {vk(), DType::I32});
  const auto sums = i32s(ones.cumsum(0));
  ASSERT_EQ(sums.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(count_wrong(sums, [](std::int64_t i) { return static_cast<std::int32_t>(i + 1); }), 0u) << "cumsum";
  EXPECT_EQ(sums.back(), n);

  // -1 every 3,000,017 elements: the sign flips across blocks.
  constexpr std::int64_t p = 3000017;
  const auto signs = ones.mask_fill(a.remainder(p).equal_elem(0), -1);
  EXPECT_EQ(count_wrong(i32s(signs.cumprod(0)), [](std::int64_t i) { return (i / p) % 2 == 0 ? -1 : 1; }), 0u)
      << "cumprod";

  // A rising trend with dips: the running max changes all along the line.
  const auto v = a - (a.remainder(1000) * 7).remainder(1000) * 3;
  std::vector<std::int32_t> want_max(static_cast<std::size_t>(n));
  std::int32_t m = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto vi = static_cast<std::int32_t>(i - (7 * (i % 1000)) % 1000 * 3);
    m = i == 0 ? vi : std::max(m, vi);
    want_max[static_cast<std::size_t>(i)] = m;
  }
  EXPECT_EQ(count_wrong(i32s(v.cummax(0)), [&](std::int64_t i) { return want_max[static_cast<std::size_t>(i)]; }), 0u)
      << "cummax";
  EXPECT_EQ(
      count_wrong(i32s(v.neg().cummin(0)), [&](std::int64_t i) { return -want_max[static_cast<std::size_t>(i)]; }), 0u)
      << "cummin";

  // Every other element 1 in f32: every running sum is an exact integer.
  const auto f = a.remainder(2).equal_elem(1).to_float().cumsum(0).to_data().to_vec<float>();
  EXPECT_EQ(count_wrong(f, [](std::int64_t i) { return static_cast<float>((i + 1) / 2); }), 0u) << "f32 cumsum";
}

TEST(VulkanLargeScan, OneByteLinePast2To26) {
  // u8 ones, 2^26 + 77 of them: 4,097 blocks; the sums wrap at 256.
  const std::size_t n = (std::size_t{1} << 26) + 77;
  const auto got = Tensor<1, Int>::ones(Shape{n}, {vk(), DType::U8}).cumsum(0).to_data().to_vec<std::uint8_t>();
  EXPECT_EQ(count_wrong(got, [](std::int64_t i) { return static_cast<std::uint8_t>((i + 1) & 0xff); }), 0u);
}

TEST(VulkanLargeScan, ManyBlocksAgreeWithTheReference) {
  using ir::CumulativeOp;
  // 40,000 (3 blocks: a thread scans the totals) and 300,000 (19); lines
  // along the last dim and strided along the first.
  for (DType t : {DType::I32, DType::F32, DType::F16, DType::I8}) {
    for (Shape s : {Shape{2, 40000}, Shape{300000, 2}}) {
      const std::int64_t dim = s[0] == 2 ? 1 : 0;
      for (CumulativeOp op : {CumulativeOp::Sum, CumulativeOp::Prod, CumulativeOp::Max, CumulativeOp::Min}) {
        // Integer values keep float sums exact; products stay near 1.
        const bool prod = op == CumulativeOp::Prod;
        const auto x =
            prod ? (burn::is_float(t) ? rand(s, t, 0.9999, 1.0001) : rand(s, t, 1, 2))
                 : (burn::is_float(t) ? burn::detail::cast(rand(s, DType::I32, -2, 3), t) : rand(s, t, -4, 5));
        agree("cumulative " + std::to_string(static_cast<int>(op)) + " " + name_of(t) + " " + s.to_string(),
              [&](const auto& in) { return burn::detail::cumulative(op, in[0], dim); }, {x});
      }
    }
  }
}

/// Sorts `x` along its only dim with i32 indices (i64 ones would pass
/// lavapipe's 128 MiB binding limit).
std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>> sort_i32(const Tensor<1, Int>& x) {
  const burn::detail::TensorRef in[] = {x.ref()};
  const auto out = burn::detail::execute(ir::Sort{0, false, DType::I32}, in);
  return {burn::detail::to_data(out[0]).to_vec<std::int32_t>(), burn::detail::to_data(out[1]).to_vec<std::int32_t>()};
}

TEST(VulkanLargeSort, ReversedTiesPast2To24StayInOrder) {
  // (n - 1 - i) / 3: runs of three equal keys in descending order, so every
  // key crosses the line, and ties straddle every chunk and merge boundary.
  // One sort only: this one takes about 20 s on lavapipe (a CPU driver) on 2 busy cores.
  const std::int64_t n = kLarge;
  const auto [values, indices] = sort_i32((arange_i32(n).neg() + (n - 1)).div_scalar(3));
  EXPECT_EQ(count_wrong(values, [](std::int64_t q) { return static_cast<std::int32_t>(q / 3); }), 0u) << "values";
  // Key v = q / 3 came from positions max(n - 3 - 3 v, 0) on, in their order.
  EXPECT_EQ(count_wrong(indices,
                        [&](std::int64_t q) {
                          const std::int64_t v = q / 3;
                          return static_cast<std::int32_t>(std::max<std::int64_t>(n - 3 - 3 * v, 0) + q - 3 * v);
                        }),
            0u)
      << "indices";
}

}  // namespace
