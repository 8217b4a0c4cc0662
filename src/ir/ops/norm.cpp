// Family "norm": layer normalisation over the last dim.
#include <cmath>

#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const LayerNorm&) { return "layer_norm"; }

// One read of x and one write of y, like an elementwise op.
bool memory_bound(const LayerNorm&) { return true; }

SpecList infer(const LayerNorm& p, std::string_view op, Inputs in) {
  expect_inputs(op, in, 3);
  const TensorSpec& x = in[0];
  expect_float(op, x.dtype);
  if (x.shape.rank() == 0) fail(op, "needs an input of rank at least 1 (it normalises the last dim)");
  if (!(p.epsilon > 0.0) || !std::isfinite(p.epsilon))
    fail(op, "epsilon must be positive and finite, got {}", p.epsilon);
  const std::size_t n = x.shape.dims().back();
  const char* const names[] = {"weight", "bias"};
  for (std::size_t i = 1; i < 3; ++i) {
    expect_same_dtype(op, x, in[i]);
    if (in[i].shape.rank() != 1 || in[i].shape.dims()[0] != n)
      fail(op, "{} has shape {}; it must be [{}], the size of the input's last dim", names[i - 1],
           in[i].shape.to_string(), n);
  }
  return {x};
}

}  // namespace burn::ir
