#include "backends/cpu/fused_program.hpp"

#include <algorithm>
#include <cstring>

#include "backends/flex/kernels.hpp"
#include "fusion/op_kind.hpp"
#include "fusion/row_reduce.hpp"

namespace burn::cpu {
namespace {

// Binds an op to flex's row function (a reduction: its row fold) for its
// input dtype, with the constant it reads. One overload per op of the
// elementwise and reduction kinds.
template <class O>
void bind(Instr&, const O&, DType) = delete;
void bind(Instr& ins, const ir::Unary& o, DType in) { ins.fn = flex::unary_row_fn(o.op, in); }
void bind(Instr& ins, const ir::Binary& o, DType in) {
  ins.fn = o.op >= ir::BinaryOp::Equal ? flex::comparison_row(o.op, in) : flex::arithmetic_row(o.op, in);
  ins.ctx = CtxKind::ErrorSlot;
  if (o.scalar) {
    ins.constant = ConstantKind::BinaryScalar;
    ins.dtype = in;
  }
}
void bind(Instr& ins, const ir::Clamp&, DType in) {
  ins.fn = flex::clamp_row_fn(in);
  ins.ctx = CtxKind::Constant;
  ins.constant = ConstantKind::ClampBounds;
  ins.dtype = in;
}
void bind(Instr& ins, const ir::Cast& o, DType in) { ins.fn = flex::cast_row_fn(in, o.dtype); }
void bind(Instr& ins, const ir::MaskWhere&, DType in) { ins.fn = flex::mask_where_row_fn(in); }
void bind(Instr& ins, const ir::MaskFill&, DType in) {
  ins.fn = flex::mask_fill_row_fn(in);
  ins.ctx = CtxKind::Constant;
  ins.constant = ConstantKind::FillValue;
  ins.dtype = in;
}
void bind(Instr& ins, const ir::Gelu& o, DType in) { ins.fn = flex::gelu_row_fn(o.tanh, in); }
void bind(Instr& ins, const ir::Reduce& o, DType in) {
  ins.reduce = flex::reduce_line_fn(o.op, in);
  ins.per_row = true;
}

}  // namespace

bool fusable_on_cpu(const ir::Op& op, std::span<const ir::TensorSpec> inputs) {
  // Integer ops that can fail (division by zero, negative shifts or powers)
  // stay eager, so their error surfaces at the call as on flex.
  if (const auto* b = std::get_if<ir::Binary>(&op)) {
    if (inputs.empty() || !is_int(inputs[0].dtype)) return true;
    switch (b->op) {
      case ir::BinaryOp::Div:
      case ir::BinaryOp::Rem:
      case ir::BinaryOp::Pow:
      case ir::BinaryOp::Shl:
      case ir::BinaryOp::Shr: return false;
      case ir::BinaryOp::Add:
      case ir::BinaryOp::Sub:
      case ir::BinaryOp::Mul:
      case ir::BinaryOp::Max:
      case ir::BinaryOp::Min:
      case ir::BinaryOp::Atan2:
      case ir::BinaryOp::BitAnd:
      case ir::BinaryOp::BitOr:
      case ir::BinaryOp::BitXor:
      case ir::BinaryOp::LogicalAnd:
      case ir::BinaryOp::LogicalOr:
      case ir::BinaryOp::LogicalXor:
      case ir::BinaryOp::Equal:
      case ir::BinaryOp::NotEqual:
      case ir::BinaryOp::Greater:
      case ir::BinaryOp::GreaterEqual:
      case ir::BinaryOp::Less:
      case ir::BinaryOp::LessEqual: return true;
    }
    return true;
  }
  // Reductions: the float folds whose row function matches flex's kernel.
  if (const auto* r = std::get_if<ir::Reduce>(&op))
    return !inputs.empty() && is_float(inputs[0].dtype) && flex::reduce_line_fn(r->op, inputs[0].dtype) != nullptr;
  return fusion::is_elementwise(op);
}

CompiledGroup compile_group(const fusion::ElementwiseProgram& prog, bool rows) {
  CompiledGroup g;
  g.shape = prog.shape.dims();
  g.inputs = prog.inputs;
  const std::size_t n_out = prog.outputs.size();
  // Rows of one element are their own statistics (every op runs once per
  // row either way); empty rows are not: their statistics (a sum of nothing)
  // still hold one value per row that per-row ops must compute.
  const bool has_rows = rows && !g.shape.empty() && g.shape.back() != 1;
  const Shape stat = has_rows ? fusion::row_stat_shape(prog.shape) : prog.shape;
  auto is_stat = [&](const ir::TensorSpec& s) { return has_rows && s.shape == stat; };

  // Results that are outputs are written straight into the output tensor.
  std::vector<std::int32_t> output_of(prog.values.size(), -1);
  for (std::size_t j = 0; j < n_out; ++j) {
    output_of[prog.outputs[j]] = static_cast<std::int32_t>(j);
    g.outputs.push_back(prog.values[prog.outputs[j]]);
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
    const auto r = pi.result;
    ins.per_row = is_stat(prog.values[r]);
    auto arg_loc = [&](const fusion::ElementwiseProgram::Arg& a) -> Loc {
      if (a.is_input)
        return {Loc::Operand, false, static_cast<std::uint32_t>(n_out + a.index),
                static_cast<std::uint32_t>(dtype_size(prog.inputs[a.index].dtype))};
      const auto w = static_cast<std::uint32_t>(dtype_size(prog.values[a.index].dtype));
      if (output_of[a.index] >= 0) return {Loc::Operand, false, static_cast<std::uint32_t>(output_of[a.index]), w};
      const bool broadcast = !ins.per_row && is_stat(prog.values[a.index]);
      return {Loc::Register, broadcast, static_cast<std::uint32_t>(register_of[a.index]), w};
    };
    const DType in_dtype =
        pi.args[0].is_input ? prog.inputs[pi.args[0].index].dtype : prog.values[pi.args[0].index].dtype;
    SmallVector<Loc, 4> args;
    for (const auto& a : pi.args) args.push_back(arg_loc(a));
    // Registers whose value dies here are free for this result when they are
    // read position by position: a row reads each element before writing the
    // same position. (A reduction's result is one element, written after its
    // whole row is read.) A statistic read broadcast is read again for every
    // element, so its register is freed only after the result has one.
    std::vector<std::uint32_t> dying_broadcast;
    for (std::size_t i = 0; i < pi.args.size(); ++i) {
      const auto& a = pi.args[i];
      if (a.is_input || output_of[a.index] >= 0 || value_last[a.index] != k || register_of[a.index] < 0) continue;
      if (args[i].broadcast) {
        dying_broadcast.push_back(a.index);
        continue;
      }
      free_registers.emplace_back(static_cast<std::uint32_t>(register_of[a.index]),
                                  static_cast<std::uint32_t>(dtype_size(prog.values[a.index].dtype)));
      register_of[a.index] = -1;
    }
    std::visit(
        [&](const auto& o) {
          constexpr fusion::OpKind kind = fusion::kind_of<std::decay_t<decltype(o)>>;
          if constexpr (kind == fusion::OpKind::Elementwise) {
            bind(ins, o, in_dtype);
          } else if constexpr (kind == fusion::OpKind::Reduction) {
            if (!rows) throw Error(ir::op_name(op), "a reduction reached the blocked executor (fusion planner bug)");
            bind(ins, o, in_dtype);
          } else {
            // Anchors and eager ops: elementwise and row groups never hold them.
            throw Error(ir::op_name(op), "cannot run in a fused CPU group (fusion planner bug)");
          }
        },
        op);

    // The result: the output tensor, or a register.
    const auto w = static_cast<std::uint32_t>(dtype_size(prog.values[r].dtype));
    if (output_of[r] >= 0) {
      ins.operands.push_back({Loc::Operand, false, static_cast<std::uint32_t>(output_of[r]), w});
    } else {
      std::uint32_t reg;
      const auto same_width =
          std::find_if(free_registers.begin(), free_registers.end(), [w](const auto& f) { return f.second == w; });
      if (same_width != free_registers.end()) {
        reg = same_width->first;
        free_registers.erase(same_width);
      } else {
        reg = static_cast<std::uint32_t>(g.registers++);
      }
      register_of[r] = static_cast<std::int32_t>(reg);
      ins.operands.push_back({Loc::Register, false, reg, w});
    }
    for (auto v : dying_broadcast)
      if (register_of[v] >= 0) {
        free_registers.emplace_back(static_cast<std::uint32_t>(register_of[v]),
                                    static_cast<std::uint32_t>(dtype_size(prog.values[v].dtype)));
        register_of[v] = -1;
      }
    for (const auto& l : args) ins.operands.push_back(l);
    if (ins.constant == ConstantKind::BinaryScalar)
      ins.operands.push_back({Loc::Constant, false, 0, static_cast<std::uint32_t>(dtype_size(in_dtype))});
    g.instrs.push_back(std::move(ins));
  }

  g.alias_candidates.resize(n_out);
  for (std::size_t j = 0; j < n_out; ++j) {
    const auto& spec = g.outputs[j];
    for (std::size_t i = 0; i < prog.inputs.size(); ++i)
      if (prog.inputs[i] == spec && input_last[i] <= producer[prog.outputs[j]]) g.alias_candidates[j].push_back(i);
  }
  return g;
}

void fill_constants(const CompiledGroup& g, std::span<const fusion::QueuedOp* const> ops, RunConstants& rc) {
  rc.constants.resize(g.instrs.size());
  for (std::size_t k = 0; k < g.instrs.size(); ++k) {
    const Instr& ins = g.instrs[k];
    const ir::Op& op = ops[ins.op]->op;
    auto& dst = rc.constants[k].bytes;
    switch (ins.constant) {
      case ConstantKind::None: break;
      case ConstantKind::BinaryScalar: {
        const auto b = flex::scalar_bytes(*std::get<ir::Binary>(op).scalar, ins.dtype);
        std::memcpy(dst.data(), b.data(), b.size());
        break;
      }
      case ConstantKind::ClampBounds: {
        const auto b = flex::clamp_bounds(std::get<ir::Clamp>(op), ins.dtype);
        std::memcpy(dst.data(), b.bytes.data(), b.bytes.size());
        break;
      }
      case ConstantKind::FillValue: {
        const auto b = flex::scalar_bytes(std::get<ir::MaskFill>(op).value, ins.dtype);
        std::memcpy(dst.data(), b.data(), b.size());
        break;
      }
    }
  }
}

std::byte* thread_registers(std::size_t bytes) {
  thread_local std::unique_ptr<std::byte[]> file;
  thread_local std::size_t capacity = 0;
  if (capacity < bytes) {
    file = std::make_unique<std::byte[]>(bytes);
    capacity = bytes;
  }
  return file.get();
}

std::vector<host::CpuTensorPtr> allocate_outputs(const CompiledGroup& g, const std::shared_ptr<host::Allocator>& alloc,
                                                 std::span<const backend::Input> in) {
  const flex::Context ctx{alloc};
  std::vector<host::CpuTensorPtr> results;
  results.reserve(g.outputs.size());
  std::vector<bool> taken(in.size(), false);
  for (std::size_t j = 0; j < g.outputs.size(); ++j) {
    host::CpuTensorPtr y;
    for (std::size_t k : g.alias_candidates[j]) {
      if (taken[k] || !in[k].reusable) continue;
      auto candidate = ctx.output_reusing(g.outputs[j], in, {k});
      if (candidate->buffer == host::as_cpu(in[k].primitive).buffer) {
        taken[k] = true;
        y = std::move(candidate);
        break;
      }
    }
    results.push_back(y ? std::move(y) : ctx.output(g.outputs[j]));
  }
  return results;
}

}  // namespace burn::cpu
