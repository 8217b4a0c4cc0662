#include "backends/cuda/fused_elementwise.hpp"

#include <algorithm>
#include <optional>

#include "fusion/row_reduce.hpp"

namespace burn::cuda {
namespace {

/// A compiled group: elementwise or rows, the run is the same. A group
/// whose every result is dead (dropped before the queue ran) has no
/// outputs, no kernel and nothing to run.
class CudaProgramPlan final : public fusion::FusedPlan {
 public:
  CudaProgramPlan(KernelQueue& queue, fusion::ElementwiseProgram program, bool rows)
      : queue_(queue), program_(std::move(program)), name_(rows ? "fused rows" : "fused elementwise") {
    if (!program_.outputs.empty()) compiled_ = rows ? row_program_kernel(program_) : program_kernel(program_);
  }

  std::vector<backend::PrimitivePtr> run(std::span<const fusion::QueuedOp* const> ops,
                                         std::span<const backend::Input> inputs) const override {
    if (!compiled_) return {};
    std::vector<backend::PrimitivePtr> results;
    std::vector<std::uint64_t> output_addresses, input_addresses;
    results.reserve(program_.outputs.size());
    for (const std::uint32_t v : program_.outputs) {
      auto tensor = queue_.allocate(program_.values[v], name_);
      output_addresses.push_back(queue_.address_of(*tensor));
      results.push_back(std::move(tensor));
    }
    for (const backend::Input& input : inputs) input_addresses.push_back(queue_.address_of(*input.primitive));
    // This run's scalar values: the plan is shared by every batch with the
    // group's signature, whatever scalars its ops carry.
    const OpAt op_at = [ops](std::uint32_t k) -> const ir::Op& { return ops[k]->op; };
    const Launch launch =
        program_launch(*compiled_, program_, op_at, input_addresses, output_addresses, queue_.error_word());
    if (launch.items() > 0) queue_.enqueue(launch, name_);
    return results;
  }

 private:
  KernelQueue& queue_;
  fusion::ElementwiseProgram program_;
  std::optional<ProgramKernel> compiled_;
  std::string_view name_;
};

}  // namespace

ProgramKernel program_kernel(const fusion::ElementwiseProgram& program) {
  const bool contiguous = std::all_of(program.inputs.begin(), program.inputs.end(),
                                      [&](const ir::TensorSpec& input) { return input.shape == program.shape; });
  // A contiguous kernel reads no shape: its loop is the flat element count.
  if (contiguous) return {generate_elementwise(program, Indexing::Contiguous, 1), Shape{program.shape.num_elements()}};
  return {generate_elementwise(program, Indexing::Strided, program.shape.rank()), program.shape};
}

Launch program_launch(const ProgramKernel& compiled, const fusion::ElementwiseProgram& program, const OpAt& op_at,
                      std::span<const std::uint64_t> inputs, std::span<const std::uint64_t> outputs,
                      std::uint64_t error_word) {
  std::vector<OperandView> operands;
  operands.reserve(outputs.size() + inputs.size());
  for (const std::uint64_t address : outputs) operands.push_back({address, row_major_strides(program.shape)});
  for (std::size_t k = 0; k < inputs.size(); ++k)
    operands.push_back({inputs[k], broadcast_strides(program.inputs.at(k).shape, program.shape)});
  Launch launch;
  launch.params = parameter_block(compiled.kernel, op_at, compiled.loop, operands, error_word);
  launch.source = compiled.kernel.source;
  launch.per_block = compiled.kernel.layout.block;
  return launch;
}

bool CudaElementwiseCompiler::supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                                       std::span<const ir::TensorSpec>) const {
  return generates(op, inputs);
}

std::shared_ptr<fusion::FusedPlan> CudaElementwiseCompiler::compile(const fusion::ElementwiseProgram& program) const {
  return std::make_shared<CudaProgramPlan>(queue_, program, /*rows=*/false);
}

ProgramKernel row_program_kernel(const fusion::ElementwiseProgram& program) {
  return {generate_rows(program), program.shape};
}

bool CudaRowCompiler::supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                               std::span<const ir::TensorSpec>) const {
  return generates_in_rows(op, inputs);
}

std::shared_ptr<fusion::FusedPlan> CudaRowCompiler::compile(const fusion::ElementwiseProgram& program) const {
  return std::make_shared<CudaProgramPlan>(queue_, program, /*rows=*/true);
}

std::vector<std::unique_ptr<fusion::Fuser>> cuda_fusers(KernelQueue& queue) {
  std::vector<std::unique_ptr<fusion::Fuser>> fusers;
  fusers.push_back(std::make_unique<fusion::ElementwiseFuser>(std::make_shared<CudaElementwiseCompiler>(queue)));
  fusers.push_back(
      std::make_unique<fusion::RowReduceFuser>(std::make_shared<CudaRowCompiler>(queue), CudaRowCompiler::kMaxRow));
  return fusers;
}

}  // namespace burn::cuda
