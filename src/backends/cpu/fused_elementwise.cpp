#include "backends/cpu/fused_elementwise.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "backends/flex/element.hpp"
#include "backends/flex/kernels.hpp"
#include "backends/flex/rows.hpp"

namespace burn::cpu_fusion {
namespace {

using fusion::ElementwiseProgram;

constexpr std::size_t kRegisterBytes = CpuElementwiseCompiler::kBlock * 8;

/// Where an operand of an instruction lives during a block.
struct Loc {
  enum Kind : std::uint8_t { Operand, Register, Constant };
  Kind kind = Operand;
  std::uint32_t index = 0;  // loop operand (outputs, then inputs) or register
  std::uint32_t width = 0;  // element bytes
};

/// What an instruction's row reads as its ctx argument.
enum class CtxKind : std::uint8_t { None, ErrorSlot, Constant };

/// A per-run constant derived from the op's scalar values.
enum class ConstantKind : std::uint8_t { None, BinaryScalar, ClampBounds, FillValue };

struct Instr {
  flex::RowFn fn = nullptr;
  SmallVector<Loc, 5> operands;  // result, args..., [scalar]
  CtxKind ctx = CtxKind::None;
  ConstantKind constant = ConstantKind::None;
  DType dtype = DType::F32;      // the dtype the constant is converted to
  std::uint32_t op = 0;          // the group op the constant comes from
};

struct Constant {
  alignas(8) std::array<std::byte, 32> bytes{};
};

class CpuElementwisePlan;

struct RunState {
  const CpuElementwisePlan* plan;
  std::vector<Constant> constants;  // one per instruction
  flex::ErrorSlot err;
};

class CpuElementwisePlan final : public fusion::FusedPlan {
 public:
  std::shared_ptr<cpu::Allocator> alloc;
  cpu::Extents shape;
  std::vector<ir::TensorSpec> inputs;
  std::vector<ir::TensorSpec> outputs;
  std::vector<Instr> instrs;
  std::size_t registers = 0;
  /// Per output: inputs whose storage it may take (same dtype and shape,
  /// read for the last time no later than the output is written).
  std::vector<std::vector<std::size_t>> alias_candidates;
  std::size_t grain = flex::kGrainSize;

  std::vector<backend::PrimitivePtr> run(std::span<const fusion::QueuedOp* const> ops,
                                         std::span<const backend::Input> in) const override;
};

std::byte* register_file(std::size_t bytes) {
  // One per thread, grown on demand: the loop runs rows on the OpenMP pool.
  thread_local std::unique_ptr<std::byte[]> file;
  thread_local std::size_t capacity = 0;
  if (capacity < bytes) {
    file = std::make_unique<std::byte[]>(bytes);
    capacity = bytes;
  }
  return file.get();
}

int fused_row(const void* ctx, std::byte* const* ptrs, const std::int64_t* strides, std::size_t n) {
  const auto& st = *static_cast<const RunState*>(ctx);
  const auto& plan = *st.plan;
  std::byte* regs = register_file(plan.registers * kRegisterBytes);
  for (std::size_t start = 0; start < n; start += CpuElementwiseCompiler::kBlock) {
    const std::size_t len = std::min(CpuElementwiseCompiler::kBlock, n - start);
    for (std::size_t k = 0; k < plan.instrs.size(); ++k) {
      const Instr& ins = plan.instrs[k];
      std::byte* p[5];
      std::int64_t s[5];
      for (std::size_t a = 0; a < ins.operands.size(); ++a) {
        const Loc& l = ins.operands[a];
        switch (l.kind) {
          case Loc::Operand:
            s[a] = strides[l.index];
            p[a] = ptrs[l.index] + static_cast<std::int64_t>(start) * strides[l.index] * l.width;
            break;
          case Loc::Register:
            s[a] = 1;
            p[a] = regs + l.index * kRegisterBytes;
            break;
          case Loc::Constant:
            s[a] = 0;
            p[a] = const_cast<std::byte*>(st.constants[k].bytes.data());
            break;
        }
      }
      const void* c = ins.ctx == CtxKind::ErrorSlot  ? static_cast<const void*>(&st.err)
                      : ins.ctx == CtxKind::Constant ? static_cast<const void*>(st.constants[k].bytes.data())
                                                     : nullptr;
      if (const int rc = ins.fn(c, p, s, len)) return rc;
    }
  }
  return 0;
}

std::vector<backend::PrimitivePtr> CpuElementwisePlan::run(std::span<const fusion::QueuedOp* const> ops,
                                                           std::span<const backend::Input> in) const {
  RunState st{this, std::vector<Constant>(instrs.size()), {}};
  for (std::size_t k = 0; k < instrs.size(); ++k) {
    const Instr& ins = instrs[k];
    const ir::Op& op = ops[ins.op]->op;
    switch (ins.constant) {
      case ConstantKind::None: break;
      case ConstantKind::BinaryScalar: {
        const auto b = flex::scalar_bytes(*std::get<ir::Binary>(op).scalar, ins.dtype);
        std::memcpy(st.constants[k].bytes.data(), b.data(), b.size());
        break;
      }
      case ConstantKind::ClampBounds: {
        const auto b = flex::clamp_bounds(std::get<ir::Clamp>(op), ins.dtype);
        std::memcpy(st.constants[k].bytes.data(), b.bytes.data(), b.bytes.size());
        break;
      }
      case ConstantKind::FillValue: {
        const auto b = flex::scalar_bytes(std::get<ir::MaskFill>(op).value, ins.dtype);
        std::memcpy(st.constants[k].bytes.data(), b.data(), b.size());
        break;
      }
    }
  }

  // Outputs: fresh, or the storage of an input nothing else can observe.
  const flex::Context ctx{alloc};
  std::vector<cpu::CpuTensorPtr> results;
  std::vector<bool> taken(in.size(), false);
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    cpu::CpuTensorPtr y;
    for (std::size_t k : alias_candidates[j]) {
      if (taken[k] || !in[k].reusable) continue;
      auto candidate = ctx.output_reusing(outputs[j], in, {k});
      if (candidate->buffer == cpu::as_cpu(in[k].primitive).buffer) {
        taken[k] = true;
        y = std::move(candidate);
        break;
      }
    }
    results.push_back(y ? std::move(y) : ctx.output(outputs[j]));
  }

