// Row functions of the binary ops, split by family so they compile in
// parallel. Each returns the row for `op` on element type `dtype`
// (ptrs = {out, lhs, rhs}, ctx = an ErrorSlot).
#pragma once

#include <burn/ir/op.hpp>

#include "backends/flex/strided.hpp"

namespace burn::flex {

/// Add .. Atan2, bitwise and logical ops: output has the input dtype.
RowFn arithmetic_row(ir::BinaryOp op, DType dtype);
/// Equal .. LessEqual: output Bool.
RowFn comparison_row(ir::BinaryOp op, DType dtype);

}  // namespace burn::flex
