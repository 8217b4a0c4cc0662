// Generated CUDA kernels compiled for the CPU. A kernel is C++ apart from a
// few CUDA built-ins, so the tests compile each distinct source with the
// host's C++ compiler over a small shim (one thread walks the whole
// grid-stride loop; the PTX half conversions become _Float16 ones) and run
// planned launches on host memory, exactly as the backend would run them on
// the device. A block-fold kernel (block_stride_kernel) runs as one block
// of kEmulatedBlock threads (its BURN_BLOCK rewritten), each a thread of
// its own, meeting at __syncthreads on a barrier and sharing its
// __shared__ arrays, so the cooperative code runs for real, only with a
// smaller block than on a GPU.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "backends/cuda/launch.hpp"

#ifndef BURN_TEST_CXX
#error "tests/CMakeLists.txt defines BURN_TEST_CXX, the C++ compiler the kernels are compiled with"
#endif

namespace burn::cuda::testing {

/// Threads of an emulated block (a power of two, as on the device).
inline constexpr unsigned kEmulatedBlock = 8;

inline constexpr const char* kHostShim = R"(#include <math.h>
#include <string.h>
#include <pthread.h>
#include <barrier>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
struct BurnDim3 { unsigned int x; };
static const BurnDim3 blockIdx{0}, blockDim{1}, gridDim{1};
/* A thread's index in the running block, by its pthread id: no thread_local
   (LeakSanitizer trips over the TLS of a library dlclose'd before exit). */
static pthread_t burn_host_team[64];
static unsigned burn_host_team_size = 0;
static inline BurnDim3 burn_host_thread_index() {
  const pthread_t self = pthread_self();
  for (unsigned t = 0; t < burn_host_team_size; ++t)
    if (pthread_equal(burn_host_team[t], self)) return {t};
  return {0};
}
#define threadIdx (burn_host_thread_index())
static std::barrier<>* burn_host_block = nullptr;
static inline void __syncthreads() { burn_host_block->arrive_and_wait(); }
template <class F> static void burn_host_run_block(unsigned threads, F kernel) {
  std::barrier<> block(threads);
  burn_host_block = &block;
  burn_host_team_size = threads;
  std::vector<std::thread> team;
  // Each thread names itself, and all have before any runs the kernel.
  for (unsigned t = 0; t < threads; ++t)
    team.emplace_back([=, &block] { burn_host_team[t] = pthread_self(); block.arrive_and_wait(); kernel(); });
  for (auto& member : team) member.join();
  burn_host_team_size = 0;
  burn_host_block = nullptr;
}
static inline unsigned int atomicOr(unsigned int* p, unsigned int v) { unsigned int o = *p; *p |= v; return o; }
static inline float __uint_as_float(unsigned int u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int u; memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
static inline float burn_host_f16_to_f32(unsigned short h) { _Float16 v; memcpy(&v, &h, 2); return (float)v; }
static inline unsigned short burn_host_f32_to_f16(float f) { _Float16 v = (_Float16)f; unsigned short h; memcpy(&h, &v, 2); return h; }
)";

inline void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

/// A kernel's source as host C++ in namespace k<index>, with an entry
/// burn_run_<index>(const void* params). Throws where the source has inline
/// PTX the shim does not cover.
inline std::string host_version(std::string source, std::size_t index) {
  replace_all(source, fmt::format("extern \"C\" __global__ void {}", kKernelEntry),
              fmt::format("void {}", kKernelEntry));
  replace_all(source, R"(asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));)", "f = burn_host_f16_to_f32(h);");
  replace_all(source, R"(asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));)", "h = burn_host_f32_to_f16(f);");
  if (source.find("asm(") != std::string::npos)
    throw std::runtime_error("a kernel has inline PTX the host shim does not cover:\n" + source);
  const std::string block_define = fmt::format("#define BURN_BLOCK {}u\n", kBlockThreads);
  if (source.find(block_define) != std::string::npos) {
    replace_all(source, block_define, fmt::format("#undef BURN_BLOCK\n#define BURN_BLOCK {}u\n", kEmulatedBlock));
    return fmt::format(
        "namespace k{0} {{\n{1}}}\nextern \"C\" void burn_run_{0}(const void* p) {{ burn_host_run_block({3}, [p] "
        "{{ k{0}::{2}(*static_cast<const k{0}::Params*>(p)); }}); }}\n",
        index, source, kKernelEntry, kEmulatedBlock);
  }
  return fmt::format(
      "namespace k{0} {{\n{1}}}\nextern \"C\" void burn_run_{0}(const void* p) {{ k{0}::{2}(*static_cast<const "
      "k{0}::Params*>(p)); }}\n",
      index, source, kKernelEntry);
}

/// Kernel sources compiled for the CPU, one shared library per add().
class HostKernels {
 public:
  HostKernels() = default;
  explicit HostKernels(const std::vector<std::string>& sources) { add(sources); }
  HostKernels(const HostKernels&) = delete;
  HostKernels& operator=(const HostKernels&) = delete;
  ~HostKernels() {
    for (void* library : libraries_) ::dlclose(library);
  }

  /// Compiles the sources not compiled yet (one compiler run for all).
  void add(const std::vector<std::string>& sources) {
    std::map<std::string, std::size_t> fresh;
    for (const auto& source : sources)
      if (!entries_.contains(source)) fresh.emplace(source, next_index_ + fresh.size());
    if (fresh.empty()) return;
    // A path of its own: dlopen hands back an already loaded library of the same path.
    static std::atomic<int> counter{0};
    const auto dir =
        std::filesystem::temp_directory_path() / fmt::format("burn-cuda-emulation-{}-{}", ::getpid(), counter++);
    std::filesystem::create_directories(dir);
    const auto source_path = dir / "kernels.cpp";
    const auto library_path = dir / "kernels.so";
    {
      std::ofstream out(source_path);
      out << kHostShim;
      for (const auto& [text, index] : fresh) out << host_version(text, index);
    }
    const std::string command = fmt::format("{} -std=c++20 -pthread -O0 -shared -fPIC -w -o {} {} 2>&1", BURN_TEST_CXX,
                                            library_path.string(), source_path.string());
    const int status = std::system(command.c_str());
    void* library = status == 0 ? ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr;
    std::filesystem::remove_all(dir);
    if (status != 0) throw std::runtime_error("the kernels did not compile for the CPU: " + command);
    if (library == nullptr) throw std::runtime_error(std::string("dlopen: ") + ::dlerror());
    libraries_.push_back(library);
    for (const auto& [text, index] : fresh) {
      void* symbol = ::dlsym(library, fmt::format("burn_run_{}", index).c_str());
      if (symbol == nullptr) throw std::runtime_error("a kernel is missing from the library");
      Entry entry = nullptr;
      std::memcpy(&entry, &symbol, sizeof(entry));
      entries_.emplace(text, entry);
    }
    next_index_ += fresh.size();
  }

  std::size_t size() const noexcept { return entries_.size(); }

  /// Runs `launch`, whose source must have been added.
  void run(const Launch& launch) const { entries_.at(launch.source)(launch.params.data()); }

 private:
  using Entry = void (*)(const void*);
  std::map<std::string, Entry> entries_;
  std::vector<void*> libraries_;
  std::size_t next_index_ = 0;
};

}  // namespace burn::cuda::testing
