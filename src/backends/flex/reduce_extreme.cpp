// Max, Min, ArgMax, ArgMin, Any and All reductions (see reduce_engine.hpp).
#include "backends/flex/reduce_engine.hpp"

namespace burn::flex {

void reduce_select_like(ir::ReduceOp op, DType dtype, const Lines& v, const host::CpuTensor& y, std::int64_t* indices) {
  using ir::ReduceOp;
  using reduce_engine::reduce;
  if (op == ReduceOp::Any || op == ReduceOp::All) {
    if (dtype != DType::Bool) throw_no_kernel(ir::reduce_name(op), dtype);
    if (op == ReduceOp::Any) reduce<LogicR<bool, true>>(v, y.data<bool>());
    else reduce<LogicR<bool, false>>(v, y.data<bool>());
    return;
  }
  visit_numeric_dtype(ir::reduce_name(op), dtype, [&]<class T>() {
    switch (op) {
      case ReduceOp::Max: return reduce<ExtremeR<T, true>>(v, y.data<T>());
      case ReduceOp::Min: return reduce<ExtremeR<T, false>>(v, y.data<T>());
      case ReduceOp::ArgMax: return reduce<ArgR<T, true>>(v, indices);
      case ReduceOp::ArgMin: return reduce<ArgR<T, false>>(v, indices);
      default: throw_no_kernel(ir::reduce_name(op), dtype_of<T>());
    }
  });
}

}  // namespace burn::flex
