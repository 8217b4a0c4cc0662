// Family "interpolate": resizing [N, C, H, W] by nearest, bilinear or bicubic
// interpolation.
#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const Interpolate&) { return "interpolate"; }

bool memory_bound(const Interpolate&) { return false; }

SpecList infer(const Interpolate& p, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  expect_spatial(op, in[0], 2);
  expect_float(op, in[0].dtype);
  expect_len(op, p.output_size, 2, "output_size");
  for (std::size_t i = 0; i < 2; ++i) {
    if (p.output_size[i] == 0) fail(op, "output size must be at least 1");
    if (in[0].shape[i + 2] == 0) fail(op, "input spatial dim {} is empty", i);
  }
  return {{Shape{in[0].shape[0], in[0].shape[1], p.output_size[0], p.output_size[1]}, in[0].dtype}};
}

}  // namespace burn::ir
