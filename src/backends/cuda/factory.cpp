// Registration: the cuda backend family, Device::cuda(i): the CUDA backend
// behind the fusion layer, which runs chains of elementwise ops, and
// last-dim reductions with the elementwise work around them, as one
// generated kernel each (fused_elementwise.hpp), as Device::cpu() does on
// the CPU.
#include <fmt/format.h>

#include <burn/backend/registry.hpp>
#include <burn/device.hpp>
#include <burn/error.hpp>

#include "backends/cuda/backend.hpp"
#include "backends/cuda/driver.hpp"
#include "backends/cuda/fused_elementwise.hpp"
#include "fusion/fusion_backend.hpp"

namespace burn {

namespace backend {
namespace {

std::unique_ptr<Backend> create_cuda(std::size_t index) {
  auto inner = std::make_unique<cuda::CudaBackend>(index);
  // The fusion backend owns the inner backend, so the compilers' reference
  // to it lives as long as their plans.
  auto fusers = cuda::cuda_fusers(*inner);
  return std::make_unique<fusion::FusionBackend>("cuda", std::move(inner), std::move(fusers));
}

}  // namespace

BackendFactory cuda_factory() {
  // First in Device()'s order wherever a GPU and its driver are there.
  BackendFactory factory{DeviceType::Cuda, [] { return default_rank::kCuda; },
                         [] { return cuda::driver().device_count; }, create_cuda};
  factory.why_no_device = [] {
    const cuda::Driver& d = cuda::driver();
    if (!d.unavailable.empty()) return "no CUDA device: " + d.unavailable;
    return d.device_count == 0 ? std::string("no CUDA device: the driver lists none") : std::string();
  };
  return factory;
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
