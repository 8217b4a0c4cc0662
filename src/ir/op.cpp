// The dispatchers over ir::Op: each visits the op and calls the overload its
// family's file defines (src/ir/ops/families.hpp). The generic lambdas name
// no op, so adding one to ir::Op needs no change here, and an op whose family
// lacks an overload does not compile.
#include <burn/ir/op.hpp>

#include "ir/ops/families.hpp"
#include "ir/spec_list.hpp"

namespace burn::ir {
namespace {

// Every output: its element count and byte size must fit in a signed 64-bit
// size, or every later size computation would wrap around. Output dims come
// from callers (reshape, full, random, expand, interpolate) or grow from
// valid inputs (broadcast, matmul, cat, unfold), so no op is exempt. This
// runs on every op: the common case is one multiply per dim; Shape's exact
// check (zero dims, the dtype's size, the message) only runs past 2^60.
void expect_addressable(std::string_view op, const TensorSpec& s) {
  constexpr std::size_t kAlwaysFits = std::size_t{1} << 60;  // 2^60 elements of at most 8 bytes
  std::size_t n = 1;
  bool overflow = false;
  for (auto d : s.shape.dims()) overflow |= __builtin_mul_overflow(n, d, &n);
  if (overflow || n > kAlwaysFits) [[unlikely]]
    s.shape.checked_num_elements(op, dtype_size(s.dtype));
}

}  // namespace

std::string_view op_name(const Op& op) {
  return std::visit([](const auto& o) { return name(o); }, op);
}

bool is_memory_bound(const Op& op) {
  return std::visit([](const auto& o) { return memory_bound(o); }, op);
}

// Called by dispatch on every op: one visit, the name computed once, no
// allocation for one or two outputs.
SpecList infer_output_list(const Op& op, std::span<const TensorSpec> inputs) {
  return std::visit(
      [inputs](const auto& o) {
        const std::string_view label = name(o);
        SpecList outputs = infer(o, label, inputs);
        for (const auto& s : outputs) expect_addressable(label, s);
        return outputs;
      },
      op);
}

std::vector<TensorSpec> infer_outputs(const Op& op, std::span<const TensorSpec> inputs) {
  SpecList specs = infer_output_list(op, inputs);
  return {std::make_move_iterator(specs.begin()), std::make_move_iterator(specs.end())};
}

}  // namespace burn::ir