  std::vector<flex::Operand> operands;
  operands.reserve(outputs.size() + in.size());
  for (const auto& y : results) operands.push_back(flex::operand(*y));
  for (const auto& x : in) operands.push_back(flex::broadcast_operand(cpu::as_cpu(x.primitive), shape));
  if (!instrs.empty()) {
    if (flex::for_each_run_wide(shape, operands, fused_row, &st, grain) != 0)
      throw ExecutionError("fused elementwise", "an op of the fused group reported an error it should not raise "
                                                "(internal error); run on Device::flex() to see which");
  }
  return {results.begin(), results.end()};
}

}  // namespace

bool CpuElementwiseCompiler::supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                                      std::span<const ir::TensorSpec>) const {
  // Integer ops that can fail (division by zero, negative shifts or powers)
  // stay eager, so their error surfaces at the call as on flex.
  if (const auto* b = std::get_if<ir::Binary>(&op)) {
    if (inputs.empty() || !is_int(inputs[0].dtype)) return true;
    switch (b->op) {
      case ir::BinaryOp::Div:
      case ir::BinaryOp::Rem:
      case ir::BinaryOp::Pow:
      case ir::BinaryOp::Shl:
      case ir::BinaryOp::Shr:
        return false;
      default:
        return true;
    }
  }
  return true;
}

