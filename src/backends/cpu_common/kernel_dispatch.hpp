// The op dispatch both CPU backends share: each has one `kernel(ctx, op,
// inputs, outputs)` overload per IR op it implements, in its own namespace
// next to its Context type. KernelBackend<Context> finds those overloads by
// argument-dependent lookup through Context, reports an op as supported
// exactly when its overload exists, and runs Random itself (cpu_backend.hpp).
// An op may also have a `single_output_kernel(ctx, op, inputs, output)`
// overload returning its one primitive directly; dispatch's single-output
// path (dispatch/single_output.hpp) then runs it without a result vector.
#pragma once

#include <concepts>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "backends/cpu_common/cpu_backend.hpp"
#include "dispatch/single_output.hpp"

namespace burn::cpu {

/// True when the backend whose kernels take `Context` has a kernel for `Op`.
template <class Context, class Op>
concept HasKernel = requires(const Context& c, const Op& op, std::span<const backend::Input> in,
                             std::span<const ir::TensorSpec> out) {
  kernel(c, op, in, out);
};

/// True when `Op` also has a kernel that returns its one output directly.
template <class Context, class Op>
concept HasSingleOutputKernel = requires(const Context& c, const Op& op, std::span<const backend::Input> in,
                                         const ir::TensorSpec& out) {
  { single_output_kernel(c, op, in, out) } -> std::convertible_to<backend::PrimitivePtr>;
};

template <class Context>
class KernelBackend : public CpuBackendBase, public detail::SingleOutputExecution {
 public:
  explicit KernelBackend(bool caching_allocator) : CpuBackendBase(caching_allocator), ctx_{alloc_} {}

  bool supports_op(const ir::Op& op) const override {
    return std::visit(
        [](const auto& o) {
          using O = std::decay_t<decltype(o)>;
          return HasKernel<Context, O> || std::is_same_v<O, ir::Random>;
        },
        op);
  }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override {
    if (const auto* r = std::get_if<ir::Random>(&op)) return {random(*r, outputs[0])};
    plain_inputs(op, inputs);
    return std::visit(
        [&](const auto& o) -> std::vector<backend::PrimitivePtr> {
          if constexpr (HasKernel<Context, std::decay_t<decltype(o)>>)
            return kernel(ctx_, o, inputs, outputs);
          else
            throw Error(ir::op_name(op), "not supported by the " + name() + " backend");
        },
        op);
  }

  backend::PrimitivePtr execute_single(const ir::Op& op, std::span<const backend::Input> inputs,
                                       const ir::TensorSpec& output) override {
    plain_inputs(op, inputs);
    return std::visit(
        [&](const auto& o) -> backend::PrimitivePtr {
          if constexpr (HasSingleOutputKernel<Context, std::decay_t<decltype(o)>>) {
            return single_output_kernel(ctx_, o, inputs, output);
          } else {
            auto prims = execute(op, inputs, std::span<const ir::TensorSpec>(&output, 1));
            if (prims.size() != 1)
              throw ExecutionError(ir::op_name(op), "the " + name() + " backend returned " +
                                                        std::to_string(prims.size()) + " outputs, 1 expected");
            return std::move(prims[0]);
          }
        },
        op);
  }

 private:
  // Kernels read row-major data; only convolution and max pooling read their
  // input in the opaque (blocked) layout a convolution left it in.
  static void plain_inputs(const ir::Op& op, std::span<const backend::Input> inputs) {
    const bool reads_blocked = std::holds_alternative<ir::Conv>(op) || std::holds_alternative<ir::MaxPool>(op);
    make_inputs_plain(inputs, reads_blocked ? 1 : 0);
  }

  // Built once: a per-op Context would copy the allocator's shared_ptr (two
  // atomic operations) on every op.
  const Context ctx_;
};

}  // namespace burn::cpu
