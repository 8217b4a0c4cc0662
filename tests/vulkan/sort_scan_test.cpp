// Sort and cumulative scans on vulkan:0 against the reference device.
#include "vk_test.hpp"

#include <limits>

namespace {

using burn::DType;
using burn::Shape;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;

TEST(VulkanSort, ValuesAndStableIndices) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I8, DType::U16}) {
    // Few distinct values: many ties, so the indices check stability.
    for (std::size_t len : {1, 5, 64, 300, 2048, 2049, 5000}) {
      const auto x = rand(Shape{3, len}, t, burn::is_unsigned_int(t) ? 0 : -4, 4);
      for (bool desc : {false, true}) {
        const std::string what = "sort " + name_of(t) + " len " + std::to_string(len) + (desc ? " desc" : "");
        agree(what + " values", [&](const auto& in) { return burn::detail::sort(in[0], 1, desc).first; }, {x});
        agree(what + " indices", [&](const auto& in) { return burn::detail::sort(in[0], 1, desc).second; }, {x});
      }
    }
  }
  const auto x = rand(Shape{40, 3, 7}, DType::F32);
  agree("sort dim 0 of a strided view",
        [](const auto& in) { return burn::detail::sort(burn::detail::swap_dims(in[0], 0, 2), 2, false).second; }, {x});
}

TEST(VulkanSort, NaNIsLargestAndIndexDtypes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto x = values({3, nan, -1, nan, 2, -1, 0, nan}, Shape{8}, DType::F32, ref());
  for (bool desc : {false, true}) {
    agree(std::string("NaN values") + (desc ? " desc" : ""),
          [&](const auto& in) { return burn::detail::sort(in[0], 0, desc).first; }, {x});
    agree(std::string("NaN indices") + (desc ? " desc" : ""),
          [&](const auto& in) { return burn::detail::sort(in[0], 0, desc).second; }, {x});
  }
  for (DType it : {DType::I32, DType::I16, DType::U8})
    agree("indices as " + name_of(it),
          [&](const auto& in) {
            return burn::detail::execute(ir::Sort{1, false, it}, std::span(in.data(), 1))[1];
          },
          {rand(Shape{4, 100}, DType::F32)});
}

TEST(VulkanCumulative, EveryOpShortAndLongDims) {
  using ir::CumulativeOp;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::I64, DType::I32, DType::I8, DType::U32}) {
    for (Shape s : {Shape{5, 7, 3}, Shape{3, 1500, 2}}) {
      for (std::int64_t dim : {0, 1, 2}) {
        for (CumulativeOp op : {CumulativeOp::Sum, CumulativeOp::Prod, CumulativeOp::Max, CumulativeOp::Min}) {
          // Products stay finite (and exact for ints) with values near 1.
          const bool prod = op == CumulativeOp::Prod;
          const auto x = prod ? (burn::is_float(t) ? rand(s, t, 0.999, 1.001) : rand(s, t, 1, 2))
                              : rand(s, t, burn::is_unsigned_int(t) ? 0 : -4, 5);
          agree("cumulative " + std::to_string(static_cast<int>(op)) + " " + name_of(t) + " " + s.to_string() +
                    " dim " + std::to_string(dim),
                [&](const auto& in) { return burn::detail::cumulative(op, in[0], dim); }, {x});
        }
      }
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto with_nan = values({1, 4, nan, 9, -2, 5, 3, nan, 0, 1}, Shape{2, 5}, DType::F32, ref());
  for (auto op : {ir::CumulativeOp::Max, ir::CumulativeOp::Min, ir::CumulativeOp::Sum})
    agree("NaN stays", [&](const auto& in) { return burn::detail::cumulative(op, in[0], 1); }, {with_nan});
  agree("cumsum of a flipped view",
        [](const auto& in) {
          const std::int64_t axes[] = {1};
          return burn::detail::cumulative(ir::CumulativeOp::Sum, burn::detail::flip(in[0], axes), 1);
        },
        {rand(Shape{3, 700}, DType::I32, -5, 5)});
}

}  // namespace
