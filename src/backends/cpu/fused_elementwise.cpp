#include "backends/cpu/fused_elementwise.hpp"

#include <algorithm>

#include "backends/cpu/fused_program.hpp"
#include "backends/flex/kernels.hpp"
#include "backends/flex/layout_elementwise.hpp"
#include "backends/flex/strided.hpp"

namespace burn::cpu {
namespace {

constexpr std::size_t kRegisterBytes = CpuElementwiseCompiler::kBlock * 8;

struct BlockRun;

class CpuElementwisePlan final : public fusion::FusedPlan {
 public:
  CpuElementwisePlan(CompiledGroup group, std::shared_ptr<host::Allocator> alloc)
      : g(std::move(group)), alloc_(std::move(alloc)) {
    // More work per element: threads pay off on smaller tensors.
    grain = std::max<std::size_t>(flex::kGrainSize / std::max<std::size_t>(g.instrs.size(), 1), 4096);
    full_outputs = std::all_of(g.outputs.begin(), g.outputs.end(),
                               [&](const ir::TensorSpec& o) { return o.shape.dims() == g.shape; });
    for (const auto& o : g.outputs) out_dtypes.push_back(o.dtype);
  }

  std::vector<backend::PrimitivePtr> run(std::span<const fusion::QueuedOp* const> ops,
                                         std::span<const backend::Input> in) const override;

  CompiledGroup g;
  /// Whether every output has the loop's shape (then the group may run in
  /// a convolution's activation layout, see run_in_layout).
  bool full_outputs = false;
  std::vector<DType> out_dtypes;
  std::size_t grain;

 private:
  std::vector<backend::PrimitivePtr> run_in_layout(const BlockRun& st, std::span<const backend::Input> in,
                                                   flex::dnn::ActivationLayout layout) const;

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
  BlockRun st{this, {}};
  fill_constants(g, ops, st.rc);
  if (full_outputs && !g.instrs.empty())
    if (const auto layout = flex::dnn::loop_layout(in, g.shape, out_dtypes)) return run_in_layout(st, in, *layout);
  host::make_inputs_plain(in);  // a convolution may have left one blocked
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

// The group over a convolution's output in its activation layout (a
// residual add and relu between two convolutions): the loop runs in memory
// order and the results keep the layout, so neither this group nor the next
// convolution reorders anything (flex's elementwise kernels do the same,
// src/backends/flex/layout_elementwise.hpp).
std::vector<backend::PrimitivePtr> CpuElementwisePlan::run_in_layout(const BlockRun& st,
                                                                     std::span<const backend::Input> in,
                                                                     flex::dnn::ActivationLayout layout) const {
  const flex::Context ctx{alloc_};
  const host::Extents shape = flex::dnn::physical_shape(layout, g.shape);
  std::vector<host::CpuTensorPtr> results, views;
  std::vector<flex::Operand> operands;
  operands.reserve(g.outputs.size() + in.size());
  for (const auto& o : g.outputs) {
    results.push_back(ctx.output({Shape(shape), o.dtype}));
    operands.push_back(flex::operand(*results.back()));
  }
  for (const auto& x : in) {
    views.push_back(flex::dnn::physical_view(ctx, layout, host::as_cpu(x.primitive)));
    operands.push_back(flex::broadcast_operand(*views.back(), shape));
  }
  if (flex::for_each_run_wide(shape, operands, fused_run, &st, grain) != 0)
    throw ExecutionError("fused elementwise",
                         "an op of the fused group reported an error it should not raise "
                         "(internal error); run on Device::flex() to see which");
  std::vector<backend::PrimitivePtr> out;
  out.reserve(results.size());
  for (auto& y : results) out.push_back(flex::dnn::from_physical(ctx, layout, std::move(y), g.shape));
  return out;
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
