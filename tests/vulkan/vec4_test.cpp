// The 4-wide vector paths of matmul and conv (staged loads along either dim,
// vector stores) against the reference device, together with the layouts
// that must fall back to scalar loads: sizes not a multiple of 4, views whose
// offset or strides break the alignment, edge tiles, broadcast batches.
#include "vk_test.hpp"

namespace {

using burn::DType;
using burn::Range;
using burn::Shape;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;
using V = std::vector<std::size_t>;

TensorRef mm(const std::vector<TensorRef>& in) { return burn::detail::matmul(in[0], in[1]); }
TensorRef t01(const TensorRef& t) { return burn::detail::swap_dims(t, -2, -1); }

TEST(VulkanVec4, MatmulEveryLoadPathAndDtype) {
  for (DType t : {DType::F32, DType::F64, DType::I32, DType::I64, DType::U32, DType::F16}) {
    const double lo = burn::is_float(t) ? -1 : 0, hi = burn::is_float(t) ? 1 : 5;
    // m x k x n: aligned, edge tiles with aligned sizes, unaligned k, unaligned n.
    // Every shape for f32; the other dtypes (a pipeline per path each, which
    // lavapipe compiles slowly) on one shape that vectorises and one that does not.
    std::vector<std::tuple<int, int, int>> shapes{{68, 20, 132}, {40, 24, 38}};
    if (t == DType::F32) shapes.insert(shapes.end(), {{64, 32, 64}, {36, 18, 40}, {1, 8, 4}});
    for (auto [m, k, n] : shapes) {
      const std::string dims = name_of(t) + " " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
      const auto a = rand(Shape{std::size_t(m), std::size_t(k)}, t, lo, hi);
      const auto b = rand(Shape{std::size_t(k), std::size_t(n)}, t, lo, hi);
      const auto at = rand(Shape{std::size_t(k), std::size_t(m)}, t, lo, hi);  // seen transposed
      const auto bt = rand(Shape{std::size_t(n), std::size_t(k)}, t, lo, hi);
      agree("rows " + dims, mm, {a, b});
      agree("lhs transposed " + dims, [](const auto& in) { return burn::detail::matmul(t01(in[0]), in[1]); }, {at, b});
      agree("rhs transposed " + dims, [](const auto& in) { return burn::detail::matmul(in[0], t01(in[1])); }, {a, bt});
      agree("both transposed " + dims, [](const auto& in) { return burn::detail::matmul(t01(in[0]), t01(in[1])); },
            {at, bt});
    }
  }
}

TEST(VulkanVec4, MatmulViewsAndBatches) {
  const auto big = rand(Shape{9, 40, 24}, DType::F32);
  const auto rhs = rand(Shape{1, 24, 16}, DType::F32);
  // A batch slice starts at an aligned offset (960) ...
  agree("batch slice",
        [](const auto& in) {
          const Range r[] = {Range(1, 5)};
          return burn::detail::matmul(burn::detail::slice(in[0], r), in[1]);
        },
        {big, rhs});
  // ... and a column slice starting at 1: misaligned rows fall back to scalars.
  agree("column slice from 1",
        [](const auto& in) {
          const Range r[] = {Range::all(), Range::all(), Range(1, 21)};
          const Range rr[] = {Range::all(), Range(2, 22), Range::all()};
          return burn::detail::matmul(burn::detail::slice(in[0], r), burn::detail::slice(in[1], rr));
        },
        {big, rhs});
  agree("column slice from 4",
        [](const auto& in) {
          const Range r[] = {Range::all(), Range::all(), Range(4, 20)};
          const Range rr[] = {Range::all(), Range(4, 20), Range::all()};
          return burn::detail::matmul(burn::detail::slice(in[0], r), burn::detail::slice(in[1], rr));
        },
        {big, rhs});
  agree("row step 2 (strides still aligned)",
        [](const auto& in) {
          const Range r[] = {Range::all(), Range(0, 40, 2), Range::all()};
          return burn::detail::matmul(burn::detail::slice(in[0], r), in[1]);
        },
        {big, rhs});
  agree("broadcast batches", mm, {rand(Shape{3, 1, 12, 8}, DType::F32), rand(Shape{1, 5, 8, 16}, DType::F32)});
  agree("odd batch stride", mm, {rand(Shape{3, 5, 8}, DType::F32), rand(Shape{3, 8, 4}, DType::F32)});
  agree("transposed batch", [](const auto& in) { return burn::detail::matmul(t01(in[0]), in[1]); },
        {rand(Shape{4, 12, 20}, DType::I32, -3, 3), rand(Shape{4, 12, 8}, DType::I32, -3, 3)});
}

TEST(VulkanVec4, ConvVectorPathsAndFallbacks) {
  struct Case {
    Shape x, w;
    V stride, padding;
    std::size_t groups;
  };
  const Case cases[] = {
      {Shape{2, 4, 6, 6}, Shape{8, 4, 3, 3}, {1, 1}, {1, 1}, 1},    // K = 36: weight rows as vectors
      {Shape{3, 8, 4, 5}, Shape{12, 8, 1, 1}, {1, 1}, {0, 0}, 1},   // pointwise, 20 positions per image
      {Shape{2, 8, 4, 4}, Shape{8, 2, 1, 1}, {1, 1}, {0, 0}, 4},    // pointwise, groups
      {Shape{2, 6, 3, 3}, Shape{4, 6, 1, 1}, {1, 1}, {0, 0}, 1},    // pointwise, 9 positions: scalar
      {Shape{2, 4, 8, 8}, Shape{4, 4, 1, 1}, {2, 2}, {0, 0}, 1},    // 1x1 with stride: im2col gathers
      {Shape{1, 3, 70, 4}, Shape{68, 3, 1, 1}, {1, 1}, {0, 0}, 1},  // edge tiles in both dims
  };
  for (DType t : {DType::F32, DType::F64, DType::BF16}) {
    for (const Case& c : cases) {
      std::vector<TensorRef> in{rand(c.x, t, -1, 1), rand(c.w, t, -1, 1), rand(Shape{c.w[0]}, t, -1, 1)};
      const std::string what = name_of(t) + " " + c.x.to_string() + " * " + c.w.to_string();
      const ir::Conv op{c.stride, c.padding, {1, 1}, c.groups, true};
      agree(
          "conv " + what, [&](const auto& i) { return run(op, i); }, in);
      const std::vector<ir::TensorSpec> specs{{c.x, t}, {c.w, t}, {Shape{c.w[0]}, t}};
      const auto out_shape = ir::infer_outputs(op, specs)[0].shape;
      const ir::ConvWeightGrad wg{V(c.w.dims().begin() + 2, c.w.dims().end()), c.stride, c.padding, {1, 1}, c.groups};
      agree("weight grad " + what, [&](const auto& i) { return run(wg, i); }, {in[0], rand(out_shape, t, -1, 1)});
    }
    // Transposed 1x1 (weight read along its output channels) and with stride.
    for (V stride : {V{1, 1}, V{2, 2}}) {
      const ir::ConvTranspose op{stride, {0, 0}, {0, 0}, {1, 1}, 1, true};
      agree("conv_transpose 1x1 " + name_of(t), [&](const auto& i) { return run(op, i); },
            {rand(Shape{2, 3, 4, 5}, t, -1, 1), rand(Shape{3, 8, 1, 1}, t, -1, 1), rand(Shape{8}, t, -1, 1)});
    }
  }
}

TEST(VulkanVec4, ConvInputsThatAreOffsetViews) {
  // Contiguous views that start inside their buffer: the shader must add the
  // offsets (aligned ones take the vector paths, misaligned ones scalars).
  const auto xs = rand(Shape{5, 4, 4, 5}, DType::F32, -1, 1);
  const auto ws = rand(Shape{11, 4, 1, 1}, DType::F32, -1, 1);
  const auto bias = rand(Shape{12}, DType::F32, -1, 1);
  for (std::int64_t first : {1, 2}) {
    agree("offset views " + std::to_string(first),
          [&](const auto& in) {
            const Range rx[] = {Range(first, 5)};
            const Range rw[] = {Range(first, first + 8)};
            const Range rb[] = {Range(first, first + 8)};
            return run(
                ir::Conv{{1, 1}, {0, 0}, {1, 1}, 1, true},
                {burn::detail::slice(in[0], rx), burn::detail::slice(in[1], rw), burn::detail::slice(in[2], rb)});
          },
          {xs, ws, bias});
    agree("weight grad of offset views " + std::to_string(first),
          [&](const auto& in) {
            const Range rx[] = {Range(first, 5)};
            return run(ir::ConvWeightGrad{{1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},
                       {burn::detail::slice(in[0], rx), burn::detail::slice(in[1], rx)});
          },
          {xs, rand(Shape{5, 8, 4, 5}, DType::F32, -1, 1)});
  }
}

TEST(VulkanVec4, PoolAndInterpolateReadOffsetViews) {
  // The same fix for the other kernels that take a contiguous input as is.
  const auto x = rand(Shape{4, 3, 6, 6}, DType::F32, -1, 1);
  const Range r[] = {Range(1, 4)};
  agree("max_pool of an offset view",
        [&](const auto& in) {
          return run(ir::MaxPool{{2, 2}, {2, 2}, {0, 0}, {1, 1}, false, false, DType::I64},
                     {burn::detail::slice(in[0], r)});
        },
        {x});
  agree("avg_pool of an offset view",
        [&](const auto& in) {
          return run(ir::AvgPool{{3, 3}, {1, 1}, {1, 1}, true, false}, {burn::detail::slice(in[0], r)});
        },
        {x});
  agree("adaptive_avg_pool of an offset view",
        [&](const auto& in) {
          return run(ir::AdaptiveAvgPool{{4, 3}}, {burn::detail::slice(in[0], r)});
        },
        {x});
  agree("interpolate of an offset view",
        [&](const auto& in) {
          return run(ir::Interpolate{{9, 4}, ir::InterpolateMode::Bilinear, false}, {burn::detail::slice(in[0], r)});
        },
        {x});
}

}  // namespace
