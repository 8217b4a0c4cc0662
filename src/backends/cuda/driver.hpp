// The CUDA driver API, opened with dlopen on first use.
//
// burn links nothing of CUDA, so a build with the CUDA backend loads on a
// machine without an NVIDIA driver: there `driver()` says why CUDA is
// unavailable instead of the process failing to start. Functions are
// resolved by their versioned symbol names as cuda.h spells them
// (cuMemAlloc is cuMemAlloc_v2), so each pointer has the signature of the
// header it was compiled against.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace burn::cuda {

/// The driver functions the backend calls.
struct DriverApi {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_get_version = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_get_name = nullptr;
  decltype(&::cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&::cuDeviceTotalMem) device_total_mem = nullptr;
  decltype(&::cuDeviceGetPCIBusId) device_get_pci_bus_id = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy) stream_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuMemAlloc) mem_alloc = nullptr;
  decltype(&::cuMemFree) mem_free = nullptr;
  decltype(&::cuMemGetInfo) mem_get_info = nullptr;
  decltype(&::cuMemHostAlloc) mem_host_alloc = nullptr;
  decltype(&::cuMemFreeHost) mem_free_host = nullptr;
  decltype(&::cuMemcpyHtoDAsync) memcpy_htod_async = nullptr;
  decltype(&::cuMemcpyDtoHAsync) memcpy_dtoh_async = nullptr;
  decltype(&::cuMemcpyDtoDAsync) memcpy_dtod_async = nullptr;
  decltype(&::cuMemsetD32Async) memset_d32_async = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventQuery) event_query = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed_time = nullptr;
  decltype(&::cuStreamWaitEvent) stream_wait_event = nullptr;
};

/// The driver as this process found it: loaded and initialised, or the
/// reason it is not.
struct Driver {
  DriverApi api;
  /// Empty when the driver is usable; else why not ("libcuda.so.1 could not
  /// be loaded: ...", "cuInit failed: CUDA_ERROR_NO_DEVICE ...").
  std::string unavailable;
  int version = 0;               ///< cuDriverGetVersion: 1000 * major + 10 * minor
  std::size_t device_count = 0;  ///< 0 when unavailable
};

/// Loads and initialises the driver once per process. The library is
/// BURN_CUDA_DRIVER when set (a path or soname), else libcuda.so.1.
const Driver& driver();

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a driver result code.
std::string describe(const DriverApi& api, CUresult result);

/// Throws ExecutionError "[op] <call> failed: <describe(result)>" unless
/// `result` is CUDA_SUCCESS.
void check(CUresult result, std::string_view op, std::string_view call);

}  // namespace burn::cuda
