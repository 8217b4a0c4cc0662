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
  return op == BinaryOp::Pow || op == BinaryOp::Atan2 || op == BinaryOp::Rem ? kMathGrain : kGrainSize;
}

[[noreturn]] void fail(BinaryOp op, std::int64_t value) {
  const auto name = ir::binary_name(op);
  switch (op) {
    case BinaryOp::Div:
    case BinaryOp::Rem: throw Error(name, "integer division by zero");
    case BinaryOp::Pow: throw Error(name, "0 cannot be raised to a negative integer power (division by zero)");
    default: throw Error(name, fmt::format("shift count {} is negative", value));
  }
}

// Same shape as the output and dense: the operand can skip the general loop.
bool dense_like(const host::CpuTensor& t, const host::CpuTensor& y) { return t.shape == y.shape && t.is_contiguous(); }

}  // namespace

// The kernel proper returns its one output directly: dispatch's
// single-output path runs it without a result vector (tiny-op latency).
host::CpuTensorPtr single_output_kernel(const Context& ctx, const ir::Binary& op, Inputs in,
                                        const ir::TensorSpec& out) {
  const auto& a = host::as_cpu(in[0].primitive);
  // Either operand's storage may take the result (a donated temporary); a
  // row reads each element before writing the same position.
  auto y = op.scalar ? ctx.output_reusing(out, in, {0}) : ctx.output_reusing(out, in, {0, 1});
  const RowFn fn = is_comparison(op.op) ? comparison_row(op.op, a.dtype) : arithmetic_row(op.op, a.dtype);
  ErrorSlot err;
  int code = 0;
  // A scalar right-hand side is a one-element operand with stride 0.
  alignas(8) std::array<std::byte, 8> scalar{};
  if (op.scalar)
    visit_dtype(a.dtype, [&]<class T>() {
      const T v = op.scalar->as<T>();
      std::memcpy(scalar.data(), &v, sizeof(T));
    });
  const host::CpuTensor* b = op.scalar ? nullptr : &host::as_cpu(in[1].primitive);
  const std::size_t n = y->num_elements();
  if (n <= grain_of(op.op) && dense_like(a, *y) && (!b || dense_like(*b, *y))) {
    // The common small case (same-shape dense operands, one thread): one row,
    // without building strided operands for the general loop (y is dense:
    // fresh, or a reused input that output_reusing checked).
    std::byte* const ptrs[] = {y->base(), a.base(), b ? b->base() : scalar.data()};
    const std::int64_t strides[] = {1, 1, b ? 1 : 0};
    if (n) code = fn(&err, ptrs, strides, n);
  } else {
    const Operand ops[] = {
        operand(*y), broadcast_operand(a, y->shape),
        b ? broadcast_operand(*b, y->shape) : Operand{scalar.data(), dtype_size(a.dtype), host::Strides(y->rank(), 0)}};
    code = for_each_run(y->shape, ops, fn, &err, grain_of(op.op));
  }
  if (code) fail(op.op, err.value.load());
  return y;
}

Result kernel(const Context& ctx, const ir::Binary& op, Inputs in, Outputs out) {
  return {single_output_kernel(ctx, op, in, out[0])};
}

}  // namespace burn::flex
