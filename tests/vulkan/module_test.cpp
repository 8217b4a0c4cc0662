// Convolutions, pooling and interpolation on vulkan:0 against the reference
// device.
#include "vk_test.hpp"

#include <limits>

namespace {

using burn::DType;
using burn::Shape;
using namespace burn::vktest;
namespace ir = burn::ir;
namespace detail = burn::detail;
using V = std::vector<std::size_t>;

TEST(VulkanConv, GeometriesGroupsAndDtypes) {
  struct Case {
    Shape x, w;
    V stride, padding, dilation;
    std::size_t groups;
  };
  const Case cases[] = {
      {Shape{2, 3, 17}, Shape{4, 3, 3}, {1}, {0}, {1}, 1},
      {Shape{2, 4, 20}, Shape{6, 2, 5}, {2}, {3}, {2}, 2},
      {Shape{2, 3, 9, 11}, Shape{8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 1},
      {Shape{1, 6, 12, 10}, Shape{6, 1, 3, 2}, {2, 1}, {1, 0}, {2, 3}, 6},   // depthwise
      {Shape{3, 70, 5, 6}, Shape{66, 35, 1, 2}, {1, 2}, {0, 1}, {1, 1}, 2},  // more than one tile
      {Shape{1, 2, 5, 6, 4}, Shape{3, 2, 2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, 1},
  };
  for (DType t : {DType::F32, DType::F64, DType::F16}) {
    for (const Case& c : cases) {
      for (bool bias : {false, true}) {
        const std::string what =
            "conv " + name_of(t) + " " + c.x.to_string() + " * " + c.w.to_string() + (bias ? " + bias" : "");
        std::vector<TensorRef> in{rand(c.x, t, -1, 1), rand(c.w, t, -1, 1)};
        if (bias) in.push_back(rand(Shape{c.w[0]}, t, -1, 1));
        const ir::Conv op{c.stride, c.padding, c.dilation, c.groups, bias};
        agree(
            what, [&](const auto& i) { return run(op, i); }, in);
        // The weight gradient of the same geometry, from a gradient of the output's shape.
        const ir::Conv no_bias{c.stride, c.padding, c.dilation, c.groups, false};
        const std::vector<ir::TensorSpec> specs{{c.x, t}, {c.w, t}};
        const auto out_shape = ir::infer_outputs(no_bias, specs)[0].shape;
        V kernel(c.w.dims().begin() + 2, c.w.dims().end());
        const ir::ConvWeightGrad wg{kernel, c.stride, c.padding, c.dilation, c.groups};
        agree("weight grad of " + what, [&](const auto& i) { return run(wg, i); }, {in[0], rand(out_shape, t, -1, 1)});
      }
    }
  }
}

TEST(VulkanConv, TransposedGeometries) {
  struct Case {
    Shape x, w;
    V stride, padding, padding_out, dilation;
    std::size_t groups;
  };
  const Case cases[] = {
      {Shape{2, 3, 7}, Shape{3, 4, 3}, {2}, {1}, {1}, {1}, 1},
      {Shape{2, 4, 5, 6}, Shape{4, 3, 3, 3}, {2, 3}, {1, 0}, {0, 2}, {1, 1}, 2},
      {Shape{1, 2, 4, 5}, Shape{2, 70, 2, 3}, {1, 1}, {0, 1}, {0, 0}, {2, 1}, 1},
      {Shape{1, 2, 3, 4, 2}, Shape{2, 2, 2, 2, 3}, {2, 1, 2}, {0, 1, 1}, {1, 0, 0}, {1, 2, 1}, 1},
  };
  for (DType t : {DType::F32, DType::F64, DType::BF16}) {
    for (const Case& c : cases) {
      for (bool bias : {false, true}) {
        std::vector<TensorRef> in{rand(c.x, t, -1, 1), rand(c.w, t, -1, 1)};
        if (bias) in.push_back(rand(Shape{c.w[1] * c.groups}, t, -1, 1));
        const ir::ConvTranspose op{c.stride, c.padding, c.padding_out, c.dilation, c.groups, bias};
        agree(
            "conv_transpose " + name_of(t) + " " + c.x.to_string() + " * " + c.w.to_string(),
            [&](const auto& i) { return run(op, i); }, in);
      }
    }
  }
}

TEST(VulkanPool, MaxWithIndicesEveryRule) {
  struct Case {
    Shape x;
    V kernel, stride, padding, dilation;
    bool ceil;
  };
  const Case cases[] = {
      {Shape{2, 3, 11}, {3}, {2}, {1}, {1}, false},
      {Shape{2, 2, 9, 8}, {3, 2}, {2, 2}, {1, 1}, {1, 2}, true},
      {Shape{1, 3, 7, 7}, {2, 2}, {3, 3}, {0, 0}, {1, 1}, true},
      {Shape{1, 2, 4, 5, 6}, {2, 3, 2}, {1, 2, 2}, {1, 1, 0}, {1, 1, 2}, false},
  };
  for (DType t : {DType::F32, DType::F64, DType::BF16, DType::I32, DType::I64, DType::U8}) {
    for (const Case& c : cases) {
      const auto x = rand(c.x, t, burn::is_unsigned_int(t) ? 0 : -9, 9);
      const ir::MaxPool op{c.kernel, c.stride, c.padding, c.dilation, c.ceil, true, DType::I64};
      const std::string what = "max_pool " + name_of(t) + " " + c.x.to_string();
      agree(what + " values", [&](const auto& i) { return run(op, i, 0); }, {x});
      agree(what + " indices", [&](const auto& i) { return run(op, i, 1); }, {x});
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto with_nan = values({1, nan, 3, 4, 5, 6, nan, 8, 9}, Shape{1, 1, 9}, DType::F32, ref());
  const ir::MaxPool op{{3}, {2}, {1}, {1}, false, true, DType::I32};
  agree("max_pool NaN values", [&](const auto& i) { return run(op, i, 0); }, {with_nan});
  agree("max_pool NaN indices as i32", [&](const auto& i) { return run(op, i, 1); }, {with_nan});
  agree("max_pool without indices",
        [&](const auto& i) {
          return run(ir::MaxPool{{2, 2}, {2, 2}, {0, 0}, {1, 1}, false, false, DType::I64}, i);
        },
        {rand(Shape{2, 3, 6, 6}, DType::F32)});
}

TEST(VulkanPool, AverageAndAdaptive) {
  for (DType t : {DType::F32, DType::F64, DType::F16}) {
    for (bool include_pad : {true, false}) {
      for (bool ceil : {false, true}) {
        const std::string what = "avg_pool " + name_of(t) + (include_pad ? " include_pad" : "") + (ceil ? " ceil" : "");
        agree(what + " 2d",
              [&](const auto& i) {
                return run(ir::AvgPool{{3, 2}, {2, 2}, {1, 1}, include_pad, ceil}, i);
              },
              {rand(Shape{2, 3, 8, 7}, t)});
        agree(what + " 1d",
              [&](const auto& i) {
                return run(ir::AvgPool{{4}, {3}, {2}, include_pad, ceil}, i);
              },
              {rand(Shape{2, 2, 10}, t)});
      }
    }
    for (V size : {V{3, 4}, V{1, 1}, V{8, 9}})
      agree("adaptive_avg_pool " + name_of(t), [&](const auto& i) { return run(ir::AdaptiveAvgPool{size}, i); },
            {rand(Shape{2, 3, 7, 6}, t)});
    agree("adaptive_avg_pool 3d " + name_of(t),
          [&](const auto& i) {
            return run(ir::AdaptiveAvgPool{{2, 3, 2}}, i);
          },
          {rand(Shape{1, 2, 5, 7, 4}, t)});
  }
}

TEST(VulkanInterpolate, ModesAndCorners) {
  using ir::InterpolateMode;
  for (DType t : {DType::F32, DType::F64, DType::F16}) {
    for (InterpolateMode mode : {InterpolateMode::Nearest, InterpolateMode::Bilinear, InterpolateMode::Bicubic}) {
      for (bool align : {false, true}) {
        for (V size : {V{11, 7}, V{3, 2}, V{1, 1}, V{5, 5}}) {
          agree("interpolate " + name_of(t) + " mode " + std::to_string(static_cast<int>(mode)) +
                    (align ? " aligned" : "") + " to " + std::to_string(size[0]) + "x" + std::to_string(size[1]),
                [&](const auto& i) {
                  return run(ir::Interpolate{size, mode, align}, i);
                },
                {rand(Shape{2, 3, 5, 4}, t)});
        }
      }
    }
  }
}

}  // namespace
