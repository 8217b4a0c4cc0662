// Family "activation": softmax (and its logarithm) over the last dim, and
// gelu.
#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view name(const Softmax& p) { return p.log ? "log_softmax" : "softmax"; }
std::string_view name(const Gelu& p) { return p.tanh ? "gelu_tanh" : "gelu"; }

// Each reads x once and writes y once, like an elementwise op.
bool memory_bound(const Softmax&) { return true; }
bool memory_bound(const Gelu&) { return true; }

SpecList infer(const Softmax&, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  expect_float(op, in[0].dtype);
  if (in[0].shape.rank() == 0) fail(op, "needs an input of rank at least 1 (it normalises along the last dim)");
  return {in[0]};
}

SpecList infer(const Gelu&, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  expect_float(op, in[0].dtype);
  return {in[0]};
}

}  // namespace burn::ir
