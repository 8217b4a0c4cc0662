// Automatic mixed precision: a scope in which the operations that gain most
// from a 16-bit float (matmul, convolution, linear layers) compute in bf16 or
// f16, while those that lose accuracy there (reductions, softmax, norms,
// losses, exp and log) compute in f32, as PyTorch's torch.autocast does.
//
//   auto device = burn::Device::flex().autodiff();
//   auto model = MlpConfig{...}.init(device);          // f32 weights (the master copy)
//   {
//     burn::amp::Autocast autocast(device, burn::DType::BF16);
//     auto logits = model.forward(x);                  // matmuls in bf16: logits are bf16
//     auto loss = cross_entropy.forward(logits, y);    // computed in f32
//     grads = loss.backward();                         // f32 gradients for the f32 weights
//   }
//   model = optim.step(lr, std::move(model), GradientsParams::from_grads(grads, model));
//
// The scope is per thread (like NoGradGuard) and names a device: operations
// on other devices are left alone, so one thread can train on two devices
// with different settings. Scopes nest; the innermost one naming a device
// decides, and `Autocast(device, dtype, false)` switches it off inside.
//
// What happens to an operation's float inputs (autocast_policy() lists the
// operations; docs/precision.md explains the choices):
//   LowerPrecision  f32 (and the other 16-bit type) inputs are cast to the
//                   autocast dtype; f64 is left alone. The kernels accumulate
//                   in f32 (oneDNN, cuBLASLt, LibTorch), only the stored
//                   result is 16-bit.
//   Float32         16-bit inputs are cast to f32, so the result is f32.
//   Promote         inputs of different float dtypes are cast to the widest
//                   (a bf16 activation added to an f32 residual gives f32);
//                   outside autocast mixed dtypes are an error, as in Burn.
// Every other operation runs in its inputs' dtype (relu of a bf16 tensor is
// bf16). The casts are ordinary operations, so autodiff carries gradients
// back through them to the f32 parameters; backward itself runs without
// autocast, each gradient in its forward value's dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include <burn/detail/tensor_ref.hpp>
#include <burn/device.hpp>
#include <burn/dtype.hpp>

namespace burn::amp {

/// While alive, operations this thread runs on `device` (with or without
/// autodiff) follow the autocast policy with `dtype`, F16 or BF16.
/// Throws burn::Error("[Autocast] ...") for another dtype or one the device
/// does not support.
class Autocast {
 public:
  explicit Autocast(const Device& device, DType dtype = DType::BF16, bool enabled = true);
  ~Autocast();
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;
  Autocast(Autocast&&) = delete;
  Autocast& operator=(Autocast&&) = delete;

 private:
  std::size_t depth_;
};

/// The autocast dtype in effect on this thread for `device`: nullopt outside
/// any scope naming it, in a disabled scope, and during backward.
std::optional<DType> autocast_dtype(const Device& device);

/// What autocast does to an operation's float inputs (see above).
enum class CastPolicy : std::uint8_t { LowerPrecision, Float32, Promote };

struct OpPolicy {
  std::string_view op;  ///< the operation's name, as errors and profiles name it
  CastPolicy policy;
};

/// Every operation autocast changes, with its policy.
std::span<const OpPolicy> autocast_policy();

}  // namespace burn::amp

namespace burn::amp::detail {

/// `t` cast to f32 when autocast is on for its device and `t` is 16-bit, else
/// `t`: the Float32 policy of the composite operations (softmax, the norms,
/// the losses), applied once to their input rather than to each primitive.
burn::detail::TensorRef float32_input(const burn::detail::TensorRef& t);

}  // namespace burn::amp::detail
