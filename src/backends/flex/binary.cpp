// Binary elementwise ops: two tensors broadcast together, or a tensor and a
// scalar right-hand side (converted to the tensor's element type first, as
// in Burn and the reference backend).
#include "backends/flex/binary.hpp"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "backends/flex/element.hpp"

namespace burn::flex {
namespace {

using ir::BinaryOp;

bool is_comparison(BinaryOp op) { return op >= BinaryOp::Equal; }

// Ops cheap enough that threads only pay off on large inputs.
std::size_t grain_of(BinaryOp op) {
  return op == BinaryOp::Pow || op == BinaryOp::Atan2 || op == BinaryOp::Rem ? kGrainSize / 8 : kGrainSize;
}

[[noreturn]] void fail(BinaryOp op, std::int64_t value) {
  const auto name = ir::binary_name(op);
  switch (op) {
    case BinaryOp::Div:
    case BinaryOp::Rem:
      throw Error(name, "integer division by zero");
    case BinaryOp::Pow:
      throw Error(name, "0 cannot be raised to a negative integer power (division by zero)");
    default:
      throw Error(name, fmt::format("shift count {} is negative", value));
  }
}

}  // namespace

Result kernel(const Context& ctx, const ir::Binary& op, Inputs in, Outputs out) {
  const auto& a = cpu::as_cpu(in[0].primitive);
  // Either operand's storage may take the result (a donated temporary); a
  // row reads each element before writing the same position.
  auto y = op.scalar ? ctx.output_reusing(out[0], in, {0}) : ctx.output_reusing(out[0], in, {0, 1});
  const RowFn fn = is_comparison(op.op) ? comparison_row(op.op, a.dtype) : arithmetic_row(op.op, a.dtype);
  ErrorSlot err;
  int code = 0;
  if (op.scalar) {
    // The scalar is a one-element operand with stride 0.
    alignas(8) std::array<std::byte, 8> scalar{};
    visit_dtype(a.dtype, [&]<class T>() {
      const T v = op.scalar->as<T>();
      std::memcpy(scalar.data(), &v, sizeof(T));
    });
    const Operand ops[] = {operand(*y),
                           broadcast_operand(a, y->shape),
                           {scalar.data(), dtype_size(a.dtype), cpu::Strides(y->rank(), 0)}};
    code = for_each_run(y->shape, ops, fn, &err, grain_of(op.op));
  } else {
    const auto& b = cpu::as_cpu(in[1].primitive);
    const Operand ops[] = {operand(*y), broadcast_operand(a, y->shape), broadcast_operand(b, y->shape)};
    code = for_each_run(y->shape, ops, fn, &err, grain_of(op.op));
  }
  if (code) fail(op.op, err.value.load());
  return {y};
}

}  // namespace burn::flex
