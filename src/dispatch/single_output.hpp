// An optional companion to backend::Backend for single-output ops: the
// backend returns the output's primitive itself rather than a one-element
// std::vector, which is a heap allocation and free on every op (issue 4:
// per-op latency). Dispatch uses it, when the backend implements it, for ops
// with one output; everything else goes through Backend::execute. Kept out of
// include/burn/backend/backend.hpp so the backend contract is unchanged.
#pragma once

#include <span>

#include <burn/backend/backend.hpp>

namespace burn::detail {

class SingleOutputExecution {
 public:
  /// Runs `op` (validated by ir::infer_outputs, which gave it exactly one
  /// output, `output`) and returns that output's primitive.
  virtual backend::PrimitivePtr execute_single(const ir::Op& op, std::span<const backend::Input> inputs,
                                               const ir::TensorSpec& output) = 0;

 protected:
  ~SingleOutputExecution() = default;
};

}  // namespace burn::detail
