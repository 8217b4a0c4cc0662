// Flex backend registration and op dispatch.
#include <omp.h>

#include "backends/cpu_common/cpu_backend.hpp"
#include "backends/flex/kernels.hpp"

namespace burn::flex {
namespace {

template <class Op>
concept HasKernel = requires(const Context& c, const Op& op, Inputs in, Outputs out) { kernel(c, op, in, out); };

class FlexBackend final : public cpu::CpuBackendBase {
 public:
  FlexBackend() : CpuBackendBase(/*caching_allocator=*/true) {}

  std::string name() const override { return "flex"; }
  std::string description() const override {
    return "eager optimised CPU backend (" + std::to_string(omp_get_max_threads()) + " threads)";
  }

  bool supports_op(const ir::Op& op) const override {
    return std::visit(
        [](const auto& o) {
          using O = std::decay_t<decltype(o)>;
          return HasKernel<O> || std::is_same_v<O, ir::Random>;
        },
        op);
  }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override {
    if (const auto* r = std::get_if<ir::Random>(&op)) return {random(*r, outputs[0])};
    const Context ctx{alloc_};
    return std::visit(
        [&](const auto& o) -> Result {
          if constexpr (HasKernel<std::decay_t<decltype(o)>>) return kernel(ctx, o, inputs, outputs);
          else throw Error(ir::op_name(op), "not supported by the flex backend");
        },
        op);
  }

  void memory_cleanup() override { alloc_->cleanup(); }
  std::optional<std::vector<SlicedPoolReport>> memory_pool_report() const override { return alloc_->report(); }
  std::optional<MemoryPoolUsage> memory_pool_usage() const override { return alloc_->usage(); }
  void set_persistent_allocations(bool on) override { alloc_->set_persistent(on); }
};

}  // namespace
}  // namespace burn::flex

namespace burn::backend {
BackendFactory flex_factory() {
  return {DeviceType::Flex, [] { return std::size_t{1}; },
          [](std::size_t) -> std::unique_ptr<Backend> { return std::make_unique<flex::FlexBackend>(); }};
}
}  // namespace burn::backend
