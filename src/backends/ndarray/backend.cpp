// NdArray: the reference CPU backend (the oracle the conformance suite
// compares every other backend with).
#include "backends/cpu_common/kernel_dispatch.hpp"
#include "backends/ndarray/kernels.hpp"

namespace burn::ndarray {
namespace {

class NdArrayBackend final : public cpu::KernelBackend<Context> {
 public:
  NdArrayBackend() : KernelBackend(/*caching_allocator=*/false) {}

  std::string name() const override { return "ndarray"; }
  std::string description() const override { return "reference CPU backend (simple loops, the test oracle)"; }

  void memory_cleanup() override { alloc_->cleanup(); }
  std::optional<MemoryPoolUsage> memory_pool_usage() const override { return alloc_->usage(); }
};

}  // namespace
}  // namespace burn::ndarray

namespace burn::backend {
BackendFactory ndarray_factory() {
  return {DeviceType::NdArray, [] { return std::size_t{1}; },
          [](std::size_t) -> std::unique_ptr<Backend> { return std::make_unique<ndarray::NdArrayBackend>(); }};
}
}  // namespace burn::backend
