// Gather, select, scatter, select_assign, masks and unfold on vulkan:0
// against the reference device.
#include "vk_test.hpp"

namespace {

using burn::DType;
using burn::Shape;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;

/// Random indices in [0, size) of `dtype`.
TensorRef indices(const Shape& s, std::size_t size, DType dtype = DType::I64) {
  return rand(s, dtype, 0, static_cast<double>(size));
}

TEST(VulkanIndexing, GatherEveryDtypeAndIndexType) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::I64, DType::I8, DType::Bool}) {
    const auto x = t == DType::Bool ? rand_bool(Shape{4, 6, 5}) : rand(Shape{4, 6, 5}, t, -9, 9);
    for (std::int64_t dim : {0, 1, 2}) {
      Shape s{3, 4, 2};
      agree("gather " + name_of(t) + " dim " + std::to_string(dim),
            [&](const auto& in) { return burn::detail::gather(in[0], dim, in[1]); },
            {x, indices(s, x->spec.shape[dim])});
    }
  }
  for (DType it : {DType::I32, DType::I16, DType::U8, DType::U64})
    agree("gather with " + name_of(it) + " indices",
          [](const auto& in) { return burn::detail::gather(in[0], 1, in[1]); },
          {rand(Shape{5, 7}, DType::F32), indices(Shape{5, 9}, 7, it)});
  agree("gather from a transposed view",
        [](const auto& in) { return burn::detail::gather(burn::detail::swap_dims(in[0], 0, 1), 0, in[1]); },
        {rand(Shape{6, 8}, DType::F32), indices(Shape{3, 6}, 8)});
}

TEST(VulkanIndexing, SelectAndSelectAssign) {
  for (DType t : {DType::F32, DType::I32, DType::U8, DType::Bool}) {
    const auto x = t == DType::Bool ? rand_bool(Shape{5, 6, 3}) : rand(Shape{5, 6, 3}, t, 0, 9);
    for (std::int64_t dim : {0, 1, 2}) {
      const std::size_t size = x->spec.shape[dim];
      agree("select " + name_of(t) + " dim " + std::to_string(dim),
            [&](const auto& in) { return burn::detail::select(in[0], dim, in[1]); }, {x, indices(Shape{7}, size)});
      Shape vs = x->spec.shape;
      vs[dim] = 9;  // more entries than the dim: duplicates
      const auto values = t == DType::Bool ? rand_bool(vs) : rand(vs, t, 0, 9);
      for (auto reduce : {ir::IndexReduce::Assign, ir::IndexReduce::Add})
        agree("select_assign " + name_of(t) + " dim " + std::to_string(dim) +
                  (reduce == ir::IndexReduce::Add ? " add" : " assign"),
              [&](const auto& in) { return burn::detail::select_assign(in[0], dim, in[1], in[2], reduce); },
              {x, indices(Shape{9}, size, DType::I32), values});
    }
  }
}

TEST(VulkanIndexing, ScatterDuplicatesResolveAsTheSerialLoop) {
  for (DType t : {DType::F32, DType::F64, DType::BF16, DType::I64, DType::I16, DType::Bool}) {
    const auto x = t == DType::Bool ? rand_bool(Shape{4, 5, 6}) : rand(Shape{4, 5, 6}, t, -9, 9);
    for (std::int64_t dim : {0, 1, 2}) {
      const Shape s{3, 4, 5};  // smaller than x outside the dim
      const auto values = t == DType::Bool ? rand_bool(s) : rand(s, t, -9, 9);
      for (auto reduce : {ir::IndexReduce::Assign, ir::IndexReduce::Add})
        agree("scatter " + name_of(t) + " dim " + std::to_string(dim) +
                  (reduce == ir::IndexReduce::Add ? " add" : " assign"),
              [&](const auto& in) { return burn::detail::scatter(in[0], dim, in[1], in[2], reduce); },
              {x, indices(s, x->spec.shape[dim]), values});
    }
  }
  // A line longer than one sort chunk, all into a few targets.
  agree("scatter add of a long line",
        [](const auto& in) { return burn::detail::scatter(in[0], 1, in[1], in[2], ir::IndexReduce::Add); },
        {rand(Shape{2, 4}, DType::F32), indices(Shape{2, 3000}, 4), rand(Shape{2, 3000}, DType::F32)});
  agree("scatter assign of a long line",
        [](const auto& in) { return burn::detail::scatter(in[0], 1, in[1], in[2], ir::IndexReduce::Assign); },
        {rand(Shape{2, 4}, DType::I32), indices(Shape{2, 3000}, 4, DType::U16), rand(Shape{2, 3000}, DType::I32)});
}

TEST(VulkanIndexing, OutOfBoundsIndicesAreErrorsAtTheCall) {
  const auto x = burn::detail::to_device(rand(Shape{2, 3}, DType::F32), vk());
  const auto bad = values({0, 2, 7, 1}, Shape{2, 2}, DType::I64, vk());
  burn::testing::expect_op_error([&] { burn::detail::gather(x, 1, bad); }, "gather",
                                 "index 7 is out of bounds for dim 1 of size 3");
  const auto negative = values({0, -4}, Shape{2}, DType::I32, vk());
  burn::testing::expect_op_error([&] { burn::detail::select(x, 1, negative); }, "select", "index -4 is out of bounds");
  burn::testing::expect_op_error(
      [&] {
        burn::detail::scatter(x, 1, bad, burn::detail::to_device(rand(Shape{2, 2}, DType::F32), vk()),
                              ir::IndexReduce::Add);
      },
      "scatter", "index 7");
  // The device keeps working.
  EXPECT_EQ(burn::detail::to_data(burn::detail::gather(x, 1, values({2, 0}, Shape{2, 1}, DType::I64, vk()))).shape(),
            (Shape{2, 1}));
}

TEST(VulkanIndexing, MaskWhereAndFillBroadcast) {
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::I64, DType::U8, DType::Bool}) {
    auto r = [&](Shape s) { return t == DType::Bool ? rand_bool(s) : rand(s, t, -9, 9); };
    agree("mask_where " + name_of(t), [](const auto& in) { return burn::detail::mask_where(in[0], in[1], in[2]); },
          {r(Shape{4, 1, 5}), rand_bool(Shape{1, 3, 5}), r(Shape{4, 3, 1})});
    agree("mask_fill " + name_of(t),
          [](const auto& in) { return burn::detail::mask_fill(in[0], in[1], burn::Scalar(-3)); },
          {r(Shape{4, 3, 5}), rand_bool(Shape{4, 1, 5})});
  }
  agree("mask_fill f32 NaN",
        [](const auto& in) {
          return burn::detail::mask_fill(in[0], in[1], burn::Scalar(std::numeric_limits<double>::quiet_NaN()));
        },
        {rand(Shape{6, 5}, DType::F32), rand_bool(Shape{6, 5})});
}

TEST(VulkanIndexing, UnfoldIsAView) {
  agree("unfold dim 1", [](const auto& in) { return burn::detail::unfold(in[0], 1, 3, 2); },
        {rand(Shape{2, 9, 3}, DType::F32)});
  agree("unfold then sum",
        [](const auto& in) {
          return burn::detail::reduce_dim(ir::ReduceOp::Sum, burn::detail::unfold(in[0], 0, 4, 1), 2);
        },
        {rand(Shape{10, 2}, DType::I32, -5, 5)});
}

}  // namespace
