// Device::cpu(): flex's kernels behind the fusion layer. Elementwise chains
// are queued and run as one fused pass (fused_elementwise.cpp); every other
// op runs eagerly on an inner flex backend of its own.
#include <memory>

#include "backends/cpu/fused_elementwise.hpp"
#include "backends/cpu_common/cpu_backend.hpp"
#include "fusion/fusion_backend.hpp"

namespace burn::backend {
BackendFactory flex_factory();

namespace {
std::unique_ptr<Backend> create_cpu(std::size_t) {
  auto inner = flex_factory().create(0);
  auto* host = dynamic_cast<cpu::CpuBackendBase*>(inner.get());
  if (!host) throw ConfigurationError("Device", "the cpu backend needs flex's host allocator (internal error)");
  auto compiler = std::make_shared<cpu_fusion::CpuElementwiseCompiler>(host->allocator());
  std::vector<std::unique_ptr<fusion::Fuser>> fusers;
  fusers.push_back(std::make_unique<fusion::ElementwiseFuser>(std::move(compiler)));
  return std::make_unique<fusion::FusionBackend>("cpu", std::move(inner), std::move(fusers));
}
}  // namespace

BackendFactory cpu_factory() {
  return {DeviceType::Cpu, [] { return std::size_t{1}; }, create_cpu};
}

}  // namespace burn::backend
