// NdArray: the reference CPU backend (the oracle the conformance suite
// compares every other backend with). Its kernels (kernels.hpp,
// module_kernels.hpp) follow the kernel convention; this file adds
// Device::ndarray() and the registration.
#include <burn/backend/registry.hpp>

#include "backends/host/kernel_dispatch.hpp"
#include "backends/ndarray/kernels.hpp"

namespace burn::ndarray {
namespace {

class NdArrayBackend final : public host::KernelBackend<Context> {
 public:
  NdArrayBackend() : KernelBackend(/*caching_allocator=*/false) {}

  std::string name() const override { return "ndarray"; }
  std::string description() const override { return "reference CPU backend (simple loops, the test oracle)"; }
};

}  // namespace
}  // namespace burn::ndarray

namespace burn {

Device Device::ndarray() {
  static const Device d(DispatchDevice{DeviceType::NdArray, 0});
  return d;
}

namespace backend {
BackendFactory ndarray_factory() {
  return {DeviceType::NdArray, [] { return default_rank::kNdArray; }, [] { return std::size_t{1}; },
          [](std::size_t) -> std::unique_ptr<Backend> { return std::make_unique<ndarray::NdArrayBackend>(); }};
}
}  // namespace backend

}  // namespace burn
