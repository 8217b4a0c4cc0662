#include "backends/cpu/fused_rows.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <optional>

#include "backends/cpu/fused_program.hpp"
#include "backends/flex/kernels.hpp"
#include "backends/flex/parallel.hpp"

namespace burn::cpu {
namespace {

class CpuRowPlan final : public fusion::FusedPlan {
 public:
  CpuRowPlan(CompiledGroup group, std::shared_ptr<host::Allocator> alloc)
      : g(std::move(group)), alloc_(std::move(alloc)) {
    row = g.shape.empty() ? 1 : g.shape.back();
    rows = 1;
    for (std::size_t d = 0; d + 1 < g.shape.size(); ++d) rows *= g.shape[d];
    register_bytes = std::max<std::size_t>(row, 1) * 8;
    if (row > 0 && row <= kShortRow && rows >= 2) {
      block_rows = std::min(rows, std::max<std::size_t>(1, kBlockElems / row));
      block_register_bytes = block_rows * row * 8;
    }
  }

  std::vector<backend::PrimitivePtr> run(std::span<const fusion::QueuedOp* const> ops,
                                         std::span<const backend::Input> in) const override;

  /// Rows this short run a block of rows per instruction call: a call per
  /// row and op would cost more than the row's arithmetic (a log-softmax
  /// over 10 classes).
  static constexpr std::size_t kShortRow = 64;
  /// Elements of a block (rows x row), sized to keep its registers in L1/L2.
  static constexpr std::size_t kBlockElems = 4096;

  CompiledGroup g;
  std::size_t row = 1, rows = 1, register_bytes = 8;
  std::size_t block_rows = 0;  // 0: per-row execution only
  std::size_t block_register_bytes = 0;

