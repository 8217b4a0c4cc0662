#include "backends/cuda/driver.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/dynamic_library.hpp"

namespace burn::cuda {
namespace {

#define BURN_CUDA_RESOLVE(member, name) library.resolve(api.member, BURN_CUDA_SYMBOL(name))

void resolve_all(DynamicLibrary& library, DriverApi& api) {
  BURN_CUDA_RESOLVE(get_error_name, cuGetErrorName);
  BURN_CUDA_RESOLVE(get_error_string, cuGetErrorString);
  BURN_CUDA_RESOLVE(init, cuInit);
  BURN_CUDA_RESOLVE(driver_get_version, cuDriverGetVersion);
  BURN_CUDA_RESOLVE(device_get_count, cuDeviceGetCount);
  BURN_CUDA_RESOLVE(device_get, cuDeviceGet);
  BURN_CUDA_RESOLVE(device_get_name, cuDeviceGetName);
  BURN_CUDA_RESOLVE(device_get_attribute, cuDeviceGetAttribute);
  BURN_CUDA_RESOLVE(device_total_mem, cuDeviceTotalMem);
  BURN_CUDA_RESOLVE(device_get_pci_bus_id, cuDeviceGetPCIBusId);
  BURN_CUDA_RESOLVE(primary_ctx_retain, cuDevicePrimaryCtxRetain);
  BURN_CUDA_RESOLVE(primary_ctx_release, cuDevicePrimaryCtxRelease);
  BURN_CUDA_RESOLVE(ctx_set_current, cuCtxSetCurrent);
  BURN_CUDA_RESOLVE(stream_create, cuStreamCreate);
  BURN_CUDA_RESOLVE(stream_destroy, cuStreamDestroy);
  BURN_CUDA_RESOLVE(stream_synchronize, cuStreamSynchronize);
  BURN_CUDA_RESOLVE(mem_alloc, cuMemAlloc);
  BURN_CUDA_RESOLVE(mem_free, cuMemFree);
  BURN_CUDA_RESOLVE(mem_get_info, cuMemGetInfo);
  BURN_CUDA_RESOLVE(mem_host_alloc, cuMemHostAlloc);
  BURN_CUDA_RESOLVE(mem_free_host, cuMemFreeHost);
  BURN_CUDA_RESOLVE(memcpy_htod_async, cuMemcpyHtoDAsync);
  BURN_CUDA_RESOLVE(memcpy_dtoh_async, cuMemcpyDtoHAsync);
  BURN_CUDA_RESOLVE(memcpy_dtod_async, cuMemcpyDtoDAsync);
  BURN_CUDA_RESOLVE(memset_d32_async, cuMemsetD32Async);
  BURN_CUDA_RESOLVE(module_load_data, cuModuleLoadData);
  BURN_CUDA_RESOLVE(module_unload, cuModuleUnload);
  BURN_CUDA_RESOLVE(module_get_function, cuModuleGetFunction);
  BURN_CUDA_RESOLVE(launch_kernel, cuLaunchKernel);
  BURN_CUDA_RESOLVE(event_create, cuEventCreate);
  BURN_CUDA_RESOLVE(event_destroy, cuEventDestroy);
  BURN_CUDA_RESOLVE(event_record, cuEventRecord);
  BURN_CUDA_RESOLVE(event_query, cuEventQuery);
  BURN_CUDA_RESOLVE(event_synchronize, cuEventSynchronize);
  BURN_CUDA_RESOLVE(event_elapsed_time, cuEventElapsedTime);
  BURN_CUDA_RESOLVE(stream_wait_event, cuStreamWaitEvent);
}

#undef BURN_CUDA_RESOLVE

Driver load() {
  Driver d;
  const char* configured = std::getenv("BURN_CUDA_DRIVER");
  // Called once (driver() keeps the result); the library stays open for good.
  static DynamicLibrary library(configured != nullptr && *configured != '\0' ? configured : "libcuda.so.1");
  resolve_all(library, d.api);
  if (!library.error().empty()) {
    d.unavailable = library.error() + " (is the NVIDIA driver installed?)";
    return d;
  }
  if (const CUresult r = d.api.init(0); r != CUDA_SUCCESS) {
    d.unavailable = fmt::format("cuInit failed: {}", describe(d.api, r));
    return d;
  }
  int count = 0;
  if (const CUresult r = d.api.device_get_count(&count); r != CUDA_SUCCESS) {
    d.unavailable = fmt::format("cuDeviceGetCount failed: {}", describe(d.api, r));
    return d;
  }
  if (count <= 0) {
    d.unavailable = "the NVIDIA driver is loaded but reports no device";
    return d;
  }
  if (d.api.driver_get_version(&d.version) != CUDA_SUCCESS) d.version = 0;
  d.device_count = static_cast<std::size_t>(count);
  return d;
}

}  // namespace

const Driver& driver() {
  static const Driver d = load();
  return d;
}

std::string describe(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.get_error_name == nullptr || api.get_error_name(result, &name) != CUDA_SUCCESS || name == nullptr)
    return fmt::format("CUDA error {}", static_cast<int>(result));
  if (api.get_error_string == nullptr || api.get_error_string(result, &text) != CUDA_SUCCESS || text == nullptr)
    return name;
  return fmt::format("{} ({})", name, text);
}

void check(CUresult result, std::string_view op, std::string_view call) {
  if (result == CUDA_SUCCESS) return;
  throw ExecutionError(op, fmt::format("{} failed: {}", call, describe(driver().api, result)));
}

}  // namespace burn::cuda
