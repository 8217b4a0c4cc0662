// The CPU executor of row-reduce groups (softmax, layer norm): the group's
// ops run row by row — full-row ops over the whole row, reductions folding it
// with flex's line reduction, statistic ops on one element — with the rows
// split across flex's threads. A row is read from memory once and its
// intermediates stay in a per-thread register file.
#pragma once

#include <memory>

#include "backends/host/allocator.hpp"
#include "fusion/row_reduce.hpp"

namespace burn::cpu {

class CpuRowCompiler final : public fusion::ElementwiseCompiler {
 public:
  explicit CpuRowCompiler(std::shared_ptr<host::Allocator> alloc) : alloc_(std::move(alloc)) {}

  bool supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                std::span<const ir::TensorSpec> outputs) const override;
  std::shared_ptr<fusion::FusedPlan> compile(const fusion::ElementwiseProgram& program) const override;

  /// The longest row: one chunk of flex's reduction (so the fold is flex's,
  /// bit for bit), and registers of at most 128 KiB.
  static std::size_t max_row();

 private:
  std::shared_ptr<host::Allocator> alloc_;
};

}  // namespace burn::cpu
