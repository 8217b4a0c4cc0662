// Tracing: a function of tensors recorded once and replayed on any device.
//
// burn::trace runs a function on the capture device (Device::capture(),
// with autodiff) on placeholder inputs of the given specs, and keeps the
// operations it recorded (once at construction, to check the function, and
// once for each backend and set of input specs it is then called with,
// choosing optional ops as that backend would): the forward, the backward a `loss.backward()` in
// it recorded, and whatever it computed from the gradients (an optimiser
// step). Calling the traced function runs those operations on the device
// its inputs live on, straight to that device's backend: no dispatch, no
// autodiff bookkeeping, and each intermediate value released after the
// operation that reads it last (so a backend may compute in its storage).
// It is jax.jit for burn's devices:
//
//   auto step = burn::trace(
//       [&](const burn::TracedFunction::Tensors& in) -> burn::TracedFunction::Tensors {
//         burn::Tensor<2> w(in[0]), x(in[1]);
//         w = w.require_grad();
//         auto y = x.matmul(w);
//         auto loss = (y * y).mean();
//         auto grads = loss.backward();
//         return {(w.detach() - w.grad(grads)->detach() * 0.1).ref(), loss.ref()};
//       },
//       {{burn::Shape{784, 10}, burn::DType::F32}, {burn::Shape{64, 784}, burn::DType::F32}});
//   auto out = step({w.ref(), x.ref()});   // on w's and x's device
//
// What a recording fixes (docs/trace.md): the input shapes and dtypes
// (inputs of others are recorded again, as jax.jit traces again), the
// control flow the function took, and every scalar it used (a learning
// rate that changes must be an input tensor). Random operations draw anew
// on every call, from the device the call runs on. A traced function is
// not differentiated: its inputs must not be tracked by autodiff (detach
// them; the gradients it needs are computed inside it). A module's weights
// come in as inputs through module::tensors_of and with_tensors
// (docs/trace.md, "Modules").
#pragma once

#include <burn/config.hpp>

#if BURN_HAS_CAPTURE

#include <burn/detail/tensor_ref.hpp>
#include <burn/ir/op.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace burn {

namespace detail {
class TracedState;
}  // namespace detail

class TracedFunction {
 public:
  using Tensors = std::vector<detail::TensorRef>;
  using Function = std::function<Tensors(const Tensors&)>;

  /// Traces `fn` on placeholders of `inputs` (at least one). Throws
  /// burn::Error if `fn` throws, reads values (to_data on a captured tensor),
  /// returns no tensor or a tensor of another device.
  TracedFunction(const Function& fn, const std::vector<ir::TensorSpec>& inputs);

  /// Runs the traced operations on the device of `inputs` (all on one
  /// device; as many as traced, of any shapes and dtypes the function
  /// takes) and returns the function's results there. Work may still be
  /// queued when it returns (sync the device to wait for it), as with any
  /// operation.
  Tensors operator()(const Tensors& inputs) const;

  /// The specs the function was traced with.
  const std::vector<ir::TensorSpec>& input_specs() const noexcept;
  /// How many operations the recording made at construction holds (a
  /// backend without an optional op records its composite instead).
  std::size_t num_ops() const noexcept;

 private:
  std::shared_ptr<const detail::TracedState> state_;
};

/// burn::TracedFunction(fn, inputs).
inline TracedFunction trace(const TracedFunction::Function& fn, const std::vector<ir::TensorSpec>& inputs) {
  return TracedFunction(fn, inputs);
}

/// The specs of `tensors`, to trace a function for inputs like them (for
/// example a module's state, module::tensors_of, and a batch).
inline std::vector<ir::TensorSpec> specs_of(const TracedFunction::Tensors& tensors) {
  std::vector<ir::TensorSpec> out;
  out.reserve(tensors.size());
  for (const auto& t : tensors) out.push_back(t->spec);
  return out;
}

}  // namespace burn

#endif  // BURN_HAS_CAPTURE
