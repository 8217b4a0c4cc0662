// A fused group compiled for the CPU: each op of an ElementwiseProgram bound
// to flex's row function for its op and dtype, with its operands placed
// (loop operand, register, or scalar constant) and registers allocated.
// The two executors — blocks over a flat loop (fused_elementwise.cpp) and
// rows with reductions (fused_rows.cpp) — share this form.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include <burn/small_vector.hpp>

#include "backends/flex/element.hpp"
#include "backends/flex/rows.hpp"
#include "backends/host/cpu_tensor.hpp"
#include "fusion/elementwise.hpp"

namespace burn::cpu {

/// Where an operand of an instruction lives while it runs.
struct Loc {
  enum Kind : std::uint8_t { Operand, Register, Constant };
  Kind kind = Operand;
  /// A row statistic (shape [..., 1]) read by a full-row op: stride 0.
  bool broadcast = false;
  std::uint32_t index = 0;  // loop operand (outputs, then inputs) or register
  std::uint32_t width = 0;  // element bytes
};

/// What an instruction's row reads as its ctx argument.
enum class CtxKind : std::uint8_t { None, ErrorSlot, Constant };
/// A per-run constant derived from the op's scalar values.
enum class ConstantKind : std::uint8_t { None, BinaryScalar, ClampBounds, FillValue };

struct Instr {
  flex::RowFn fn = nullptr;             // elementwise ops
  flex::ReduceLineFn reduce = nullptr;  // last-dim reductions (row executor)
  SmallVector<Loc, 5> operands;         // result, args..., [scalar]
  CtxKind ctx = CtxKind::None;
  ConstantKind constant = ConstantKind::None;
  bool per_row = false;      // result is a row statistic: one element per row
  DType dtype = DType::F32;  // the dtype the constant is converted to
  std::uint32_t op = 0;      // the group op the constant comes from
};

struct Constant {
  alignas(8) std::array<std::byte, 32> bytes{};
};

/// The compiled group, shared by both executors.
struct CompiledGroup {
  host::Extents shape;  // the loop (or row) shape
  std::vector<ir::TensorSpec> inputs;
  std::vector<ir::TensorSpec> outputs;
  std::vector<Instr> instrs;
  std::size_t registers = 0;
  /// Per output: inputs whose storage it may take (same dtype and shape,
  /// read for the last time no later than the output is written).
  std::vector<std::vector<std::size_t>> alias_candidates;
};

/// Compiles `prog`. `register_elems`: elements a register holds (a block, or
/// a row). With `rows`, results of the row-statistic shape are per-row
/// scalars and reductions are allowed.
CompiledGroup compile_group(const fusion::ElementwiseProgram& prog, bool rows);

/// Whether flex's fused kernels compute `op` exactly as its eager kernel and
/// without raising errors (integer division and the like stay eager).
bool fusable_on_cpu(const ir::Op& op, std::span<const ir::TensorSpec> inputs);

/// The per-run state: constants from the ops' scalar values.
struct RunConstants {
  std::vector<Constant> constants;  // one per instruction
  flex::ErrorSlot err;
  const void* ctx_of(const Instr& ins, std::size_t k) const {
    return ins.ctx == CtxKind::ErrorSlot  ? static_cast<const void*>(&err)
           : ins.ctx == CtxKind::Constant ? static_cast<const void*>(constants[k].bytes.data())
                                          : nullptr;
  }
};
void fill_constants(const CompiledGroup& g, std::span<const fusion::QueuedOp* const> ops, RunConstants& rc);

/// Points p[a] / s[a] at operand a of `ins` for one run of its row:
/// `operand(index, p, s)` places a loop operand, registers are
/// `register_bytes` apart in `regs` (a statistic read broadcast has stride
/// 0), and the scalar constant is `constant`.
template <class PlaceOperand>
void place_operands(const Instr& ins, std::byte* regs, std::size_t register_bytes, const Constant& constant,
                    PlaceOperand&& operand, std::byte** p, std::int64_t* s) {
  for (std::size_t a = 0; a < ins.operands.size(); ++a) {
    const Loc& l = ins.operands[a];
    switch (l.kind) {
      case Loc::Operand: operand(l, p[a], s[a]); break;
      case Loc::Register:
        p[a] = regs + l.index * register_bytes;
        s[a] = l.broadcast ? 0 : 1;
        break;
      case Loc::Constant:
        p[a] = const_cast<std::byte*>(constant.bytes.data());
        s[a] = 0;
        break;
    }
  }
}

/// This thread's register file, at least `bytes` long (grown on demand; the
/// executors run on flex's OpenMP pool, one file per thread).
std::byte* thread_registers(std::size_t bytes);

/// The group's output tensors: fresh, or the storage of an input nothing
/// else can observe.
std::vector<host::CpuTensorPtr> allocate_outputs(const CompiledGroup& g, const std::shared_ptr<host::Allocator>& alloc,
                                                 std::span<const backend::Input> in);

}  // namespace burn::cpu
