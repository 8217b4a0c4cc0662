// A tensor spec in one call, for the tests that describe operands without data.
#pragma once

#include <burn/burn.hpp>
#include <burn/ir/op.hpp>

namespace burn::cuda::testing {

inline ir::TensorSpec spec(Shape shape, DType dtype = DType::F32) { return {std::move(shape), dtype}; }

}  // namespace burn::cuda::testing
