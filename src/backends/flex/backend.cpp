// Flex: the eager, optimised CPU backend. Its kernels (kernels.hpp,
// module_kernels.hpp) follow the kernel convention; this file adds the thread
// pool, the caching allocator, Device::flex() and the registration.
#include <burn/backend/registry.hpp>

#include <atomic>
#include <string>

#include "backends/flex/kernels.hpp"
#include "backends/flex/layout_elementwise.hpp"
#include "backends/flex/threads.hpp"
#include "backends/host/kernel_dispatch.hpp"

namespace burn::flex {

// binary.cpp: the binary kernel's single-output form, declared here, where
// KernelBackend<Context> looks for it.
host::CpuTensorPtr single_output_kernel(const Context& ctx, const ir::Binary& op, Inputs in, const ir::TensorSpec& out);

namespace {

class FlexBackend final : public host::KernelBackend<Context>,
                          public backend::ThreadControl,
                          public backend::PrecisionControl {
 public:
  FlexBackend()
      : KernelBackend(/*caching_allocator=*/true, [this](const std::shared_ptr<host::Allocator>& alloc) {
          return Context{alloc, &precision_};
        }) {
    (void)pool_size();  // reads BURN_NUM_THREADS now
  }

  std::string name() const override { return "flex"; }
  std::string description() const override {
    return "eager optimised CPU backend (" + std::to_string(pool_size()) + " threads)";
  }

  backend::ThreadControl* threads() override { return this; }
  std::size_t num_threads() const override { return pool_size(); }
  void set_num_threads(std::size_t n) override { set_pool_size(n); }

  backend::PrecisionControl* precision() override { return this; }
  Float32Precision float32_precision() const override { return precision_.load(std::memory_order_relaxed); }
  void set_float32_precision(Float32Precision p) override { precision_.store(p, std::memory_order_relaxed); }

 protected:
  backend::PrimitivePtr execute_opaque(const ir::Op& op, std::span<const backend::Input> inputs,
                                       const ir::TensorSpec& output) override {
    if (auto y = dnn::reshape_in_layout(op, inputs, output)) return y;
    return dnn::elementwise_in_layout(context(), op, inputs, output);
  }

 private:
  // Read by the kernels through their Context (Context::fast_f32).
  std::atomic<Float32Precision> precision_{Float32Precision::Highest};
};

}  // namespace
}  // namespace burn::flex

namespace burn {

Device Device::flex() {
  static const Device d(DispatchDevice{DeviceType::Flex, 0});
  return d;
}

namespace backend {
BackendFactory flex_factory() {
  return {DeviceType::Flex, [] { return default_rank::kFlex; }, [] { return std::size_t{1}; },
          [](std::size_t) -> std::unique_ptr<Backend> { return std::make_unique<flex::FlexBackend>(); }};
}
}  // namespace backend

}  // namespace burn
