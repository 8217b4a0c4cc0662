// Comparison rows (any dtype -> Bool). Halves compare in float, so NaN
// compares unequal to everything, as IEEE says.
#include "backends/flex/binary.hpp"
#include "backends/flex/element.hpp"

namespace burn::flex {
namespace {

using ir::BinaryOp;

template <class T>
RowFn compare_row(BinaryOp op) {
  using C = compute_t<T>;
  using E = const ErrorSlot&;
  switch (op) {
    case BinaryOp::Equal: return binary_row<T, bool, [](C a, C b, E) { return a == b; }>;
    case BinaryOp::NotEqual: return binary_row<T, bool, [](C a, C b, E) { return a != b; }>;
    default: break;
  }
  if constexpr (!std::is_same_v<T, bool>) {  // ordering is not defined on bools
    switch (op) {
      case BinaryOp::Greater: return binary_row<T, bool, [](C a, C b, E) { return (a > b); }>;
      case BinaryOp::GreaterEqual: return binary_row<T, bool, [](C a, C b, E) { return (a >= b); }>;
      case BinaryOp::Less: return binary_row<T, bool, [](C a, C b, E) { return a < b; }>;
      case BinaryOp::LessEqual: return binary_row<T, bool, [](C a, C b, E) { return a <= b; }>;
      default: break;
    }
  }
  throw_no_kernel(ir::binary_name(op), dtype_of<T>());
}

}  // namespace

RowFn comparison_row(BinaryOp op, DType dtype) {
  return visit_dtype(dtype, [&]<class T>() -> RowFn { return compare_row<T>(op); });
}

}  // namespace burn::flex
