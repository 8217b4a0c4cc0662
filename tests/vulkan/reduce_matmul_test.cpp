// Reductions and matmul on vulkan:0 against the reference device.
#include "vk_test.hpp"

#include <limits>

namespace {

using burn::DType;
using burn::Range;
using burn::Shape;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;
using ir::ReduceOp;

TEST(VulkanReduce, EveryOpShortAndLongDims) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I8, DType::U8}) {
    // Values that keep int sums and products exact enough to compare.
    const bool narrow = t == DType::I8 || t == DType::U8;
    for (Shape s : {Shape{5, 7, 3}, Shape{3, 700, 2}, Shape{2, 3, 1000}}) {
      for (std::int64_t dim : {0, 1, 2}) {
        const auto x = rand(s, t, burn::is_unsigned_int(t) ? 0 : -3, narrow ? 3 : 4);
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min, ReduceOp::ArgMax,
                            ReduceOp::ArgMin, ReduceOp::Any, ReduceOp::All}) {
          // Float sums of long dims: the tree sums in f32 in another order.
          agree(
              std::string(ir::reduce_name(op)) + " " + name_of(t) + " " + s.to_string() + " dim " + std::to_string(dim),
              [&](const auto& in) { return burn::detail::reduce_dim(op, in[0], dim); }, {x});
        }
      }
    }
    // Products of values near 1 stay finite.
    agree("prod " + name_of(t), [](const auto& in) { return burn::detail::reduce_dim(ReduceOp::Prod, in[0], 1); },
          {burn::is_float(t) ? rand(Shape{4, 90}, t, 0.9, 1.1) : rand(Shape{4, 90}, t, 1, 2)});
  }
}

TEST(VulkanReduce, StridedWholeAndSpecial) {
  agree("sum of a permuted view",
        [](const auto& in) {
          const std::int64_t axes[] = {2, 0, 1};
          return burn::detail::reduce_dim(ReduceOp::Sum, burn::detail::permute(in[0], axes), 1);
        },
        {rand(Shape{6, 300, 4}, DType::F32)});
  agree("sum of everything", [](const auto& in) { return burn::detail::reduce_all(ReduceOp::Sum, in[0]); },
        {rand(Shape{37, 41}, DType::F32)});
  agree("argmax of a flipped view",
        [](const auto& in) {
          const std::int64_t axes[] = {1};
          return burn::detail::reduce_dim(ReduceOp::ArgMax, burn::detail::flip(in[0], axes), 1);
        },
        {rand(Shape{3, 500}, DType::I32, 0, 5)});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto with_nan = values({1, nan, 3, nan, 0, 2, 9, 9, -1, 4}, Shape{2, 5}, DType::F32, ref());
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min, ReduceOp::ArgMax, ReduceOp::ArgMin, ReduceOp::Sum})
    agree(std::string(ir::reduce_name(op)) + " with NaN",
          [&](const auto& in) { return burn::detail::reduce_dim(op, in[0], 1); }, {with_nan});
  agree("bool any", [](const auto& in) { return burn::detail::reduce_dim(ReduceOp::Any, in[0], 0); },
        {rand_bool(Shape{70, 3})});
  agree("empty dim sum", [](const auto& in) { return burn::detail::reduce_dim(ReduceOp::Sum, in[0], 1); },
        {rand(Shape{3, 0}, DType::F32)});
  agree("empty dim mean", [](const auto& in) { return burn::detail::reduce_dim(ReduceOp::Mean, in[0], 1); },
        {rand(Shape{3, 0}, DType::F32)});
}

TEST(VulkanMatmul, ShapesDtypesAndBroadcast) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I64, DType::I32}) {
    const double lo = burn::is_float(t) ? -1 : -4, hi = burn::is_float(t) ? 1 : 5;
    for (auto [m, k, n] : {std::tuple{1, 1, 1}, std::tuple{5, 7, 3}, std::tuple{64, 16, 64}, std::tuple{130, 70, 65}}) {
      agree("matmul " + name_of(t) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n),
            [](const auto& in) { return burn::detail::matmul(in[0], in[1]); },
            {rand(Shape{std::size_t(m), std::size_t(k)}, t, lo, hi),
             rand(Shape{std::size_t(k), std::size_t(n)}, t, lo, hi)});
    }
    agree("batched broadcast " + name_of(t), [](const auto& in) { return burn::detail::matmul(in[0], in[1]); },
          {rand(Shape{3, 1, 9, 20}, t, lo, hi), rand(Shape{1, 4, 20, 11}, t, lo, hi)});
  }
  agree("transposed operands",
        [](const auto& in) {
          return burn::detail::matmul(burn::detail::swap_dims(in[0], 0, 1), burn::detail::swap_dims(in[1], 0, 1));
        },
        {rand(Shape{33, 17}, DType::F32), rand(Shape{40, 33}, DType::F32)});
  agree("empty inner dim", [](const auto& in) { return burn::detail::matmul(in[0], in[1]); },
        {rand(Shape{3, 0}, DType::F32), rand(Shape{0, 4}, DType::F32)});
}

}  // namespace
