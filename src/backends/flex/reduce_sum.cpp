// Sum, Prod and Mean reductions (see reduce_engine.hpp).
#include "backends/flex/reduce_engine.hpp"

namespace burn::flex {

void reduce_sum_like(ir::ReduceOp op, const Lines& v, const host::CpuTensor& y) {
  using ir::ReduceOp;
  using reduce_engine::reduce;
  visit_numeric_dtype(ir::reduce_name(op), y.dtype, [&]<class T>() {
    T* out = y.data<T>();
    switch (op) {
      case ReduceOp::Sum: return reduce<SumR<T>>(v, out);
      case ReduceOp::Prod: return reduce<ProdR<T>>(v, out);
      case ReduceOp::Mean: return reduce<MeanR<T>>(v, out);
      default: throw_no_kernel(ir::reduce_name(op), dtype_of<T>());
    }
  });
}

}  // namespace burn::flex
