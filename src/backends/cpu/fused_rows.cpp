#include "backends/cpu/fused_rows.hpp"

#include <algorithm>

#include "backends/cpu/fused_program.hpp"
#include "backends/flex/kernels.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::cpu_fusion {
namespace {

class CpuRowPlan final : public fusion::FusedPlan {
 public:
  CpuRowPlan(CompiledGroup group, std::shared_ptr<cpu::Allocator> alloc) : g(std::move(group)), alloc_(std::move(alloc)) {
    row = g.shape.empty() ? 1 : g.shape.back();
    rows = 1;
    for (std::size_t d = 0; d + 1 < g.shape.size(); ++d) rows *= g.shape[d];
    register_bytes = std::max<std::size_t>(row, 1) * 8;
  }

  std::vector<backend::PrimitivePtr> run(std::span<const fusion::QueuedOp* const> ops,
                                         std::span<const backend::Input> in) const override;

  CompiledGroup g;
  std::size_t row = 1, rows = 1, register_bytes = 8;

 private:
  std::shared_ptr<cpu::Allocator> alloc_;
};


/// Runs rows [begin, end): for each row, every instruction in order.
int run_rows(const CpuRowPlan& plan, const RunConstants& rc, std::span<const flex::Operand> operands,
             std::size_t begin, std::size_t end) {
  const CompiledGroup& g = plan.g;
  const std::size_t rank = g.shape.size();
  std::byte* regs = thread_registers(g.registers * plan.register_bytes);
  SmallVector<std::byte*, 16> base(operands.size(), nullptr);
  SmallVector<std::int64_t, 16> last(operands.size(), 0);
  for (std::size_t k = 0; k < operands.size(); ++k)
    last[k] = rank ? operands[k].strides[rank - 1] : 0;
  for (std::size_t r = begin; r < end; ++r) {
    // The row's first element in every operand (dims before the last).
    for (std::size_t k = 0; k < operands.size(); ++k) {
      std::int64_t off = 0;
      std::size_t rem = r;
      for (std::size_t d = rank - 1; d-- > 0;) {
        off += static_cast<std::int64_t>(rem % g.shape[d]) * operands[k].strides[d];
        rem /= g.shape[d];
      }
      base[k] = operands[k].base + off * static_cast<std::int64_t>(operands[k].width);
    }
    for (std::size_t k = 0; k < g.instrs.size(); ++k) {
      const Instr& ins = g.instrs[k];
      std::byte* p[5];
      std::int64_t s[5];
      place_operands(ins, regs, plan.register_bytes, rc.constants[k],
                     [&](const Loc& l, std::byte*& pa, std::int64_t& sa) {
                       pa = base[l.index];
                       sa = last[l.index];
                     },
                     p, s);
      if (ins.reduce) {
        ins.reduce(p[1], s[1], plan.row, p[0]);
      } else if (const int code = ins.fn(rc.ctx_of(ins, k), p, s, ins.per_row ? 1 : plan.row)) {
        return code;
      }
    }
  }
  return 0;
}

std::vector<backend::PrimitivePtr> CpuRowPlan::run(std::span<const fusion::QueuedOp* const> ops,
                                                   std::span<const backend::Input> in) const {
  cpu::make_inputs_plain(in);  // a convolution may have left one blocked
  RunConstants rc;
  fill_constants(g, ops, rc);
  auto results = allocate_outputs(g, alloc_, in);
  // Every operand is walked over the row shape: statistics ([..., 1]) get a
  // stride of 0 along the row, so a full-row op reads them broadcast.
  std::vector<flex::Operand> operands;
  operands.reserve(results.size() + in.size());
  for (const auto& y : results) operands.push_back(flex::broadcast_operand(*y, g.shape));
  for (const auto& x : in) operands.push_back(flex::broadcast_operand(cpu::as_cpu(x.primitive), g.shape));
  // Empty rows (row == 0) still run: their statistics (a sum of nothing is
  // 0, a mean NaN) and the per-row ops on them have values.
  if (g.instrs.empty() || rows == 0) return {results.begin(), results.end()};
  std::atomic<int> error{0};
  flex::parallel_for(
      rows,
      [&](std::size_t b, std::size_t e) {
        if (const int code = run_rows(*this, rc, operands, b, e)) error.store(code);
      },
      std::max<std::size_t>(1, flex::kGrainSize / (std::max<std::size_t>(row, 1) * std::max<std::size_t>(g.instrs.size(), 1) / 4 + 1)));
  if (error.load())
    throw ExecutionError("fused row reduce", "an op of the fused group reported an error it should not raise "
                                             "(internal error); run on Device::flex() to see which");
  return {results.begin(), results.end()};
}

}  // namespace

std::size_t CpuRowCompiler::max_row() { return flex::kMaxLineReduce; }

bool CpuRowCompiler::supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                              std::span<const ir::TensorSpec>) const {
  return fusable_on_cpu(op, inputs);
}

std::shared_ptr<fusion::FusedPlan> CpuRowCompiler::compile(const fusion::ElementwiseProgram& prog) const {
  return std::make_shared<CpuRowPlan>(compile_group(prog, /*rows=*/true), alloc_);
}

}  // namespace burn::cpu_fusion
