// Reductions along one dim (kept with size 1): picks the family and
// prepares the input; the engine is in reduce_engine.hpp.
#include "backends/flex/binary.hpp"
#include "backends/flex/element.hpp"
#include "backends/flex/reduce_engine.hpp"

namespace burn::flex {

Result kernel(const Context& ctx, const ir::Reduce& op, Inputs in, Outputs out) {
  using ir::ReduceOp;
  auto x = host::as_cpu_ptr(in[0].primitive);
  auto y = ctx.output(out[0]);
  switch (op.op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::Mean: {
      host::CpuTensorPtr keep;
      reduce_sum_like(op.op, lines_of(ctx, x, op.dim, keep), *y);
      return {y};
    }
    case ReduceOp::Any:
    case ReduceOp::All:
      // Reduce the Bool `x != 0` (NaN counts as true): one kernel for every dtype.
      if (x->dtype != DType::Bool) {
        auto truth = ctx.output({in[0].spec.shape, DType::Bool});
        alignas(8) std::byte zero[8] = {};
        const Operand ops[] = {operand(*truth), operand(*x), {zero, dtype_size(x->dtype), host::Strides(x->rank(), 0)}};
        ErrorSlot err;
        for_each_run(truth->shape, ops, comparison_row(ir::BinaryOp::NotEqual, x->dtype), &err);
        x = truth;
      }
      break;
    default: break;
  }
  host::CpuTensorPtr keep;
  const Lines v = lines_of(ctx, x, op.dim, keep);
  // Arg reductions produce i64 positions, converted when another int dtype is asked for.
  const bool arg = op.op == ReduceOp::ArgMax || op.op == ReduceOp::ArgMin;
  host::CpuTensorPtr idx = y;
  if (arg && out[0].dtype != DType::I64) idx = ctx.output({out[0].shape, DType::I64});
  reduce_select_like(op.op, x->dtype, v, *y, arg ? idx->data<std::int64_t>() : nullptr);
  if (idx != y) convert_into(*y, *idx);
  return {y};
}

}  // namespace burn::flex
