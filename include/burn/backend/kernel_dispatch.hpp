// The kernel convention: a backend implements each IR op it supports as one
// overload
//
//   std::vector<PrimitivePtr> kernel(const Context&, const ir::X&,
//                                    std::span<const Input>, std::span<const ir::TensorSpec>);
//
// in its own namespace, next to its Context type (which carries whatever the
// kernels need: an allocator, a stream, a lock). The helpers below find those
// overloads by argument-dependent lookup through Context, so `supports_op` is
// true exactly for the ops that have a kernel and an op without one is a clear
// "[op] not supported by the X backend" error, never a crash. An op may also
// have a `single_output_kernel(ctx, op, inputs, output)` overload that returns
// its one primitive directly (SingleOutputExecution).
#pragma once

#include <concepts>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <burn/backend/backend.hpp>
#include <burn/error.hpp>

namespace burn::backend {

/// True when the backend whose kernels take `Context` has a kernel for `Op`.
template <class Context, class Op>
concept HasKernel = requires(const Context& c, const Op& op, std::span<const Input> in,
                             std::span<const ir::TensorSpec> out) {
  kernel(c, op, in, out);
};

/// True when `Op` also has a kernel that returns its one output directly.
template <class Context, class Op>
concept HasSingleOutputKernel = requires(const Context& c, const Op& op, std::span<const Input> in,
                                         const ir::TensorSpec& out) {
  { single_output_kernel(c, op, in, out) } -> std::convertible_to<PrimitivePtr>;
};

/// Whether `op` has a kernel taking `Context`.
template <class Context>
bool has_kernel(const ir::Op& op) {
  return std::visit([](const auto& o) { return HasKernel<Context, std::decay_t<decltype(o)>>; }, op);
}

/// Runs `op`'s kernel; throws "[op] not supported by the <backend> backend"
/// when it has none. `backend` is asked for its name only then: this runs on
/// every op.
template <class Context>
std::vector<PrimitivePtr> run_kernel(const Context& ctx, const ir::Op& op, std::span<const Input> inputs,
                                     std::span<const ir::TensorSpec> outputs, const Backend& backend) {
  return std::visit(
      [&](const auto& o) -> std::vector<PrimitivePtr> {
        if constexpr (HasKernel<Context, std::decay_t<decltype(o)>>) return kernel(ctx, o, inputs, outputs);
        else throw Error(ir::op_name(op), "not supported by the " + backend.name() + " backend");
      },
      op);
}

/// Runs `op`'s one-output kernel when it has one, else its kernel (which must
/// then return exactly one primitive).
template <class Context>
PrimitivePtr run_single_output_kernel(const Context& ctx, const ir::Op& op, std::span<const Input> inputs,
                                      const ir::TensorSpec& output, const Backend& backend) {
  return std::visit(
      [&](const auto& o) -> PrimitivePtr {
        if constexpr (HasSingleOutputKernel<Context, std::decay_t<decltype(o)>>) {
          return single_output_kernel(ctx, o, inputs, output);
        } else {
          auto prims = run_kernel(ctx, op, inputs, std::span<const ir::TensorSpec>(&output, 1), backend);
          if (prims.size() != 1)
            throw ExecutionError(ir::op_name(op), "the " + backend.name() + " backend returned " +
                                                      std::to_string(prims.size()) + " outputs, 1 expected");
          return std::move(prims[0]);
        }
      },
      op);
}

}  // namespace burn::backend
