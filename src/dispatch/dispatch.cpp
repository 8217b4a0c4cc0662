// Dispatch: checks devices, infers outputs through the IR, and runs the op on
// the backend the device names. The autodiff layer will hook in here: record
// a node, then redispatch to the inner device.
#include <fmt/format.h>

#include <burn/detail/ops.hpp>

#include "device/runtime.hpp"

namespace burn::detail {
namespace {

std::vector<TensorRef> run(const ir::Op& op, std::span<const TensorRef> inputs, const Device& device) {
  std::vector<ir::TensorSpec> specs;
  specs.reserve(inputs.size());
  for (const auto& t : inputs) specs.push_back(t->spec);
  std::vector<ir::TensorSpec> outputs = ir::infer_outputs(op, specs);

  auto& runtime = device.runtime();
  runtime.lock_settings();
  auto& backend = runtime.backend();
  if (!backend.supports_op(op))
    throw Error(ir::op_name(op), fmt::format("not supported by the {} backend ({}); use another device",
                                             backend.name(), device.to_string()));
  for (const auto& s : outputs)
    if (!backend.supports_dtype(s.dtype))
      throw Error(ir::op_name(op), fmt::format("{} does not support dtype {}", device.to_string(), dtype_name(s.dtype)));

  std::vector<backend::Input> ins;
  ins.reserve(inputs.size());
  for (const auto& t : inputs) ins.push_back({t->primitive, t->spec, false});
  std::vector<backend::PrimitivePtr> prims = backend.execute(op, ins, outputs);
  runtime.count_op();
  if (prims.size() != outputs.size())
    throw ExecutionError(ir::op_name(op), fmt::format("the {} backend returned {} outputs, {} expected",
                                                      backend.name(), prims.size(), outputs.size()));
  std::vector<TensorRef> out;
  out.reserve(prims.size());
  for (std::size_t i = 0; i < prims.size(); ++i)
    out.push_back(std::make_shared<const TensorImpl>(TensorImpl{outputs[i], device, std::move(prims[i])}));
  return out;
}

}  // namespace

std::vector<TensorRef> execute(const ir::Op& op, std::span<const TensorRef> inputs) {
  if (inputs.empty()) throw Error(ir::op_name(op), "needs at least one input tensor");
  const Device& device = inputs[0]->device;
  for (const auto& t : inputs.subspan(1))
    if (!(t->device == device))
      throw Error(ir::op_name(op),
                  fmt::format("tensors are on different devices: {} and {}; move one with to_device() first",
                              device.to_string(), t->device.to_string()));
  return run(op, inputs, device);
}

TensorRef execute1(const ir::Op& op, std::span<const TensorRef> inputs) { return execute(op, inputs).at(0); }

TensorRef create(const ir::Op& op, const Device& device) { return run(op, {}, device).at(0); }

}  // namespace burn::detail
