// Family "pool": max, average and adaptive average pooling over N spatial
// dims (channels-first).
#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const MaxPool& p) {
  static constexpr std::string_view names[] = {"max_pool1d", "max_pool2d", "max_pool3d"};
  return spatial_name(p.kernel.size(), names, "max_pool");
}
std::string_view name(const AvgPool& p) {
  static constexpr std::string_view names[] = {"avg_pool1d", "avg_pool2d", "avg_pool3d"};
  return spatial_name(p.kernel.size(), names, "avg_pool");
}
std::string_view name(const AdaptiveAvgPool& p) {
  static constexpr std::string_view names[] = {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"};
  return spatial_name(p.output_size.size(), names, "adaptive_avg_pool");
}

bool memory_bound(const MaxPool&) { return false; }
bool memory_bound(const AvgPool&) { return false; }
bool memory_bound(const AdaptiveAvgPool&) { return false; }

SpecList infer(const MaxPool& p, std::string_view op, Inputs in) {
  const std::size_t n = p.kernel.size();
  expect_inputs(op, in, 1);
  expect_spatial(op, in[0], n);
  expect_numeric(op, in[0].dtype);
  expect_len(op, p.stride, n, "stride");
  expect_len(op, p.padding, n, "padding");
  expect_len(op, p.dilation, n, "dilation");
  const auto& x = in[0].shape;
  TensorSpec values{spatial_output(in[0], x[1], n,
                                   [&](std::size_t i) {
                                     if (p.dilation[i] == 0) fail(op, "dilation must be at least 1");
                                     return pool_out(op, x[i + 2], p.kernel[i], p.stride[i], p.padding[i],
                                                     p.dilation[i], p.ceil_mode, i);
                                   }),
                    in[0].dtype};
  if (!p.with_indices) return {std::move(values)};
  expect_int(op, p.index_dtype);
  std::size_t volume = 1;
  for (std::size_t i = 0; i < n; ++i) volume *= x[i + 2];
  // Flat indices run up to volume - 1; a narrower dtype would wrap.
  const std::size_t bits = dtype_size(p.index_dtype) * 8 - (is_signed_int(p.index_dtype) ? 1 : 0);
  if (volume > 1 && bits < 64 && (volume - 1) >> bits)
    fail(op, "index dtype {} cannot hold flat indices up to {}; use i64 or i32", dtype_name(p.index_dtype), volume - 1);
  TensorSpec indices{values.shape, p.index_dtype};
  return {std::move(values), std::move(indices)};
}

SpecList infer(const AvgPool& p, std::string_view op, Inputs in) {
  const std::size_t n = p.kernel.size();
  expect_inputs(op, in, 1);
  expect_spatial(op, in[0], n);
  expect_float(op, in[0].dtype);
  expect_len(op, p.stride, n, "stride");
  expect_len(op, p.padding, n, "padding");
  const auto& x = in[0].shape;
  return {{spatial_output(in[0], x[1], n,
                          [&](std::size_t i) {
                            return pool_out(op, x[i + 2], p.kernel[i], p.stride[i], p.padding[i], 1, p.ceil_mode, i);
                          }),
           in[0].dtype}};
}

SpecList infer(const AdaptiveAvgPool& p, std::string_view op, Inputs in) {
  const std::size_t n = p.output_size.size();
  expect_inputs(op, in, 1);
  expect_spatial(op, in[0], n);
  expect_float(op, in[0].dtype);
  const auto& x = in[0].shape;
  return {{spatial_output(in[0], x[1], n,
                          [&](std::size_t i) {
                            if (p.output_size[i] == 0) fail(op, "output size must be at least 1");
                            if (x[i + 2] == 0) fail(op, "input spatial dim {} is empty", i);
                            return p.output_size[i];
                          }),
           in[0].dtype}};
}

}  // namespace burn::ir
