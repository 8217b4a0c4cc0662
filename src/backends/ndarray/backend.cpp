// NdArray: the reference CPU backend (the oracle the conformance suite
// compares every other backend with).
#include "backends/cpu_common/cpu_backend.hpp"
#include "backends/ndarray/kernels.hpp"

namespace burn::ndarray {
namespace {

template <class Op>
concept HasKernel = requires(const Context& c, const Op& op, Inputs in, Outputs out) { kernel(c, op, in, out); };

class NdArrayBackend final : public cpu::CpuBackendBase {
 public:
  NdArrayBackend() : CpuBackendBase(/*caching_allocator=*/false) {}

  std::string name() const override { return "ndarray"; }
  std::string description() const override { return "reference CPU backend (simple loops, the test oracle)"; }

  bool supports_op(const ir::Op& op) const override {
    return std::visit([](const auto& o) { return HasKernel<std::decay_t<decltype(o)>> || is_random(o); }, op);
  }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override {
    if (const auto* r = std::get_if<ir::Random>(&op)) return {random(*r, outputs[0])};
    const Context ctx{alloc_};
    return std::visit(
        [&](const auto& o) -> Result {
          if constexpr (HasKernel<std::decay_t<decltype(o)>>) return kernel(ctx, o, inputs, outputs);
          else throw Error(ir::op_name(op), "not supported by the ndarray backend");
        },
        op);
  }

  void memory_cleanup() override { alloc_->cleanup(); }
  std::optional<MemoryPoolUsage> memory_pool_usage() const override { return alloc_->usage(); }

 private:
  template <class O>
  static constexpr bool is_random(const O&) {
    return std::is_same_v<O, ir::Random>;
  }
};

}  // namespace
}  // namespace burn::ndarray

namespace burn::backend {
BackendFactory ndarray_factory() {
  return {DeviceType::NdArray, [] { return std::size_t{1}; },
          [](std::size_t) -> std::unique_ptr<Backend> { return std::make_unique<ndarray::NdArrayBackend>(); }};
}
}  // namespace burn::backend
