// Family "conv": convolution, transposed convolution and convolution's weight
// gradient, over N spatial dims (channels-first).
#include <algorithm>
#include <cstdint>

#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const Conv& c) {
  static constexpr std::string_view names[] = {"conv1d", "conv2d", "conv3d"};
  return spatial_name(c.stride.size(), names, "conv");
}
std::string_view name(const ConvTranspose& c) {
  static constexpr std::string_view names[] = {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"};
  return spatial_name(c.stride.size(), names, "conv_transpose");
}
std::string_view name(const ConvWeightGrad&) { return "conv_weight_grad"; }

bool memory_bound(const Conv&) { return false; }
bool memory_bound(const ConvTranspose&) { return false; }
bool memory_bound(const ConvWeightGrad&) { return false; }

namespace {

/// What convolution and transposed convolution check alike on their inputs:
/// x [N, C, *spatial] (float), weight of x's dtype, optional bias.
void expect_conv_inputs(std::string_view op, Inputs in, std::size_t n, bool has_bias) {
  expect_inputs(op, in, has_bias ? 3 : 2);
  expect_spatial(op, in[0], n);
  expect_float(op, in[0].dtype);
  expect_same_dtype(op, in[0], in[1]);
}

/// The weight: rank n + 2 (`layout` names its dims), and groups >= 1.
void expect_conv_weight(std::string_view op, const Shape& w, std::size_t n, std::size_t groups,
                        std::string_view layout) {
  if (w.rank() != n + 2) fail(op, "weight must have rank {} ({}), got {}", n + 2, layout, w.to_string());
  if (groups == 0) fail(op, "groups must be at least 1");
}

/// The optional bias: one value per output channel, x's dtype.
void expect_conv_bias(std::string_view op, Inputs in, bool has_bias, std::size_t out_channels) {
  if (!has_bias) return;
  expect_same_dtype(op, in[0], in[2]);
  if (in[2].shape != Shape{out_channels})
    fail(op, "bias must have shape [{}], got {}", out_channels, in[2].shape.to_string());
}

/// Output size of a transposed convolution along one axis: the size of the
/// input the matching convolution maps onto `in`, plus padding_out.
std::size_t conv_transpose_out(std::string_view op, const ConvTranspose& c, std::size_t in, std::size_t k,
                               std::size_t axis) {
  if (c.stride[axis] == 0 || c.dilation[axis] == 0) fail(op, "stride and dilation must be at least 1");
  if (c.padding_out[axis] >= std::max(c.stride[axis], c.dilation[axis]))
    fail(op, "padding_out {} must be smaller than stride {} or dilation {}", c.padding_out[axis], c.stride[axis],
         c.dilation[axis]);
  const auto full =
      static_cast<std::int64_t>((in - 1) * c.stride[axis] + c.dilation[axis] * (k - 1) + c.padding_out[axis] + 1);
  const auto size = full - 2 * static_cast<std::int64_t>(c.padding[axis]);
  if (in == 0 || size <= 0) fail(op, "padding {} leaves no output along axis {}", c.padding[axis], axis);
  return static_cast<std::size_t>(size);
}

}  // namespace

SpecList infer(const Conv& c, std::string_view op, Inputs in) {
  const std::size_t n = c.stride.size();
  expect_conv_inputs(op, in, n, c.has_bias);
  expect_len(op, c.padding, n, "padding");
  expect_len(op, c.dilation, n, "dilation");
  const auto& x = in[0].shape;
  const auto& w = in[1].shape;
  expect_conv_weight(op, w, n, c.groups, "[out_channels, in_channels/groups, kernel...]");
  if (x[1] != w[1] * c.groups)
    fail(op, "input has {} channels but the weight {} with {} group(s) expects {}", x[1], w.to_string(), c.groups,
         w[1] * c.groups);
  if (w[0] % c.groups) fail(op, "out channels {} are not divisible by groups {}", w[0], c.groups);
  expect_conv_bias(op, in, c.has_bias, w[0]);
  return {{spatial_output(in[0], w[0], n,
                          [&](std::size_t i) {
                            return conv_out(op, x[i + 2], w[i + 2], c.stride[i], c.padding[i], c.dilation[i], i);
                          }),
           in[0].dtype}};
}

SpecList infer(const ConvTranspose& c, std::string_view op, Inputs in) {
  const std::size_t n = c.stride.size();
  expect_conv_inputs(op, in, n, c.has_bias);
  expect_len(op, c.padding, n, "padding");
  expect_len(op, c.padding_out, n, "padding_out");
  expect_len(op, c.dilation, n, "dilation");
  const auto& x = in[0].shape;
  const auto& w = in[1].shape;
  expect_conv_weight(op, w, n, c.groups, "[in_channels, out_channels/groups, kernel...]");
  if (x[1] != w[0]) fail(op, "input has {} channels but the weight {} expects {}", x[1], w.to_string(), w[0]);
  if (w[0] % c.groups) fail(op, "in channels {} are not divisible by groups {}", w[0], c.groups);
  const std::size_t c_out = w[1] * c.groups;
  expect_conv_bias(op, in, c.has_bias, c_out);
  return {
      {spatial_output(in[0], c_out, n, [&](std::size_t i) { return conv_transpose_out(op, c, x[i + 2], w[i + 2], i); }),
       in[0].dtype}};
}

SpecList infer(const ConvWeightGrad& c, std::string_view op, Inputs in) {
  const std::size_t n = c.stride.size();
  expect_inputs(op, in, 2);
  expect_spatial(op, in[0], n);
  expect_spatial(op, in[1], n);
  expect_float(op, in[0].dtype);
  expect_same_dtype(op, in[0], in[1]);
  expect_len(op, c.kernel, n, "kernel");
  expect_len(op, c.padding, n, "padding");
  expect_len(op, c.dilation, n, "dilation");
  const auto& x = in[0].shape;
  const auto& g = in[1].shape;
  if (c.groups == 0) fail(op, "groups must be at least 1");
  if (x[0] != g[0]) fail(op, "input batch {} and gradient batch {} differ", x[0], g[0]);
  if (x[1] % c.groups || g[1] % c.groups)
    fail(op, "channels {} (input) and {} (gradient) are not divisible by groups {}", x[1], g[1], c.groups);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t o = conv_out(op, x[i + 2], c.kernel[i], c.stride[i], c.padding[i], c.dilation[i], i);
    if (g[i + 2] != o)
      fail(op, "gradient size {} along axis {} does not match the convolution's output size {}", g[i + 2], i, o);
  }
  Shape::Dims out{g[1], x[1] / c.groups};
  out.insert(out.end(), c.kernel.begin(), c.kernel.end());
  return {{Shape(std::move(out)), in[0].dtype}};
}

}  // namespace burn::ir