std::shared_ptr<fusion::FusedPlan> CpuElementwiseCompiler::compile(const ElementwiseProgram& prog) const {
  auto plan = std::make_shared<CpuElementwisePlan>();
  plan->alloc = alloc_;
  plan->shape = prog.shape.dims();
  plan->inputs = prog.inputs;
  const std::size_t n_out = prog.outputs.size();

  // Results that are outputs are written straight into the output tensor.
  std::vector<std::int32_t> output_of(prog.values.size(), -1);
  for (std::size_t j = 0; j < n_out; ++j) {
    output_of[prog.outputs[j]] = static_cast<std::int32_t>(j);
    plan->outputs.push_back(prog.values[prog.outputs[j]]);
  }
  // Last instruction reading each value and input: registers are reused
  // after it, and an output may take an input's storage only past it.
  std::vector<std::size_t> value_last(prog.values.size(), 0), input_last(prog.inputs.size(), 0);
  std::vector<std::size_t> producer(prog.values.size(), 0);
  for (std::size_t k = 0; k < prog.instrs.size(); ++k) {
    producer[prog.instrs[k].result] = k;
    for (const auto& a : prog.instrs[k].args) (a.is_input ? input_last[a.index] : value_last[a.index]) = k;
  }

  std::vector<std::int32_t> register_of(prog.values.size(), -1);
  // Free registers with the width of the value they last held: a result may
  // take the register of an argument that dies at its instruction only when
  // the widths match (a widening row would overwrite elements not yet read).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> free_registers;  // (register, width)
  for (std::size_t k = 0; k < prog.instrs.size(); ++k) {
    const auto& pi = prog.instrs[k];
    const ir::Op& op = prog.ops[pi.op];
    Instr ins;
    ins.op = pi.op;
    auto arg_loc = [&](const ElementwiseProgram::Arg& a) -> Loc {
      if (a.is_input)
        return {Loc::Operand, static_cast<std::uint32_t>(n_out + a.index),
                static_cast<std::uint32_t>(dtype_size(prog.inputs[a.index].dtype))};
      const auto w = static_cast<std::uint32_t>(dtype_size(prog.values[a.index].dtype));
      if (output_of[a.index] >= 0) return {Loc::Operand, static_cast<std::uint32_t>(output_of[a.index]), w};
      return {Loc::Register, static_cast<std::uint32_t>(register_of[a.index]), w};
    };
    auto arg_dtype = [&](std::size_t i) {
      const auto& a = pi.args[i];
      return a.is_input ? prog.inputs[a.index].dtype : prog.values[a.index].dtype;
    };
    SmallVector<Loc, 4> args;
    for (const auto& a : pi.args) args.push_back(arg_loc(a));
    // Registers whose value dies here are free for this result: a row reads
    // each element before writing the same position.
    for (const auto& a : pi.args)
      if (!a.is_input && output_of[a.index] < 0 && value_last[a.index] == k && register_of[a.index] >= 0) {
        free_registers.emplace_back(static_cast<std::uint32_t>(register_of[a.index]),
                                    static_cast<std::uint32_t>(dtype_size(prog.values[a.index].dtype)));
        register_of[a.index] = -1;
      }
    const DType in_dtype = arg_dtype(0);
    std::visit(
        [&](const auto& o) {
          using O = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<O, ir::Unary>) {
            ins.fn = flex::unary_row_fn(o.op, in_dtype);
          } else if constexpr (std::is_same_v<O, ir::Binary>) {
            ins.fn = o.op >= ir::BinaryOp::Equal ? flex::comparison_row(o.op, in_dtype)
                                                 : flex::arithmetic_row(o.op, in_dtype);
            ins.ctx = CtxKind::ErrorSlot;
            if (o.scalar) {
              ins.constant = ConstantKind::BinaryScalar;
              ins.dtype = in_dtype;
            }
          } else if constexpr (std::is_same_v<O, ir::Clamp>) {
            ins.fn = flex::clamp_row_fn(in_dtype);
            ins.ctx = CtxKind::Constant;
            ins.constant = ConstantKind::ClampBounds;
            ins.dtype = in_dtype;
          } else if constexpr (std::is_same_v<O, ir::Cast>) {
            ins.fn = flex::cast_row_fn(in_dtype, o.dtype);
          } else if constexpr (std::is_same_v<O, ir::MaskWhere>) {
            ins.fn = flex::mask_where_row_fn(in_dtype);
          } else if constexpr (std::is_same_v<O, ir::MaskFill>) {
            ins.fn = flex::mask_fill_row_fn(in_dtype);
            ins.ctx = CtxKind::Constant;
            ins.constant = ConstantKind::FillValue;
            ins.dtype = in_dtype;
          } else {
            throw Error(ir::op_name(op), "is not an elementwise op (internal error in the fusion planner)");
          }
        },
        op);

    // The result: the output tensor, or a register.
    const auto r = pi.result;
    const auto w = static_cast<std::uint32_t>(dtype_size(prog.values[r].dtype));
    if (output_of[r] >= 0) {
      ins.operands.push_back({Loc::Operand, static_cast<std::uint32_t>(output_of[r]), w});
    } else {
      std::uint32_t reg;
      const auto same_width = std::find_if(free_registers.begin(), free_registers.end(),
                                           [w](const auto& f) { return f.second == w; });
      if (same_width != free_registers.end()) {
        reg = same_width->first;
        free_registers.erase(same_width);
      } else {
        reg = static_cast<std::uint32_t>(plan->registers++);
      }
      register_of[r] = static_cast<std::int32_t>(reg);
      ins.operands.push_back({Loc::Register, reg, w});
    }
    for (const auto& l : args) ins.operands.push_back(l);
    if (ins.constant == ConstantKind::BinaryScalar)
      ins.operands.push_back({Loc::Constant, 0, static_cast<std::uint32_t>(dtype_size(in_dtype))});
    plan->instrs.push_back(std::move(ins));
  }

  plan->alias_candidates.resize(n_out);
  for (std::size_t j = 0; j < n_out; ++j) {
    const auto& spec = plan->outputs[j];
    for (std::size_t i = 0; i < prog.inputs.size(); ++i)
      if (prog.inputs[i] == spec && input_last[i] <= producer[prog.outputs[j]])
        plan->alias_candidates[j].push_back(i);
  }
  // More work per element: threads pay off on smaller tensors.
  plan->grain = std::max<std::size_t>(flex::kGrainSize / std::max<std::size_t>(prog.instrs.size(), 1), 4096);
  return plan;
}

}  // namespace burn::cpu_fusion
