// NVRTC, the CUDA C++ compiler as a library, opened with dlopen on first
// use (libnvrtc.so.<major> of the toolkit burn was built with). It needs no
// GPU and no driver, so kernels are compiled — and tested — on machines
// without either.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace burn::cuda {

/// What a compilation produced: machine code for the architecture asked
/// for (a CUBIN) or, where this NVRTC does not know that GPU, PTX for the
/// newest architecture it knows, which the driver compiles on loading.
struct CompiledKernel {
  std::string image;
  bool is_cubin = true;
  std::string arch;  ///< the --gpu-architecture used: "sm_90" or "compute_90"
  std::string log;   ///< NVRTC's messages (warnings) on success
};

/// Empty when NVRTC can be used; else why not.
const std::string& nvrtc_unavailable();

/// NVRTC's version as 1000 * major + 10 * minor (0 when unavailable).
int nvrtc_version();

/// Compute capabilities this NVRTC compiles for, as 10 * major + minor (90).
const std::vector<int>& nvrtc_architectures();

/// Compiles `source` (one translation unit; `name` appears in messages) for
/// compute capability `capability` (10 * major + minor). Throws
/// ExecutionError "[cuda] NVRTC could not compile <name> for sm_XX: <log>"
/// on a compile error and ConfigurationError when NVRTC is unavailable.
CompiledKernel compile_kernel(std::string_view source, std::string_view name, int capability);

}  // namespace burn::cuda
