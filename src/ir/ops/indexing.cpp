// Family "indexing": gather, scatter, select, select_assign, mask_where,
// mask_fill.
#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const Gather&) { return "gather"; }
std::string_view name(const Scatter&) { return "scatter"; }
std::string_view name(const Select&) { return "select"; }
std::string_view name(const SelectAssign&) { return "select_assign"; }
std::string_view name(const MaskWhere&) { return "mask_where"; }
std::string_view name(const MaskFill&) { return "mask_fill"; }

bool memory_bound(const Gather&) { return false; }
bool memory_bound(const Scatter&) { return false; }
bool memory_bound(const Select&) { return false; }
bool memory_bound(const SelectAssign&) { return false; }
bool memory_bound(const MaskWhere&) { return true; }
bool memory_bound(const MaskFill&) { return true; }

namespace {

/// Indices (of the tensor's rank) no larger than the tensor on every dim but `dim`.
void expect_indices_fit(std::string_view op, const TensorSpec& tensor, const TensorSpec& indices, std::size_t dim) {
  for (std::size_t i = 0; i < tensor.shape.rank(); ++i)
    if (i != dim && indices.shape[i] > tensor.shape[i])
      fail(op, "indices of shape {} exceed the tensor's shape {} at dim {}", indices.shape.to_string(),
           tensor.shape.to_string(), i);
}

void expect_1d_indices(std::string_view op, const TensorSpec& indices) {
  if (indices.shape.rank() != 1) fail(op, "indices must be 1-D, got shape {}", indices.shape.to_string());
}

void expect_mask(std::string_view op, const TensorSpec& mask) {
  if (!is_bool(mask.dtype)) fail(op, "the mask must be a bool tensor, got {}", dtype_name(mask.dtype));
}

}  // namespace

SpecList infer(const Gather& g, std::string_view op, Inputs in) {
  expect_inputs(op, in, 2);
  expect_index(op, in[1]);
  expect_same_rank(op, in[0], in[1]);
  expect_dim(op, g.dim, in[0].shape.rank());
  expect_indices_fit(op, in[0], in[1], g.dim);
  return {{in[1].shape, in[0].dtype}};
}

SpecList infer(const Scatter& s, std::string_view op, Inputs in) {
  expect_inputs(op, in, 3);
  expect_index(op, in[1]);
  expect_same_dtype(op, in[0], in[2]);
  expect_same_rank(op, in[0], in[1]);
  expect_dim(op, s.dim, in[0].shape.rank());
  if (in[1].shape != in[2].shape)
    fail(op, "indices {} and values {} must have the same shape", in[1].shape.to_string(), in[2].shape.to_string());
  expect_indices_fit(op, in[0], in[1], s.dim);
  return {in[0]};
}

SpecList infer(const Select& s, std::string_view op, Inputs in) {
  expect_inputs(op, in, 2);
  expect_index(op, in[1]);
  expect_dim(op, s.dim, in[0].shape.rank());
  expect_1d_indices(op, in[1]);
  Shape out = in[0].shape;
  out[s.dim] = in[1].shape[0];
  return {{std::move(out), in[0].dtype}};
}

SpecList infer(const SelectAssign& s, std::string_view op, Inputs in) {
  expect_inputs(op, in, 3);
  expect_index(op, in[1]);
  expect_same_dtype(op, in[0], in[2]);
  expect_dim(op, s.dim, in[0].shape.rank());
  expect_1d_indices(op, in[1]);
  Shape expected = in[0].shape;
  expected[s.dim] = in[1].shape[0];
  if (in[2].shape != expected)
    fail(op, "values of shape {} do not match the selection's shape {}", in[2].shape.to_string(), expected.to_string());
  return {in[0]};
}

SpecList infer(const MaskWhere&, std::string_view op, Inputs in) {
  expect_inputs(op, in, 3);
  expect_mask(op, in[1]);
  expect_same_dtype(op, in[0], in[2]);
  Shape s = broadcast_shapes(op, in[0].shape, in[1].shape);
  s = broadcast_shapes(op, s, in[2].shape);
  return {{std::move(s), in[0].dtype}};
}

SpecList infer(const MaskFill&, std::string_view op, Inputs in) {
  expect_inputs(op, in, 2);
  expect_mask(op, in[1]);
  return {{broadcast_shapes(op, in[0].shape, in[1].shape), in[0].dtype}};
}

}  // namespace burn::ir
