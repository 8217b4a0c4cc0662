// The reference backend's kernels: simple loops over strided element offsets,
// computing in double (floats) or the integer type itself, written for
// obvious correctness, not speed. One overload of `kernel` per IR op; the
// backend reports an op as supported exactly when its overload exists.
#pragma once

#include <span>
#include <vector>

#include <burn/backend/backend.hpp>

#include "backends/host/cpu_tensor.hpp"

namespace burn::ndarray {

struct Context {
  std::shared_ptr<host::Allocator> alloc;
  /// Fresh row-major output.
  host::CpuTensorPtr output(const ir::TensorSpec& spec) const { return host::CpuTensor::allocate(alloc, spec); }
};

using Inputs = std::span<const backend::Input>;
using Outputs = std::span<const ir::TensorSpec>;
using Result = std::vector<backend::PrimitivePtr>;

// creation.cpp
Result kernel(const Context&, const ir::Full&, Inputs, Outputs);
Result kernel(const Context&, const ir::Arange&, Inputs, Outputs);
Result kernel(const Context&, const ir::Cast&, Inputs, Outputs);
// unary.cpp
Result kernel(const Context&, const ir::Unary&, Inputs, Outputs);
Result kernel(const Context&, const ir::Clamp&, Inputs, Outputs);
// binary.cpp
Result kernel(const Context&, const ir::Binary&, Inputs, Outputs);
// reduce.cpp
Result kernel(const Context&, const ir::Reduce&, Inputs, Outputs);
Result kernel(const Context&, const ir::Cumulative&, Inputs, Outputs);
// sort.cpp
Result kernel(const Context&, const ir::Sort&, Inputs, Outputs);
// layout.cpp
Result kernel(const Context&, const ir::Reshape&, Inputs, Outputs);
Result kernel(const Context&, const ir::Permute&, Inputs, Outputs);
Result kernel(const Context&, const ir::Expand&, Inputs, Outputs);
Result kernel(const Context&, const ir::Flip&, Inputs, Outputs);
Result kernel(const Context&, const ir::Unfold&, Inputs, Outputs);
// slice.cpp
Result kernel(const Context&, const ir::Slice&, Inputs, Outputs);
Result kernel(const Context&, const ir::SliceAssign&, Inputs, Outputs);
Result kernel(const Context&, const ir::Cat&, Inputs, Outputs);
// indexing.cpp
Result kernel(const Context&, const ir::Gather&, Inputs, Outputs);
Result kernel(const Context&, const ir::Scatter&, Inputs, Outputs);
Result kernel(const Context&, const ir::Select&, Inputs, Outputs);
Result kernel(const Context&, const ir::SelectAssign&, Inputs, Outputs);
// mask.cpp
Result kernel(const Context&, const ir::MaskWhere&, Inputs, Outputs);
Result kernel(const Context&, const ir::MaskFill&, Inputs, Outputs);
// activation.cpp: softmax over the last dim, gelu
Result kernel(const Context&, const ir::Softmax&, Inputs, Outputs);
Result kernel(const Context&, const ir::Gelu&, Inputs, Outputs);

}  // namespace burn::ndarray

#include "backends/ndarray/module_kernels.hpp"
