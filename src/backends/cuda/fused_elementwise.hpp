// Fused elementwise groups on the CUDA device: the fusion layer hands over a
// chain of elementwise ops (fusion::ElementwiseProgram) and gets back a plan
// that runs it as one generated kernel, a single pass over the output with
// the intermediates in registers. The kernel's source is generated once, when
// the fusion layer compiles the group; the layer caches the plan by the
// group's signature, and each run only fills the parameter block (addresses
// and the scalar values of this run's ops) and queues the launch.
//
// An op run eagerly is a program of one instruction planned the same way
// (plan_elementwise), so eager and fused kernels share the generator, and
// with it the rounding of every half result: a fused chain computes what
// its ops one by one compute.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <burn/backend/backend.hpp>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/parameters.hpp"
#include "fusion/elementwise.hpp"
#include "fusion/fuser.hpp"

namespace burn::cuda {

/// Where a fused plan's tensors live and where its launches go. The CUDA
/// backend is one (device memory, its stream); the emulation tests provide
/// another over host memory, which runs the same plans on the CPU.
class KernelQueue {
 public:
  virtual ~KernelQueue() = default;
  /// A new row-major tensor of `spec` (uninitialised).
  virtual backend::PrimitivePtr allocate(const ir::TensorSpec& spec, std::string_view op) = 0;
  /// The address of the first element of a tensor allocate() made.
  virtual std::uint64_t address_of(const backend::Primitive& tensor) const = 0;
  /// The address of the 32-bit word kernels report errors in.
  virtual std::uint64_t error_word() const = 0;
  /// Queues `launch` after everything queued before.
  virtual void enqueue(const Launch& launch, std::string_view op) = 0;
};

/// A program's kernel, generated once for every run of the program.
struct ProgramKernel {
  ElementwiseKernel kernel;
  /// The loop the kernel runs over: the program's shape, or its element
  /// count for a contiguous kernel (every operand in the program's shape).
  Shape loop;
};

/// The kernel of `program`: contiguous where every input has the program's
/// shape, strided (inputs broadcast by stride 0) otherwise.
ProgramKernel program_kernel(const fusion::ElementwiseProgram& program);

/// The row kernel of a row-reduce group (generate_rows, codegen.hpp).
ProgramKernel row_program_kernel(const fusion::ElementwiseProgram& program);

/// The launch of `compiled` (generated from `program`) reading `inputs` and
/// writing `outputs` (addresses of row-major tensors, in the program's input
/// and output order), with the scalar operands of `op_at`'s ops. Nothing to
/// launch (an empty loop) gives a launch of 0 items.
Launch program_launch(const ProgramKernel& compiled, const fusion::ElementwiseProgram& program, const OpAt& op_at,
                      std::span<const std::uint64_t> inputs, std::span<const std::uint64_t> outputs,
                      std::uint64_t error_word);

/// The fusion layer's compiler for elementwise groups on `queue`'s device.
class CudaElementwiseCompiler final : public fusion::ElementwiseCompiler {
 public:
  /// `queue` must outlive the compiler and its plans (the fusion backend
  /// owns both the inner backend and its fusers).
  explicit CudaElementwiseCompiler(KernelQueue& queue) : queue_(queue) {}

  /// Every op the generator has code for: errors such as an integer division
  /// by zero are reported at the next sync, fused or not.
  bool supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                std::span<const ir::TensorSpec> outputs) const override;
  std::shared_ptr<fusion::FusedPlan> compile(const fusion::ElementwiseProgram& program) const override;

 private:
  KernelQueue& queue_;
};

/// The fusion layer's compiler for row-reduce groups (softmax, layer norm:
/// last-dim reductions with the elementwise work around them) on `queue`'s
/// device: one thread per row, folding in order as the eager reduction
/// does, so a fused group gives the eager ops' bits.
class CudaRowCompiler final : public fusion::ElementwiseCompiler {
 public:
  explicit CudaRowCompiler(KernelQueue& queue) : queue_(queue) {}

  /// The longest row taken: a thread folds its row once per reduction, so
  /// longer rows are better served by the eager kernels' parallelism.
  static constexpr std::size_t kMaxRow = 4096;

  bool supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                std::span<const ir::TensorSpec> outputs) const override;
  std::shared_ptr<fusion::FusedPlan> compile(const fusion::ElementwiseProgram& program) const override;

 private:
  KernelQueue& queue_;
};

/// Device::cuda()'s fusers over `queue`: elementwise chains and row-reduce
/// groups.
std::vector<std::unique_ptr<fusion::Fuser>> cuda_fusers(KernelQueue& queue);

}  // namespace burn::cuda
