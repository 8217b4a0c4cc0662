// One line of a reduction on its own (see rows.hpp): what the fused CPU
// executor folds a row with, bit for bit what reduce_rows computes.
#include <cstring>

#include "backends/flex/reduce_engine.hpp"
#include "backends/flex/rows.hpp"

namespace burn::flex {
namespace {

static_assert(kMaxLineReduce == reduce_engine::kChunk, "a fused line must be one chunk of the reduce engine");

template <class Rd>
void reduce_line(const std::byte* line, std::int64_t stride, std::size_t n, std::byte* out) {
  using Out = typename Rd::Out;
  const auto* p = reinterpret_cast<const typename Rd::In*>(line);
  const Out r = n == 0 ? Rd::finish(Rd::init(), 0) : Rd::finish(reduce_engine::run_line<Rd>(p, stride, 0, n), n);
  std::memcpy(out, &r, sizeof(Out));
}

}  // namespace

ReduceLineFn reduce_line_fn(ir::ReduceOp op, DType dtype) {
  if (dtype == DType::Bool) return nullptr;
  return visit_dtype(dtype, [&]<class T>() -> ReduceLineFn {
    if constexpr (std::is_same_v<T, bool>) {
      return nullptr;
    } else {
      switch (op) {
        case ir::ReduceOp::Sum: return reduce_line<SumR<T>>;
        case ir::ReduceOp::Mean: return reduce_line<MeanR<T>>;
        case ir::ReduceOp::Max: return reduce_line<ExtremeR<T, true>>;
        case ir::ReduceOp::Min: return reduce_line<ExtremeR<T, false>>;
        default: return nullptr;
      }
    }
  });
}

}  // namespace burn::flex
