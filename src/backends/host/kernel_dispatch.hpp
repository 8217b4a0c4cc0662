// The CPU backends' Backend: host storage (CpuBackendBase) plus the kernel
// convention (<burn/backend/kernel_dispatch.hpp>) over the backend's Context.
// Random runs here, from the shared seeded generator, so one seed gives the
// same values on every CPU backend.
#pragma once

#include <span>
#include <variant>
#include <vector>

#include <burn/backend/kernel_dispatch.hpp>

#include "backends/host/cpu_backend.hpp"

namespace burn::host {

template <class Context>
class KernelBackend : public CpuBackendBase, public backend::SingleOutputExecution {
 public:
  explicit KernelBackend(bool caching_allocator) : CpuBackendBase(caching_allocator), ctx_{alloc_} {}
  /// With the kernels' Context made by `make(allocator)` (a backend whose
  /// Context carries more than the allocator).
  template <class MakeContext>
  KernelBackend(bool caching_allocator, MakeContext&& make)
      : CpuBackendBase(caching_allocator), ctx_(std::forward<MakeContext>(make)(alloc_)) {}

  /// The Context every kernel of this backend runs with.
  const Context& context() const noexcept { return ctx_; }

  bool supports_op(const ir::Op& op) const override {
    return std::holds_alternative<ir::Random>(op) || backend::has_kernel<Context>(op);
  }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override {
    if (const auto* r = std::get_if<ir::Random>(&op)) return {random(*r, outputs[0])};
    if (outputs.size() == 1 && any_opaque(inputs))
      if (auto y = execute_opaque(op, inputs, outputs[0])) return {std::move(y)};
    plain_inputs(op, inputs);
    return backend::run_kernel(ctx_, op, inputs, outputs, *this);
  }

  backend::PrimitivePtr execute_single(const ir::Op& op, std::span<const backend::Input> inputs,
                                       const ir::TensorSpec& output) override {
    if (const auto* r = std::get_if<ir::Random>(&op)) return random(*r, output);
    if (any_opaque(inputs))
      if (auto y = execute_opaque(op, inputs, output)) return y;
    plain_inputs(op, inputs);
    return backend::run_single_output_kernel(ctx_, op, inputs, output, *this);
  }

  backend::SingleOutputExecution* single_output() override { return this; }

 protected:
  /// The backend's own way to run `op` when an input is in an opaque layout
  /// (flex: elementwise ops and spatial reshapes on convolution activations,
  /// which keep the layout); nullptr: the inputs are made row-major and the
  /// op's kernel runs as usual.
  virtual backend::PrimitivePtr execute_opaque(const ir::Op& /*op*/, std::span<const backend::Input> /*inputs*/,
                                               const ir::TensorSpec& /*output*/) {
    return nullptr;
  }

 private:
  static bool any_opaque(std::span<const backend::Input> inputs) {
    for (const auto& in : inputs)
      if (as_cpu(in.primitive).is_opaque()) return true;
    return false;
  }

  // Kernels read row-major data; only the convolution family and max pooling
  // read their activations in the opaque (blocked) layout a convolution left
  // them in: input 0, and the weight gradient's output gradient (input 1).
  static void plain_inputs(const ir::Op& op, std::span<const backend::Input> inputs) {
    std::size_t read_blocked = 0;
    if (std::holds_alternative<ir::Conv>(op) || std::holds_alternative<ir::ConvTranspose>(op) ||
        std::holds_alternative<ir::MaxPool>(op))
      read_blocked = 1;
    else if (std::holds_alternative<ir::ConvWeightGrad>(op)) read_blocked = 2;
    make_inputs_plain(inputs, read_blocked);
  }

  // Built once: a per-op Context would copy the allocator's shared_ptr (two
  // atomic operations) on every op.
  const Context ctx_;
};

}  // namespace burn::host
