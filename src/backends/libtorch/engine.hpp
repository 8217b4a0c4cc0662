// The LibTorch backend's torch-free interface. Only engine.cpp and ops.cpp
// include LibTorch headers (each costs seconds to compile); everything else
// (the Backend class, the registry, Device constructors) talks to ATen
// through these declarations and an opaque Engine.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <burn/backend/backend.hpp>

namespace burn::libtorch {

/// Which ATen device a libtorch:N device computes on.
enum class TorchDeviceKind : std::uint8_t { Cpu, Cuda, Mps, Vulkan };
struct TorchDevice {
  TorchDeviceKind kind = TorchDeviceKind::Cpu;
  std::size_t index = 0;  ///< CUDA ordinal; 0 otherwise
};

/// One device's ATen state: its at::Device and its seeded generator.
class Engine;
struct EngineDeleter {
  void operator()(Engine* e) const noexcept;
};
using EnginePtr = std::unique_ptr<Engine, EngineDeleter>;

EnginePtr make_engine(TorchDevice device);

/// Host data -> a fresh ATen tensor on the engine's device (bytes copied).
backend::PrimitivePtr upload(Engine& engine, const TensorData& data);
/// A contiguous host copy with the tensor's dtype and shape.
TensorData download(Engine& engine, const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec);
/// Runs one validated IR op through ATen (ops.cpp).
std::vector<backend::PrimitivePtr> execute(Engine& engine, const ir::Op& op, std::span<const backend::Input> inputs,
                                           std::span<const ir::TensorSpec> outputs);
void seed(Engine& engine, std::uint64_t seed);
/// Waits for queued work on accelerators; a no-op on the CPU.
void synchronize(Engine& engine);

/// ATen's intra-op thread count (its OpenMP setting) and how to change it.
std::size_t intra_op_threads();
void set_intra_op_threads(std::size_t n);

/// What the installed LibTorch offers at run time.
std::size_t cuda_device_count();
bool mps_available();
bool vulkan_available();
/// "1.13.1" (the headers this build compiled against).
std::string torch_version();

/// libtorch:N numbering: 0 is the CPU, then one device per CUDA ordinal, then
/// MPS and Vulkan when the installed LibTorch has them (backend.cpp).
std::size_t device_count();
TorchDevice torch_device_of(std::size_t index);
/// The libtorch:N index of a CUDA ordinal, MPS or Vulkan; throws
/// DeviceError (NotAvailable) when this LibTorch build lacks it.
std::size_t index_of(TorchDevice device, std::string_view constructor);

}  // namespace burn::libtorch
