// Device::cpu(): flex's kernels behind the fusion layer. Elementwise chains
// run as one fused pass (fused_elementwise.cpp), last-dim reductions with the
// elementwise work around them row by row (fused_rows.cpp), a matmul's bias
// and activation as oneDNN post-ops (fused_epilogue.cpp); every other op runs
// eagerly on an inner flex backend of its own.
#include <burn/backend/registry.hpp>

#include <memory>

#include "backends/cpu/fused_elementwise.hpp"
#include "backends/cpu/fused_epilogue.hpp"
#include "backends/cpu/fused_rows.hpp"
#include "backends/flex/kernels.hpp"
#include "backends/host/kernel_dispatch.hpp"
#include "fusion/fusion_backend.hpp"

namespace burn::backend {
BackendFactory flex_factory();

namespace {
std::unique_ptr<Backend> create_cpu(std::size_t) {
  auto inner = flex_factory().create(0);
  auto* kernels = dynamic_cast<host::KernelBackend<flex::Context>*>(inner.get());
  if (!kernels) throw ConfigurationError("Device", "the cpu backend needs flex's kernel backend (internal error)");
  std::vector<std::unique_ptr<fusion::Fuser>> fusers;
  fusers.push_back(
      std::make_unique<fusion::ElementwiseFuser>(std::make_shared<cpu::CpuElementwiseCompiler>(kernels->allocator())));
  fusers.push_back(std::make_unique<fusion::RowReduceFuser>(std::make_shared<cpu::CpuRowCompiler>(kernels->allocator()),
                                                            cpu::CpuRowCompiler::max_row()));
  fusers.push_back(
      std::make_unique<fusion::EpilogueFuser>(std::make_shared<cpu::CpuEpilogueCompiler>(kernels->context())));
  return std::make_unique<fusion::FusionBackend>("cpu", std::move(inner), std::move(fusers));
}
}  // namespace

BackendFactory cpu_factory() {
  return {DeviceType::Cpu, [] { return default_rank::kCpu; }, [] { return std::size_t{1}; }, create_cpu};
}

}  // namespace burn::backend

namespace burn {
Device Device::cpu() {
  static const Device d(DispatchDevice{DeviceType::Cpu, 0});
  return d;
}
}  // namespace burn
