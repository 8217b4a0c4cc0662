// The parameter block of a generated elementwise kernel (ElementwiseLayout,
// codegen.hpp), filled for one launch. The backend passes it to
// cuLaunchKernel; the code generator's host test passes the same words to
// the kernel compiled for the CPU, so both check one piece of code.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <burn/scalar.hpp>
#include <burn/shape.hpp>

#include "backends/cuda/codegen.hpp"

namespace burn::cuda {

/// One operand of a launch: the address of its first element and its
/// element strides over the loop's shape (Strided kernels only).
struct OperandView {
  std::uint64_t address = 0;
  std::vector<std::int64_t> strides;
};

/// Row-major element strides of a tensor of `shape` read over `loop` (same
/// rank): 0 along the dimensions it is broadcast.
std::vector<std::int64_t> broadcast_strides(const Shape& shape, const Shape& loop);

/// The 64-bit word a kernel reads for scalar `s` applied to a tensor of
/// `dtype` (ScalarSlot says how each dtype is stored). Half types are
/// rounded to their dtype first, as the CPU backends apply a scalar.
std::uint64_t scalar_word(const Scalar& s, DType dtype);

/// The op a kernel's scalar slot reads: ScalarSlot::op indexes the
/// program's ops, whose scalar values may differ from run to run of one
/// compiled program.
using OpAt = std::function<const ir::Op&(std::uint32_t)>;

/// The words of `kernel`'s parameter block for a launch over `loop`:
/// `operands` are the program's outputs then its inputs, scalars come from
/// the ops `op_at` gives, `error_word` is the device address of the error
/// word.
std::vector<std::uint64_t> parameter_block(const ElementwiseKernel& kernel, const OpAt& op_at, const Shape& loop,
                                           std::span<const OperandView> operands, std::uint64_t error_word);

}  // namespace burn::cuda
