// One op on a runtime's backend, as dispatch runs it and as a traced
// function replays it (src/trace/): the backend's single-output path where
// it has one, timed under BURN_PROFILE_OPS unless the backend times its own
// ops (the fusion layer), counted on the runtime, and the output count
// checked against what ir::infer_outputs gave.
#pragma once

#include <burn/backend/backend.hpp>
#include <burn/error.hpp>
#include <burn/ir/op.hpp>

#include <fmt/format.h>

#include <span>
#include <vector>

#include "device/runtime.hpp"
#include "dispatch/op_profile.hpp"

namespace burn::detail {

/// Runs `op`. Returns true when the single-output path ran (its output in
/// `one`), false when the outputs are in `many`.
inline bool call_backend(DeviceRuntime& runtime, backend::SingleOutputExecution* single, const ir::Op& op,
                         std::span<const backend::Input> inputs, std::span<const ir::TensorSpec> outputs,
                         backend::PrimitivePtr& one, std::vector<backend::PrimitivePtr>& many) {
  backend::Backend& backend = runtime.backend();
  const bool single_output = single != nullptr && outputs.size() == 1;
  const auto launch = [&] {
    if (single_output) one = single->execute_single(op, inputs, outputs[0]);
    else many = backend.execute(op, inputs, outputs);
  };
  if (backend.times_own_ops()) launch();
  else
    profile::run_timed(
        backend, [&] { return ir::op_name(op); }, launch);
  runtime.count_op();
  if (!single_output && many.size() != outputs.size())
    throw ExecutionError(ir::op_name(op), fmt::format("the {} backend returned {} outputs, {} expected", backend.name(),
                                                      many.size(), outputs.size()));
  return single_output;
}

}  // namespace burn::detail
