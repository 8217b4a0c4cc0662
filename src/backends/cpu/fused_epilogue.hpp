// The CPU kernel of matmul and convolution epilogues: one oneDNN primitive
// with post-ops (binary
// add/sub/mul/div with a broadcast tensor or a one-element scalar tensor,
// eltwise relu), so the bias and activation are applied to each output tile
// while it is in cache instead of in extra passes over the result.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/flex/kernels.hpp"
#include "fusion/epilogue.hpp"

namespace burn::cpu {

/// What the epilogue kernels did since the process started (for tests and
/// for finding where a model loses its fusion).
struct EpilogueCounters {
  /// Groups oneDNN could not take whole, which ran op by op instead.
  std::uint64_t groups_op_by_op = 0;
  /// Residuals a convolution accumulated onto in their own storage.
  std::uint64_t residuals_in_place = 0;
};
EpilogueCounters epilogue_counters();

class CpuEpilogueCompiler final : public fusion::EpilogueCompiler {
 public:
  /// `ctx`: the inner flex backend's kernel context (its allocator and its
  /// float32 precision setting, which the convolutions follow).
  explicit CpuEpilogueCompiler(flex::Context ctx) : ctx_(std::move(ctx)) {}

  /// f32 matrices ([m, k] x [k, n]) and f32 2-D convolutions: oneDNN's
  /// primitives with post-ops.
  bool supports_anchor(const ir::Op& op, std::span<const ir::TensorSpec> inputs,
                       std::span<const ir::TensorSpec> outputs) const override;
  bool supports_step(DType dtype) const override { return dtype == DType::F32; }
  std::shared_ptr<fusion::FusedPlan> compile(const fusion::EpilogueProgram& program) const override;

 private:
  flex::Context ctx_;
};

}  // namespace burn::cpu
