// Elementwise ops on the CUDA device: each op becomes a program of one
// instruction (the form the fusion layer builds for a chain) and one
// generated kernel, contiguous where every operand has the output's shape
// and strided (broadcasting) otherwise (fused_elementwise.hpp).
#include "backends/cuda/fused_elementwise.hpp"
#include "backends/cuda/launch.hpp"

namespace burn::cuda {

std::vector<Launch> plan_elementwise(const ir::Op& op, std::span<const Operand> inputs,
                                     std::span<const Operand> outputs, std::uint64_t error_word) {
  const Operand& out = outputs[0];
  if (out.spec.shape.num_elements() == 0) return {};
  fusion::ElementwiseProgram program;
  program.shape = out.spec.shape;
  program.values = {out.spec};
  program.outputs = {0};
  program.ops = {op};
  fusion::ElementwiseProgram::Instr instr;
  std::vector<std::uint64_t> input_addresses;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    program.inputs.push_back(inputs[k].spec);
    instr.args.push_back({true, static_cast<std::uint32_t>(k)});
    input_addresses.push_back(inputs[k].address);
  }
  program.instrs = {instr};
  const std::uint64_t output_address = out.address;
  const OpAt op_at = [&op](std::uint32_t) -> const ir::Op& { return op; };
  return {program_launch(program_kernel(program), program, op_at, input_addresses, std::span(&output_address, 1),
                         error_word)};
}

}  // namespace burn::cuda
