// The LibTorch backend's data movement, seeding, threads and device queries
// (one of the two translation units that include ATen; ops.cpp is the other).
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/api/include/torch/version.h>

#include <omp.h>

#include <cstring>
#include <mutex>
#include <random>

#include "backends/libtorch/torch_common.hpp"
#include "device/thread_limit.hpp"

namespace burn::libtorch {
namespace {

at::Device aten_device(TorchDevice d) {
  switch (d.kind) {
    case TorchDeviceKind::Cpu: return at::Device(at::kCPU);
    case TorchDeviceKind::Cuda: return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(d.index));
    case TorchDeviceKind::Mps: return at::Device(at::kMPS);
    case TorchDeviceKind::Vulkan: return at::Device(at::kVulkan);
  }
  return at::Device(at::kCPU);
}

}  // namespace

void EngineDeleter::operator()(Engine* e) const noexcept { delete e; }

EnginePtr make_engine(TorchDevice device) {
  // ATen's first parallel call would set the OpenMP thread count of its thread
  // to its own default (one per physical core, fewer than the OpenMP default on
  // some machines), which the other backends' OpenMP kernels would then see.
  // Fixing ATen's count first keeps the process default for everyone.
  // OMP_NUM_THREADS may ask for any count; ATen would try to start them all.
  const auto openmp_threads = static_cast<std::size_t>(omp_get_max_threads());
  if (const auto problem = burn::detail::thread_count_problem(openmp_threads, "OMP_NUM_THREADS"); !problem.empty())
    throw Error("Device::libtorch", problem);
  static std::once_flag threads_once;
  std::call_once(threads_once, [] { at::set_num_threads(omp_get_max_threads()); });
  EnginePtr engine(new Engine(aten_device(device)));
  // Random numbers are drawn on the CPU with this generator and moved to the
  // device, so one seed gives the same values on every libtorch device.
  engine->generator = at::make_generator<at::CPUGeneratorImpl>(std::random_device{}());
  return engine;
}

backend::PrimitivePtr upload(Engine& engine, const TensorData& data) {
  TorchGuard guard;
  return translating_errors("from_data", [&] {
    at::Tensor t = at::empty(sizes_of(data.shape()), at::TensorOptions().dtype(scalar_type(data.dtype())));
    if (!data.bytes().empty()) std::memcpy(t.data_ptr(), data.bytes().data(), data.bytes().size());
    if (engine.device.type() != at::kCPU) t = t.to(engine.device);
    return wrap(std::move(t));
  });
}

TensorData download(Engine&, const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) {
  TorchGuard guard;
  return translating_errors("to_data", [&] {
    const at::Tensor t = tensor_of(primitive).to(at::kCPU).contiguous();
    TensorData data = TensorData::zeros(spec.shape, spec.dtype);
    if (t.numel() > 0) std::memcpy(data.bytes_mut().data(), t.data_ptr(), data.bytes().size());
    return data;
  });
}

void seed(Engine& engine, std::uint64_t seed) {
  std::lock_guard lock(engine.rng_mutex);
  std::lock_guard generator_lock(engine.generator.mutex());
  engine.generator.set_current_seed(seed);
}

void synchronize(Engine& engine) {
  if (engine.device.type() == at::kCPU) return;  // CPU kernels finish inside the call
  translating_errors("Device::sync", [&] {
    c10::impl::VirtualGuardImpl impl(engine.device.type());
    impl.synchronizeStream(impl.getStream(engine.device));
  });
}

std::size_t intra_op_threads() { return static_cast<std::size_t>(at::get_num_threads()); }

void set_intra_op_threads(std::size_t n) {
  translating_errors("Device::set_num_threads", [&] { at::set_num_threads(static_cast<int>(n)); });
}

std::size_t cuda_device_count() { return at::hasCUDA() ? at::getNumGPUs() : 0; }
bool mps_available() { return at::hasMPS(); }
bool vulkan_available() { return at::is_vulkan_available(); }
std::string torch_version() { return TORCH_VERSION; }

}  // namespace burn::libtorch
