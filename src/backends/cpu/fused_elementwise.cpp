#include "backends/cpu/fused_elementwise.hpp"

#include <algorithm>

#include "backends/cpu/fused_program.hpp"
#include "backends/flex/kernels.hpp"

namespace burn::cpu {
namespace {

constexpr std::size_t kRegisterBytes = CpuElementwiseCompiler::kBlock * 8;

class CpuElementwisePlan final : public fusion::FusedPlan {
 public:
  CpuElementwisePlan(CompiledGroup group, std::shared_ptr<host::Allocator> alloc)
      : g(std::move(group)), alloc_(std::move(alloc)) {
    // More work per element: threads pay off on smaller tensors.
    grain = std::max<std::size_t>(flex::kGrainSize / std::max<std::size_t>(g.instrs.size(), 1), 4096);
  }

  std::vector<backend::PrimitivePtr> run(std::span<const fusion::QueuedOp* const> ops,
                                         std::span<const backend::Input> in) const override;

  CompiledGroup g;
  std::size_t grain;

 private:
  std::shared_ptr<host::Allocator> alloc_;
};

struct BlockRun {
  const CpuElementwisePlan* plan;
  RunConstants rc;
};

// One run of the flat loop (ptrs/strides: outputs, then inputs), evaluated in
// blocks: every instruction over a block before the next block.
int fused_run(const void* ctx, std::byte* const* ptrs, const std::int64_t* strides, std::size_t n) {
  const auto& st = *static_cast<const BlockRun*>(ctx);
  const CompiledGroup& g = st.plan->g;
  std::byte* regs = thread_registers(g.registers * kRegisterBytes);
  for (std::size_t start = 0; start < n; start += CpuElementwiseCompiler::kBlock) {
    const std::size_t len = std::min(CpuElementwiseCompiler::kBlock, n - start);
    for (std::size_t k = 0; k < g.instrs.size(); ++k) {
      const Instr& ins = g.instrs[k];
      std::byte* p[5];
      std::int64_t s[5];
      place_operands(
          ins, regs, kRegisterBytes, st.rc.constants[k],
          [&](const Loc& l, std::byte*& pa, std::int64_t& sa) {
            sa = strides[l.index];
            pa = ptrs[l.index] + static_cast<std::int64_t>(start) * sa * l.width;
          },
          p, s);
      if (const int rc = ins.fn(st.rc.ctx_of(ins, k), p, s, len)) return rc;
    }
  }
  return 0;
}

std::vector<backend::PrimitivePtr> CpuElementwisePlan::run(std::span<const fusion::QueuedOp* const> ops,
                                                           std::span<const backend::Input> in) const {
  host::make_inputs_plain(in);  // a convolution may have left one blocked
  BlockRun st{this, {}};
  fill_constants(g, ops, st.rc);
  auto results = allocate_outputs(g, alloc_, in);
  std::vector<flex::Operand> operands;
  operands.reserve(results.size() + in.size());
  for (const auto& y : results) operands.push_back(flex::operand(*y));
  for (const auto& x : in) operands.push_back(flex::broadcast_operand(host::as_cpu(x.primitive), g.shape));
  if (!g.instrs.empty() && flex::for_each_run_wide(g.shape, operands, fused_run, &st, grain) != 0)
    throw ExecutionError("fused elementwise",
                         "an op of the fused group reported an error it should not raise "
                         "(internal error); run on Device::flex() to see which");
  return {results.begin(), results.end()};
}

}  // namespace

bool CpuElementwiseCompiler::supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                                      std::span<const ir::TensorSpec>) const {
  return fusion::is_elementwise(op) && fusable_on_cpu(op, inputs);
}

std::shared_ptr<fusion::FusedPlan> CpuElementwiseCompiler::compile(const fusion::ElementwiseProgram& prog) const {
  return std::make_shared<CpuElementwisePlan>(compile_group(prog, /*rows=*/false), alloc_);
}

}  // namespace burn::cpu
