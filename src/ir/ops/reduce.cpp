// Family "reduce": reductions along a dim, cumulative scans and sort.
#include "ir/ops/checks.hpp"
#include "ir/ops/families.hpp"

namespace burn::ir {

std::string_view reduce_name(ReduceOp op) {
  static constexpr std::string_view names[] = {"sum", "prod", "mean", "max", "min", "argmax", "argmin", "any", "all"};
  return names[static_cast<int>(op)];
}

std::string_view name(const Reduce& r) { return reduce_name(r.op); }
std::string_view name(const Cumulative& c) {
  static constexpr std::string_view names[] = {"cumsum", "cumprod", "cummax", "cummin"};
  return names[static_cast<int>(c.op)];
}
std::string_view name(const Sort&) { return "sort"; }

bool memory_bound(const Reduce&) { return false; }
bool memory_bound(const Cumulative&) { return false; }
bool memory_bound(const Sort&) { return false; }

SpecList infer(const Reduce& r, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  expect_dim(op, r.dim, in[0].shape.rank());
  const bool logical = r.op == ReduceOp::Any || r.op == ReduceOp::All;
  if (!logical) expect_numeric(op, in[0].dtype);
  const bool needs_element = r.op == ReduceOp::Max || r.op == ReduceOp::Min || r.op == ReduceOp::ArgMax ||
                             r.op == ReduceOp::ArgMin || (r.op == ReduceOp::Mean && is_int(in[0].dtype));
  // An empty reduced dim has no identity for these ops; when another dim is
  // empty too, the result has no elements and nothing is reduced.
  Shape reduced = in[0].shape;
  reduced[r.dim] = 1;
  if (needs_element && in[0].shape[r.dim] == 0 && reduced.num_elements() != 0)
    fail(op, "cannot reduce an empty dim {} of shape {}: there is no identity", r.dim, in[0].shape.to_string());
  DType dt = in[0].dtype;
  if (r.op == ReduceOp::ArgMax || r.op == ReduceOp::ArgMin) {
    expect_int(op, r.index_dtype);
    dt = r.index_dtype;
  }
  if (logical) dt = DType::Bool;
  return {{std::move(reduced), dt}};
}

SpecList infer(const Cumulative& c, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  expect_numeric(op, in[0].dtype);
  expect_dim(op, c.dim, in[0].shape.rank());
  return {in[0]};
}

SpecList infer(const Sort& s, std::string_view op, Inputs in) {
  expect_inputs(op, in, 1);
  expect_numeric(op, in[0].dtype);
  expect_dim(op, s.dim, in[0].shape.rank());
  expect_int(op, s.index_dtype);
  return {in[0], {in[0].shape, s.index_dtype}};
}

}  // namespace burn::ir
