// Layout ops on vulkan:0 (views and copies) against the reference device.
#include "vk_test.hpp"

namespace {

using burn::DType;
using burn::Range;
using burn::Shape;
using namespace burn::vktest;
namespace detail = burn::detail;

TEST(VulkanLayout, ViewsAndReshape) {
  for (DType t : {DType::F32, DType::I64, DType::F16, DType::Bool, DType::U8}) {
    const auto x = t == DType::Bool ? rand_bool(Shape{4, 6, 5}) : rand(Shape{4, 6, 5}, t, -50, 50);
    agree("permute " + name_of(t),
          [](const auto& in) {
            const std::int64_t axes[] = {2, 0, 1};
            return burn::detail::permute(in[0], axes);
          },
          {x});
    agree("reshape of a permuted view " + name_of(t),
          [](const auto& in) {
            const std::int64_t axes[] = {2, 0, 1};
            const std::int64_t shape[] = {10, -1};
            return burn::detail::reshape(burn::detail::permute(in[0], axes), shape);
          },
          {x});
    agree("reshape of a contiguous slice " + name_of(t),
          [](const auto& in) {
            const Range r[] = {Range(1, 3)};
            const std::int64_t shape[] = {-1};
            return burn::detail::reshape(burn::detail::slice(in[0], r), shape);
          },
          {x});
    agree("flip " + name_of(t),
          [](const auto& in) {
            const std::int64_t axes[] = {0, 2};
            return burn::detail::flip(in[0], axes);
          },
          {x});
    agree("slice with steps " + name_of(t),
          [](const auto& in) {
            const Range r[] = {Range(3, 0, -1), Range(1, 6, 2), Range(0, 5, 3)};
            return burn::detail::slice(in[0], r);
          },
          {x});
    agree("expand " + name_of(t),
          [](const auto& in) {
            const Range r[] = {Range(0, 1)};
            const std::int64_t shape[] = {3, 6, 5};
            return burn::detail::expand(burn::detail::slice(in[0], r), shape);
          },
          {x});
  }
}

TEST(VulkanLayout, CatAndSliceAssign) {
  for (DType t : {DType::F32, DType::I8, DType::F64, DType::I16}) {
    const auto a = rand(Shape{3, 4}, t, -9, 9), b = rand(Shape{3, 2}, t, -9, 9), c = rand(Shape{3, 5}, t, -9, 9);
    agree("cat dim 1 " + name_of(t), [](const auto& in) { return burn::detail::cat(in, 1); }, {a, b, c});
    agree("cat dim 0 of views " + name_of(t),
          [](const auto& in) {
            const std::vector<burn::detail::TensorRef> parts = {burn::detail::swap_dims(in[0], 0, 1),
                                                                burn::detail::swap_dims(in[1], 0, 1)};
            return burn::detail::cat(parts, 0);
          },
          {a, b});
    agree("slice_assign " + name_of(t),
          [](const auto& in) {
            const Range r[] = {Range(0, 3, 2), Range(1, 3)};
            return burn::detail::slice_assign(in[0], r, in[1]);
          },
          {a, rand(Shape{2, 2}, t, -9, 9)});
  }
}

}  // namespace
