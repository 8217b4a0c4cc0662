// Flex backend registration and op dispatch.
#include <string>

#include "backends/cpu_common/kernel_dispatch.hpp"
#include "backends/flex/kernels.hpp"
#include "backends/flex/threads.hpp"

namespace burn::flex {

// binary.cpp: the binary kernel's single-output form (see kernel_dispatch.hpp),
// declared here, where KernelBackend<Context> looks for it, as kernels.hpp
// is not part of this change.
cpu::CpuTensorPtr single_output_kernel(const Context& ctx, const ir::Binary& op, Inputs in, const ir::TensorSpec& out);

namespace {

class FlexBackend final : public cpu::KernelBackend<Context> {
 public:
  FlexBackend() : KernelBackend(/*caching_allocator=*/true) { (void)pool_size(); }  // reads BURN_NUM_THREADS now

  std::size_t num_threads() const override { return pool_size(); }
  void set_num_threads(std::size_t n) override { set_pool_size(n); }

  std::string name() const override { return "flex"; }
  std::string description() const override {
    return "eager optimised CPU backend (" + std::to_string(pool_size()) + " threads)";
  }

  void memory_cleanup() override { alloc_->cleanup(); }
  std::optional<std::vector<SlicedPoolReport>> memory_pool_report() const override { return alloc_->report(); }
  std::optional<MemoryPoolUsage> memory_pool_usage() const override { return alloc_->usage(); }
  void set_persistent_allocations(bool on) override { alloc_->set_persistent(on); }
  /// Host data is already host memory; staging warms a cached buffer of the
  /// right size so the upload that follows reuses it without page faults.
  void stage(TensorData& data) override { alloc_->prefault(data.bytes().size()); }
};

}  // namespace
}  // namespace burn::flex

namespace burn::backend {
BackendFactory flex_factory() {
  return {DeviceType::Flex, [] { return std::size_t{1}; },
          [](std::size_t) -> std::unique_ptr<Backend> { return std::make_unique<flex::FlexBackend>(); }};
}
}  // namespace burn::backend
