// Elementwise ops on the CUDA device: each op becomes a program of one
// instruction (the form the fusion layer builds for a chain) and one
// generated kernel, contiguous where every operand has the output's shape
// and strided (broadcasting) otherwise.
#include <fmt/format.h>

#include "backends/cuda/codegen.hpp"
#include "backends/cuda/launch.hpp"
#include "backends/cuda/parameters.hpp"

namespace burn::cuda {

std::vector<Launch> plan_elementwise(const ir::Op& op, std::span<const Operand> inputs,
                                     std::span<const Operand> outputs, std::uint64_t error_word) {
  const Operand& out = outputs[0];
  const std::size_t n = out.spec.shape.num_elements();
  if (n == 0) return {};
  fusion::ElementwiseProgram program;
  program.shape = out.spec.shape;
  program.values = {out.spec};
  program.outputs = {0};
  program.ops = {op};
  fusion::ElementwiseProgram::Instr instr;
  bool contiguous = true;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    program.inputs.push_back(inputs[k].spec);
    instr.args.push_back({true, static_cast<std::uint32_t>(k)});
    contiguous = contiguous && inputs[k].spec.shape == out.spec.shape;
  }
  program.instrs = {instr};
  const ElementwiseKernel kernel = contiguous ? generate_elementwise(program, Indexing::Contiguous, 1)
                                              : generate_elementwise(program, Indexing::Strided, out.spec.shape.rank());

  std::vector<OperandView> operands{{out.address, broadcast_strides(out.spec.shape, out.spec.shape)}};
  for (const Operand& input : inputs)
    operands.push_back({input.address, broadcast_strides(input.spec.shape, out.spec.shape)});
  // A contiguous kernel reads no shape: its loop is the flat element count.
  const Shape loop = kernel.layout.indexing == Indexing::Strided ? out.spec.shape : Shape{n};
  Launch launch;
  launch.params = parameter_block(kernel, program, loop, operands, error_word);
  launch.source = kernel.source;
  return {launch};
}

}  // namespace burn::cuda
