// The op dispatch both CPU backends share: each has one `kernel(ctx, op,
// inputs, outputs)` overload per IR op it implements, in its own namespace
// next to its Context type. KernelBackend<Context> finds those overloads by
// argument-dependent lookup through Context, reports an op as supported
// exactly when its overload exists, and runs Random itself (cpu_backend.hpp).
#pragma once

#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "backends/cpu_common/cpu_backend.hpp"

namespace burn::cpu {

/// True when the backend whose kernels take `Context` has a kernel for `Op`.
template <class Context, class Op>
concept HasKernel = requires(const Context& c, const Op& op, std::span<const backend::Input> in,
                             std::span<const ir::TensorSpec> out) {
  kernel(c, op, in, out);
};

template <class Context>
class KernelBackend : public CpuBackendBase {
 public:
  using CpuBackendBase::CpuBackendBase;

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
    const Context ctx{alloc_};
    return std::visit(
        [&](const auto& o) -> std::vector<backend::PrimitivePtr> {
          if constexpr (HasKernel<Context, std::decay_t<decltype(o)>>)
            return kernel(ctx, o, inputs, outputs);
          else
            throw Error(ir::op_name(op), "not supported by the " + name() + " backend");
        },
        op);
  }
};

}  // namespace burn::cpu
