// Registration: the cuda backend family, Device::cuda(i).
#include <fmt/format.h>

#include <burn/backend/registry.hpp>
#include <burn/device.hpp>
#include <burn/error.hpp>

#include "backends/cuda/backend.hpp"
#include "backends/cuda/driver.hpp"

namespace burn {

namespace backend {

BackendFactory cuda_factory() {
  // Device() does not pick CUDA while the backend lacks op families and has
  // not run the suites on a GPU (backend.hpp); Device::cuda() and enumerate
  // reach it.
  return {DeviceType::Cuda, [] { return default_rank::kNever; }, [] { return cuda::driver().device_count; },
          [](std::size_t i) -> std::unique_ptr<Backend> { return std::make_unique<cuda::CudaBackend>(i); }};
}

}  // namespace backend

Device Device::cuda(DeviceIndex index) {
  const cuda::Driver& d = cuda::driver();
  if (!d.unavailable.empty())
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device::cuda", "no CUDA device: " + d.unavailable);
  if (index.value() >= d.device_count)
    throw DeviceError(DeviceErrorKind::NotAvailable, "Device::cuda",
                      fmt::format("no CUDA device: cuda:{} was asked for and this machine has {} (cuda:0 to "
                                  "cuda:{})",
                                  index.value(), d.device_count, d.device_count - 1));
  return Device(DispatchDevice{DeviceType::Cuda, index.value()});
}

}  // namespace burn
