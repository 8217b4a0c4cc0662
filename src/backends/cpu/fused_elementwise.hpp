// The CPU executor of fused elementwise groups: no compiler at run time.
// A group runs as one strided loop over its output shape (flex's loop
// driver: dims merged, split across threads), and each run of the loop is
// evaluated in blocks of kBlock elements by calling flex's own row function
// of every op in turn (the numexpr approach). Intermediates live in a small
// per-thread register file that stays in cache; inputs are read and outputs
// written in place with their strides. Because the rows are flex's, a fused
// group computes exactly what flex computes op by op.
#pragma once

#include <memory>

#include "backends/host/allocator.hpp"
#include "fusion/elementwise.hpp"

namespace burn::cpu {

class CpuElementwiseCompiler final : public fusion::ElementwiseCompiler {
 public:
  explicit CpuElementwiseCompiler(std::shared_ptr<host::Allocator> alloc) : alloc_(std::move(alloc)) {}

  bool supports(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                std::span<const ir::TensorSpec> outputs) const override;
  std::shared_ptr<fusion::FusedPlan> compile(const fusion::ElementwiseProgram& program) const override;

  /// Elements per block: small enough that a group's live intermediates stay
  /// in L1/L2, large enough to amortise one row call per op.
  static constexpr std::size_t kBlock = 1024;

 private:
  std::shared_ptr<host::Allocator> alloc_;
};

}  // namespace burn::cpu