 private:
  std::shared_ptr<host::Allocator> alloc_;
};

/// Offset (in elements) of row `r`'s first element in `o` (dims before the last).
std::int64_t row_offset(const CompiledGroup& g, const flex::Operand& o, std::size_t r) {
  std::int64_t off = 0;
  if (g.shape.empty()) return 0;  // a scalar: one row of one element
  for (std::size_t d = g.shape.size() - 1; d-- > 0;) {
    off += static_cast<std::int64_t>(r % g.shape[d]) * o.strides[d];
    r /= g.shape[d];
  }
  return off;
}

/// Runs rows [begin, end): for each row, every instruction in order.
int run_rows(const CpuRowPlan& plan, const RunConstants& rc, std::span<const flex::Operand> operands, std::size_t begin,
             std::size_t end) {
  const CompiledGroup& g = plan.g;
  const std::size_t rank = g.shape.size();
  std::byte* regs = thread_registers(g.registers * plan.register_bytes);
  SmallVector<std::byte*, 16> base(operands.size(), nullptr);
  SmallVector<std::int64_t, 16> last(operands.size(), 0);
  for (std::size_t k = 0; k < operands.size(); ++k) last[k] = rank ? operands[k].strides[rank - 1] : 0;
  for (std::size_t r = begin; r < end; ++r) {
    // The row's first element in every operand.
    for (std::size_t k = 0; k < operands.size(); ++k)
      base[k] = operands[k].base + row_offset(g, operands[k], r) * static_cast<std::int64_t>(operands[k].width);
    for (std::size_t k = 0; k < g.instrs.size(); ++k) {
      const Instr& ins = g.instrs[k];
      std::byte* p[5];
      std::int64_t s[5];
      place_operands(
          ins, regs, plan.register_bytes, rc.constants[k],
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

// Blocks of short rows.
// A block of R rows is laid out in registers as R*row contiguous elements (a
// full-row value) or R elements (a row statistic), so each instruction runs
// once per block. Loop operands must step by one stride per row (`row_step`);
// a full-row read that is not one uniform run over the block (a statistic
// or a bias broadcast along the rows) is first copied into a scratch slot
// in that layout. Every element goes through the same row functions as in
// per-row execution, so results are bit-identical.

/// Per loop operand: the stride (elements) from one row to the next, when
/// its rows are evenly spaced.
std::optional<std::int64_t> row_step(const CompiledGroup& g, const flex::Operand& o) {
  std::optional<std::int64_t> step;
  std::int64_t span = 0;
  if (g.shape.empty()) return 0;
  for (std::size_t d = g.shape.size() - 1; d-- > 0;) {
    if (g.shape[d] == 1) continue;
    if (!step) step = o.strides[d];
    else if (o.strides[d] != span) return std::nullopt;
    span = o.strides[d] * static_cast<std::int64_t>(g.shape[d]);
  }
  return step.value_or(0);
}

/// dst[r*row + i] = src[r*rs + i*ls] for elements of W bytes (copied as
/// bytes: bits, not values; memcpy of a constant size is one move).
template <std::size_t W>
void gather_block(std::byte* dst, const std::byte* src, std::int64_t rs, std::int64_t ls, std::size_t n_rows,
                  std::size_t row) {
  constexpr auto w = static_cast<std::int64_t>(W);
  for (std::size_t r = 0; r < n_rows; ++r) {
    const std::byte* line = src + static_cast<std::int64_t>(r) * rs * w;
    if (ls == 0) {  // a statistic: its value along the whole row
      std::array<std::byte, W> v;
      std::memcpy(v.data(), line, W);
      for (std::size_t i = 0; i < row; ++i, dst += W) std::memcpy(dst, v.data(), W);
    } else {
      for (std::size_t i = 0; i < row; ++i, dst += W) std::memcpy(dst, line + static_cast<std::int64_t>(i) * ls * w, W);
    }
  }
}

void gather(std::size_t width, std::byte* dst, const std::byte* src, std::int64_t rs, std::int64_t ls,
            std::size_t n_rows, std::size_t row) {
  switch (width) {
    case 1: return gather_block<1>(dst, src, rs, ls, n_rows, row);
    case 2: return gather_block<2>(dst, src, rs, ls, n_rows, row);
    case 4: return gather_block<4>(dst, src, rs, ls, n_rows, row);
    default: return gather_block<8>(dst, src, rs, ls, n_rows, row);
  }
}

struct BlockLayout {
  SmallVector<std::int64_t, 16> step;  // per loop operand: row_step
  SmallVector<std::int64_t, 16> last;  // per loop operand: stride along the row
};

/// Whether the run can go block by block: every loop operand's rows evenly
/// spaced and every written full-row operand one uniform run per block.
bool block_layout(const CpuRowPlan& plan, std::span<const flex::Operand> operands, BlockLayout& out) {
  const CompiledGroup& g = plan.g;
  const std::size_t rank = g.shape.size();
  for (const auto& o : operands) {
    const auto step = row_step(g, o);
    if (!step) return false;
    out.step.push_back(*step);
    out.last.push_back(rank ? o.strides[rank - 1] : 0);
  }
  for (const Instr& ins : g.instrs) {
    const Loc& result = ins.operands[0];
    if (result.kind != Loc::Operand || ins.per_row || ins.reduce) continue;
    if (out.step[result.index] != static_cast<std::int64_t>(plan.row) * out.last[result.index]) return false;
  }
  return true;
}

/// Runs rows [begin, begin + n_rows) as one block.
int run_block(const CpuRowPlan& plan, const RunConstants& rc, std::span<const flex::Operand> operands,
              const BlockLayout& layout, std::size_t begin, std::size_t n_rows) {
  const CompiledGroup& g = plan.g;
  const std::size_t row = plan.row, reg_bytes = plan.block_register_bytes;
  constexpr std::size_t kScratchSlots = 4;
  std::byte* regs = thread_registers((g.registers + kScratchSlots) * reg_bytes);
  std::byte* scratch = regs + g.registers * reg_bytes;
  SmallVector<std::byte*, 16> base(operands.size(), nullptr);
  for (std::size_t k = 0; k < operands.size(); ++k)
    base[k] = operands[k].base + row_offset(g, operands[k], begin) * static_cast<std::int64_t>(operands[k].width);

  for (std::size_t k = 0; k < g.instrs.size(); ++k) {
    const Instr& ins = g.instrs[k];
    if (ins.reduce) {
      // One call per row, from the row's first element to its statistic.
      const Loc& in = ins.operands[1];
      const Loc& out = ins.operands[0];
      for (std::size_t r = 0; r < n_rows; ++r) {
        const auto ri = static_cast<std::int64_t>(r);
        std::byte* src = in.kind == Loc::Register
                             ? regs + in.index * reg_bytes + r * row * in.width
                             : base[in.index] + ri * layout.step[in.index] * operands[in.index].width;
        const std::int64_t src_stride = in.kind == Loc::Register ? 1 : layout.last[in.index];
        std::byte* dst = out.kind == Loc::Register
                             ? regs + out.index * reg_bytes + r * out.width
                             : base[out.index] + ri * layout.step[out.index] * operands[out.index].width;
        ins.reduce(src, src_stride, row, dst);
      }
      continue;
    }
    // Statistics: one element per row; full rows: row elements per row.
    const std::size_t n = ins.per_row ? n_rows : n_rows * row;
    std::byte* p[5];
    std::int64_t s[5];
    std::size_t slot = 0;
    for (std::size_t a = 0; a < ins.operands.size(); ++a) {
      const Loc& l = ins.operands[a];
      switch (l.kind) {
        case Loc::Constant:
          p[a] = const_cast<std::byte*>(rc.constants[k].bytes.data());
          s[a] = 0;
          break;
        case Loc::Register:
          p[a] = regs + l.index * reg_bytes;
          s[a] = 1;
          if (l.broadcast) {  // a statistic read by every element of its row
            gather(l.width, scratch + slot * reg_bytes, p[a], 1, 0, n_rows, row);
            p[a] = scratch + slot++ * reg_bytes;
          }
          break;
        case Loc::Operand: {
          const std::int64_t step = layout.step[l.index], along = layout.last[l.index];
          p[a] = base[l.index];
          if (ins.per_row) {
            s[a] = step;
          } else if (step == static_cast<std::int64_t>(row) * along) {
            s[a] = along;
          } else {  // only arguments get here (block_layout checked results)
            gather(l.width, scratch + slot * reg_bytes, p[a], step, along, n_rows, row);
            p[a] = scratch + slot++ * reg_bytes;
            s[a] = 1;
          }
          break;
        }
      }
    }
    if (const int code = ins.fn(rc.ctx_of(ins, k), p, s, n)) return code;
  }
  return 0;
}

std::vector<backend::PrimitivePtr> CpuRowPlan::run(std::span<const fusion::QueuedOp* const> ops,
                                                   std::span<const backend::Input> in) const {
  host::make_inputs_plain(in);  // a convolution may have left one blocked
  RunConstants rc;
  fill_constants(g, ops, rc);
  auto results = allocate_outputs(g, alloc_, in);
  // Every operand is walked over the row shape: statistics ([..., 1]) get a
  // stride of 0 along the row, so a full-row op reads them broadcast.
  std::vector<flex::Operand> operands;
  operands.reserve(results.size() + in.size());
  for (const auto& y : results) operands.push_back(flex::broadcast_operand(*y, g.shape));
  for (const auto& x : in) operands.push_back(flex::broadcast_operand(host::as_cpu(x.primitive), g.shape));
  // Empty rows (row == 0) still run: their statistics (a sum of nothing is
  // 0, a mean NaN) and the per-row ops on them have values.
  if (g.instrs.empty() || rows == 0) return {results.begin(), results.end()};
  std::atomic<int> error{0};
  const std::size_t work_per_row = std::max<std::size_t>(row, 1) * std::max<std::size_t>(g.instrs.size(), 1) / 4 + 1;
  BlockLayout layout;
  if (block_rows != 0 && block_layout(*this, operands, layout)) {
    const std::size_t blocks = (rows + block_rows - 1) / block_rows;
    flex::parallel_for(
        blocks,
        [&](std::size_t b, std::size_t e) {
          for (; b < e; ++b) {
            const std::size_t first = b * block_rows;
            if (const int code = run_block(*this, rc, operands, layout, first, std::min(block_rows, rows - first)))
              error.store(code);
          }
        },
        std::max<std::size_t>(1, flex::kGrainSize / (work_per_row * block_rows)));
  } else {
    flex::parallel_for(
        rows,
        [&](std::size_t b, std::size_t e) {
          if (const int code = run_rows(*this, rc, operands, b, e)) error.store(code);
        },
        std::max<std::size_t>(1, flex::kGrainSize / work_per_row));
  }
  if (error.load())
    throw ExecutionError("fused row reduce",
                         "an op of the fused group reported an error it should not raise "
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

}  // namespace burn::cpu
