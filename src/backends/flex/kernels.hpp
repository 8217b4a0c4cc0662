// Flex: the eager, optimised CPU backend. Views (reshape of contiguous data,
// permute, expand, slice, flip, unfold) are zero-copy; kernels have
// contiguous fast paths and run multi-threaded (OpenMP, the same pool oneDNN
// uses) above a grain size. One overload of `kernel` per IR op; the backend
// reports an op as supported exactly when its overload exists.
#pragma once

#include <atomic>
#include <span>
#include <vector>

#include <burn/backend/backend.hpp>

#include "backends/host/cpu_tensor.hpp"

namespace burn::flex {

using Inputs = std::span<const backend::Input>;

struct Context {
  std::shared_ptr<host::Allocator> alloc;
  /// The device's Device::set_float32_precision setting (nullptr: Highest).
  const std::atomic<Float32Precision>* f32_precision = nullptr;

  /// Whether float32 kernels may use faster, less exact algorithms.
  bool fast_f32() const noexcept {
    return f32_precision && f32_precision->load(std::memory_order_relaxed) != Float32Precision::Highest;
  }
  host::CpuTensorPtr output(const ir::TensorSpec& spec) const { return host::CpuTensor::allocate(alloc, spec); }
  /// In-place execution for elementwise kernels: the storage of the first
  /// candidate input that nobody else can observe (dispatch marked it
  /// reusable and no view shares its buffer) and that is laid out exactly
  /// like the output; otherwise a fresh output.
  host::CpuTensorPtr output_reusing(const ir::TensorSpec& spec, Inputs in,
                                    std::initializer_list<std::size_t> candidates) const;
};

using Outputs = std::span<const ir::TensorSpec>;
using Result = std::vector<backend::PrimitivePtr>;

/// Elements per thread below which a loop stays serial.
inline constexpr std::size_t kGrainSize = 1 << 15;
/// The same for loops of transcendental functions (exp, erf, pow, ...), which
/// cost far more than a load per element: they thread earlier.
inline constexpr std::size_t kMathGrain = kGrainSize / 8;

// creation.cpp
Result kernel(const Context&, const ir::Full&, Inputs, Outputs);
Result kernel(const Context&, const ir::Arange&, Inputs, Outputs);
// cast.cpp
Result kernel(const Context&, const ir::Cast&, Inputs, Outputs);
// unary.cpp
Result kernel(const Context&, const ir::Unary&, Inputs, Outputs);
Result kernel(const Context&, const ir::Clamp&, Inputs, Outputs);
// binary.cpp
Result kernel(const Context&, const ir::Binary&, Inputs, Outputs);
// reduce.cpp, scan.cpp, sort.cpp
Result kernel(const Context&, const ir::Reduce&, Inputs, Outputs);
Result kernel(const Context&, const ir::Cumulative&, Inputs, Outputs);
Result kernel(const Context&, const ir::Sort&, Inputs, Outputs);
// layout.cpp: views (no copy) except slice_assign and cat
Result kernel(const Context&, const ir::Reshape&, Inputs, Outputs);
Result kernel(const Context&, const ir::Permute&, Inputs, Outputs);
Result kernel(const Context&, const ir::Expand&, Inputs, Outputs);
Result kernel(const Context&, const ir::Flip&, Inputs, Outputs);
Result kernel(const Context&, const ir::Slice&, Inputs, Outputs);
Result kernel(const Context&, const ir::Unfold&, Inputs, Outputs);
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

}  // namespace burn::flex

#include "backends/flex/module_kernels.hpp"
