#include "backends/cuda/nvrtc.hpp"

#include <nvrtc.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/cuda/dynamic_library.hpp"

#ifndef BURN_CUDA_NVRTC_LIBRARY
#error "the build defines BURN_CUDA_NVRTC_LIBRARY (cmake/backends/cuda.cmake)"
#endif

namespace burn::cuda {
namespace {

struct NvrtcApi {
  decltype(&::nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&::nvrtcVersion) version = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) get_num_supported_archs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) get_supported_archs = nullptr;
  decltype(&::nvrtcCreateProgram) create_program = nullptr;
  decltype(&::nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&::nvrtcCompileProgram) compile_program = nullptr;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&::nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&::nvrtcGetCUBIN) get_cubin = nullptr;
  decltype(&::nvrtcGetPTXSize) get_ptx_size = nullptr;
  decltype(&::nvrtcGetPTX) get_ptx = nullptr;
};

struct Nvrtc {
  NvrtcApi api;
  std::string unavailable;
  int version = 0;
  std::vector<int> architectures;
};

#define BURN_NVRTC_RESOLVE(member, name) library.resolve(n.api.member, BURN_CUDA_SYMBOL(name))

Nvrtc load() {
  Nvrtc n;
  static DynamicLibrary library(BURN_CUDA_NVRTC_LIBRARY);
  BURN_NVRTC_RESOLVE(get_error_string, nvrtcGetErrorString);
  BURN_NVRTC_RESOLVE(version, nvrtcVersion);
  BURN_NVRTC_RESOLVE(get_num_supported_archs, nvrtcGetNumSupportedArchs);
  BURN_NVRTC_RESOLVE(get_supported_archs, nvrtcGetSupportedArchs);
  BURN_NVRTC_RESOLVE(create_program, nvrtcCreateProgram);
  BURN_NVRTC_RESOLVE(destroy_program, nvrtcDestroyProgram);
  BURN_NVRTC_RESOLVE(compile_program, nvrtcCompileProgram);
  BURN_NVRTC_RESOLVE(get_program_log_size, nvrtcGetProgramLogSize);
  BURN_NVRTC_RESOLVE(get_program_log, nvrtcGetProgramLog);
  BURN_NVRTC_RESOLVE(get_cubin_size, nvrtcGetCUBINSize);
  BURN_NVRTC_RESOLVE(get_cubin, nvrtcGetCUBIN);
  BURN_NVRTC_RESOLVE(get_ptx_size, nvrtcGetPTXSize);
  BURN_NVRTC_RESOLVE(get_ptx, nvrtcGetPTX);
  if (!library.error().empty()) {
    n.unavailable = library.error() + " (NVRTC comes with the CUDA toolkit; docs/cuda.md)";
    return n;
  }
  int major = 0;
  int minor = 0;
  if (n.api.version(&major, &minor) == NVRTC_SUCCESS) n.version = 1000 * major + 10 * minor;
  int count = 0;
  if (n.api.get_num_supported_archs(&count) == NVRTC_SUCCESS && count > 0) {
    n.architectures.resize(static_cast<std::size_t>(count));
    if (n.api.get_supported_archs(n.architectures.data()) != NVRTC_SUCCESS) n.architectures.clear();
    std::sort(n.architectures.begin(), n.architectures.end());
  }
  if (n.architectures.empty()) n.unavailable = "NVRTC lists no GPU architecture it can compile for";
  return n;
}

#undef BURN_NVRTC_RESOLVE

const Nvrtc& nvrtc() {
  static const Nvrtc n = load();
  return n;
}

/// Destroys the program however compilation ends.
class Program {
 public:
  Program(const NvrtcApi& api, nvrtcProgram program) : api_(api), program_(program) {}
  ~Program() { api_.destroy_program(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const noexcept { return program_; }

 private:
  const NvrtcApi& api_;
  nvrtcProgram program_;
};

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
  std::size_t size = 0;
  if (api.get_program_log_size(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (api.get_program_log(program, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

const std::string& nvrtc_unavailable() { return nvrtc().unavailable; }
int nvrtc_version() { return nvrtc().version; }
const std::vector<int>& nvrtc_architectures() { return nvrtc().architectures; }

CompiledKernel compile_kernel(std::string_view source, std::string_view name, int capability) {
  const Nvrtc& n = nvrtc();
  if (!n.unavailable.empty())
    throw ConfigurationError("cuda", fmt::format("cannot compile {}: {}", name, n.unavailable));
  const NvrtcApi& api = n.api;
  CompiledKernel out;
  // A GPU newer than this NVRTC gets PTX for the newest architecture NVRTC
  // knows; the driver compiles that for the GPU when the module loads.
  if (std::find(n.architectures.begin(), n.architectures.end(), capability) != n.architectures.end()) {
    out.arch = fmt::format("sm_{}", capability);
  } else {
    const auto newest = std::upper_bound(n.architectures.begin(), n.architectures.end(), capability);
    if (newest == n.architectures.begin())
      throw ConfigurationError("cuda",
                               fmt::format("NVRTC {}.{} cannot compile for compute capability {}.{} (it "
                                           "supports {}.{} and newer)",
                                           n.version / 1000, n.version % 1000 / 10, capability / 10, capability % 10,
                                           n.architectures.front() / 10, n.architectures.front() % 10));
    out.arch = fmt::format("compute_{}", *std::prev(newest));
    out.is_cubin = false;
  }
  const std::string source_text(source);
  const std::string program_name(name);
  nvrtcProgram raw = nullptr;
  if (const nvrtcResult r = api.create_program(&raw, source_text.c_str(), program_name.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    throw ExecutionError("cuda", fmt::format("nvrtcCreateProgram for {} failed: {}", name, api.get_error_string(r)));
  Program program(api, raw);
  const std::string arch_option = "--gpu-architecture=" + out.arch;
  // Exact IEEE arithmetic (no fast math): results must match the CPU backends'.
  const std::array<const char*, 3> options{arch_option.c_str(), "--std=c++17", "--device-as-default-execution-space"};
  const nvrtcResult compiled = api.compile_program(program.get(), static_cast<int>(options.size()), options.data());
  out.log = program_log(api, program.get());
  if (compiled != NVRTC_SUCCESS)
    throw ExecutionError("cuda", fmt::format("NVRTC could not compile {} for {}: {}\n{}", name, out.arch,
                                             api.get_error_string(compiled), out.log));
  std::size_t size = 0;
  const nvrtcResult sized =
      out.is_cubin ? api.get_cubin_size(program.get(), &size) : api.get_ptx_size(program.get(), &size);
  if (sized != NVRTC_SUCCESS)
    throw ExecutionError("cuda", fmt::format("NVRTC produced no code for {}: {}", name, api.get_error_string(sized)));
  out.image.resize(size);
  const nvrtcResult got =
      out.is_cubin ? api.get_cubin(program.get(), out.image.data()) : api.get_ptx(program.get(), out.image.data());
  if (got != NVRTC_SUCCESS)
    throw ExecutionError("cuda", fmt::format("NVRTC produced no code for {}: {}", name, api.get_error_string(got)));
  return out;
}

}  // namespace burn::cuda
