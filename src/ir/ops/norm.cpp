// Family "norm": layer normalisation over the last dim, batch normalisation
// over every dim but the channels'.
#include <algorithm>
#include <cmath>

#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {
namespace {

/// Weight and bias (inputs 1 and 2) of x's dtype and shape [n], `n_is`
/// saying in the message what n is for this norm.
void expect_affine_params(std::string_view op, Inputs in, std::size_t n, std::string_view n_is) {
  const char* const names[] = {"weight", "bias"};
  for (std::size_t i = 1; i < 3; ++i) {
    expect_same_dtype(op, in[0], in[i]);
    if (in[i].shape.rank() != 1 || in[i].shape.dims()[0] != n)
      fail(op, "{} has shape {}; it must be [{}], {}", names[i - 1], in[i].shape.to_string(), n, n_is);
  }
}

/// A positive, finite epsilon (added to the variance before its root).
void expect_epsilon(std::string_view op, double epsilon) {
  if (!(epsilon > 0.0) || !std::isfinite(epsilon)) fail(op, "epsilon must be positive and finite, got {}", epsilon);
}

}  // namespace

std::string_view name(const LayerNorm&) { return "layer_norm"; }

// One read of x and one write of y, like an elementwise op.
bool memory_bound(const LayerNorm&) { return true; }

SpecList infer(const LayerNorm& p, std::string_view op, Inputs in) {
  expect_inputs(op, in, 3);
  const TensorSpec& x = in[0];
  expect_float(op, x.dtype);
  if (x.shape.rank() == 0) fail(op, "needs an input of rank at least 1 (it normalises the last dim)");
  expect_epsilon(op, p.epsilon);
  expect_affine_params(op, in, x.shape.dims().back(), "the size of the input's last dim");
  return {x};
}

std::string_view name(const BatchNorm&) { return "batch_norm"; }

// Two reads of x (the statistics, then the normalisation) and one write.
bool memory_bound(const BatchNorm&) { return true; }

SpecList infer(const BatchNorm& p, std::string_view op, Inputs in) {
  expect_inputs(op, in, 3);
  const TensorSpec& x = in[0];
  expect_float(op, x.dtype);
  if (x.shape.rank() < 2) fail(op, "needs an input of rank at least 2 ([N, C, ...]), got {}", x.shape.to_string());
  expect_epsilon(op, p.epsilon);
  const std::size_t c = x.shape.dims()[1];
  // An empty batch gives an empty y and NaN statistics (the mean of nothing).
  if (x.shape.num_elements() != 0 && x.shape.num_elements() / c < 2)
    fail(op, "needs more than one value per channel to take statistics over, got input {}", x.shape.to_string());
  expect_affine_params(op, in, c, "the input's channel count (dim 1)");
  SpecList out(x);
  out.emplace_back(Shape{c}, x.dtype);  // mean
  out.emplace_back(Shape{c}, x.dtype);  // var
  return out;
}

}  // namespace burn::ir
