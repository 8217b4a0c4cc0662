// A shared library opened with dlopen for the life of the process, and its
// functions resolved by name. The CUDA driver and NVRTC come this way, so a
// missing library is a message, not a process that cannot start.
#pragma once

#include <dlfcn.h>

#include <cstring>
#include <string>

#include <fmt/format.h>

namespace burn::cuda {

class DynamicLibrary {
 public:
  /// Opens `name` (a soname searched as the dynamic linker does, or a path).
  explicit DynamicLibrary(std::string name) : name_(std::move(name)) {
    handle_ = ::dlopen(name_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = ::dlerror();
      error_ = fmt::format("{} could not be loaded: {}", name_, why ? why : "not found");
    }
  }
  // Never closed: the driver keeps threads running that use its own code.
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;

  /// Points `fn` at `symbol`; a missing symbol is recorded in error() (the
  /// first one only) and leaves `fn` null.
  template <class Fn>
  void resolve(Fn& fn, const char* symbol) {
    fn = nullptr;
    if (handle_ == nullptr) return;
    void* address = ::dlsym(handle_, symbol);
    static_assert(sizeof(fn) == sizeof(address));
    // POSIX guarantees data and function pointers convert (dlsym's contract).
    std::memcpy(&fn, &address, sizeof(fn));
    if (fn == nullptr && error_.empty()) error_ = fmt::format("{} has no function {}", name_, symbol);
  }

  /// Empty while the library and every resolved symbol were found.
  const std::string& error() const noexcept { return error_; }
  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
  void* handle_ = nullptr;
  std::string error_;
};

}  // namespace burn::cuda

/// The symbol a CUDA header's name stands for, as a string: cuda.h maps
/// cuMemAlloc to cuMemAlloc_v2 with a macro, and the library exports the
/// versioned name. The argument is expanded before it is stringified.
#define BURN_CUDA_SYMBOL_STRING(name) #name
#define BURN_CUDA_SYMBOL(name) BURN_CUDA_SYMBOL_STRING(name)
