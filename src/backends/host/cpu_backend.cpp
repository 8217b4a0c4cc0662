#include "backends/host/cpu_backend.hpp"

#include "backends/host/random_fill.hpp"

#include <cmath>
#include <fstream>

namespace burn::host {

CpuBackendBase::CpuBackendBase(bool caching_allocator)
    : alloc_(std::make_shared<Allocator>(caching_allocator)),
      memory_(alloc_, caching_allocator),
      rng_(std::random_device{}()) {}

backend::PrimitivePtr CpuBackendBase::from_data(TensorData data) { return from_tensor_data(alloc_, data); }

TensorData CpuBackendBase::to_data(const backend::PrimitivePtr& p, const ir::TensorSpec&) {
  return to_tensor_data(as_cpu(p));
}

backend::HostAccess::Writable CpuBackendBase::allocate_host(const ir::TensorSpec& spec) {
  auto t = CpuTensor::allocate(alloc_, spec);
  const std::size_t bytes = t->num_elements() * dtype_size(spec.dtype);
  std::byte* base = t->base();
  return {std::move(t), std::span<std::byte>(base, bytes)};
}

std::optional<std::span<const std::byte>> CpuBackendBase::host_bytes(const backend::PrimitivePtr& primitive,
                                                                     const ir::TensorSpec& spec) {
  const CpuTensor& t = as_cpu(primitive);
  t.make_plain();
  if (!t.is_contiguous() || t.dtype != spec.dtype) return std::nullopt;
  return std::span<const std::byte>(t.base(), t.num_elements() * dtype_size(t.dtype));
}

void CpuBackendBase::seed(std::uint64_t seed) {
  std::lock_guard lock(rng_mutex_);
  rng_.seed(seed);
}

PhysicalIdentity CpuBackendBase::identity() const { return PhysicalIdentity{std::nullopt, std::nullopt, "host-cpu"}; }

std::string CpuBackendBase::physical_name() const { return cpu_name(); }

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "host CPU";
}

CpuTensorPtr CpuBackendBase::random(const ir::Random& op, const ir::TensorSpec& spec) {
  auto out = CpuTensor::allocate(alloc_, spec);
  std::lock_guard lock(rng_mutex_);
  fill_random(op, rng_, spec.dtype, out->base(), spec.shape.num_elements());
  return out;
}

}  // namespace burn::host
