// LibTorch: every IR op runs through ATen (Burn's `tch` backend). This file is
// torch-free: the Backend class, the libtorch:N device numbering, the Device
// constructors and the registration; the ATen work lives behind engine.hpp.
#include <burn/backend/registry.hpp>

#include <fmt/format.h>

#include "backends/host/cpu_backend.hpp"
#include "backends/libtorch/engine.hpp"

namespace burn::libtorch {
namespace {

std::string_view kind_name(TorchDeviceKind k) {
  switch (k) {
    case TorchDeviceKind::Cpu: return "CPU";
    case TorchDeviceKind::Cuda: return "CUDA";
    case TorchDeviceKind::Mps: return "MPS";
    case TorchDeviceKind::Vulkan: return "Vulkan";
  }
  return "?";
}

/// Spatial dims of a module op (0 for the others). ATen's convolution and
/// pooling kernels exist for 1 to 3 of them.
std::size_t spatial_dims(const ir::Op& op) {
  return std::visit(
      [](const auto& o) -> std::size_t {
        using O = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<O, ir::Conv> || std::is_same_v<O, ir::ConvTranspose> ||
                      std::is_same_v<O, ir::ConvWeightGrad>)
          return o.stride.size();
        else if constexpr (std::is_same_v<O, ir::MaxPool> || std::is_same_v<O, ir::AvgPool>) return o.kernel.size();
        else if constexpr (std::is_same_v<O, ir::AdaptiveAvgPool>) return o.output_size.size();
        else return 0;
      },
      op);
}

class LibTorchBackend final : public backend::Backend, public backend::Stream, public backend::ThreadControl {
 public:
  explicit LibTorchBackend(std::size_t index) : device_(torch_device_of(index)), engine_(make_engine(device_)) {}

  std::string name() const override { return "libtorch"; }
  std::string description() const override {
    return fmt::format("LibTorch {} on the {}", torch_version(), kind_name(device_.kind));
  }

  // LibTorch 1.13 has u8 as its only unsigned type.
  bool supports_dtype(DType d) const override { return d != DType::U16 && d != DType::U32 && d != DType::U64; }
  bool supports_op(const ir::Op& op) const override { return spatial_dims(op) <= 3; }
  // As Burn's tch backend: f32 floats, i64 ints.
  DeviceSettings default_settings() const override { return {FloatDType::F32, IntDType::I64, BoolDType::Bool}; }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override {
    return libtorch::execute(*engine_, op, inputs, outputs);
  }

  backend::PrimitivePtr from_data(TensorData data) override {
    if (!supports_dtype(data.dtype()))
      throw Error("from_data", fmt::format("libtorch does not support dtype {} (LibTorch has no unsigned type but "
                                           "u8); convert the data to a supported dtype first",
                                           dtype_name(data.dtype())));
    return upload(*engine_, data);
  }
  TensorData to_data(const backend::PrimitivePtr& p, const ir::TensorSpec& spec) override {
    return download(*engine_, p, spec);
  }

  void seed(std::uint64_t s) override { libtorch::seed(*engine_, s); }

  // ATen runs CPU work eagerly and queues accelerator work on its own streams.
  backend::Stream* stream() override { return this; }
  void sync() override { synchronize(*engine_); }
  void flush() override {}

  backend::ThreadControl* threads() override { return this; }
  std::size_t num_threads() const override { return intra_op_threads(); }
  void set_num_threads(std::size_t n) override { set_intra_op_threads(n); }

  PhysicalIdentity identity() const override {
    if (device_.kind == TorchDeviceKind::Cpu) return PhysicalIdentity{std::nullopt, std::nullopt, "host-cpu"};
    // Without the CUDA/MPS headers no PCI address is known: the device is its own entry.
    return PhysicalIdentity{std::nullopt, std::nullopt,
                            fmt::format("libtorch-{}:{}", kind_name(device_.kind), device_.index)};
  }
  std::string physical_name() const override {
    if (device_.kind == TorchDeviceKind::Cpu) return host::cpu_name();
    return fmt::format("{} device {} (through LibTorch)", kind_name(device_.kind), device_.index);
  }

 private:
  TorchDevice device_;
  EnginePtr engine_;
};

}  // namespace

std::size_t device_count() {
  return 1 + cuda_device_count() + (mps_available() ? 1 : 0) + (vulkan_available() ? 1 : 0);
}

TorchDevice torch_device_of(std::size_t index) {
  if (index == 0) return {TorchDeviceKind::Cpu, 0};
  const std::size_t cuda = cuda_device_count();
  if (index <= cuda) return {TorchDeviceKind::Cuda, index - 1};
  std::size_t next = cuda + 1;
  if (mps_available() && index == next++) return {TorchDeviceKind::Mps, 0};
  if (vulkan_available() && index == next) return {TorchDeviceKind::Vulkan, 0};
  throw DeviceError(DeviceErrorKind::NotAvailable, "Device",
                    fmt::format("libtorch:{} does not exist: this LibTorch has {} device(s)", index, device_count()));
}

std::size_t index_of(TorchDevice device, std::string_view constructor) {
  const auto unavailable = [&](std::string_view what) {
    return DeviceError(DeviceErrorKind::NotAvailable, constructor,
                       fmt::format("{} is not available in this LibTorch build (LibTorch {}); use Device::libtorch() "
                                   "for its CPU, or build against a LibTorch with {} support",
                                   what, torch_version(), what));
  };
  const std::size_t cuda = cuda_device_count();
  switch (device.kind) {
    case TorchDeviceKind::Cpu: return 0;
    case TorchDeviceKind::Cuda:
      if (cuda == 0) throw unavailable("CUDA");
      if (device.index >= cuda)
        throw DeviceError(
            DeviceErrorKind::NotAvailable, constructor,
            fmt::format("CUDA device {} does not exist: LibTorch sees {} CUDA device(s)", device.index, cuda));
      return 1 + device.index;
    case TorchDeviceKind::Mps:
      if (!mps_available()) throw unavailable("MPS");
      return 1 + cuda;
    case TorchDeviceKind::Vulkan:
      if (!vulkan_available()) throw unavailable("Vulkan");
      return 1 + cuda + (mps_available() ? 1 : 0);
  }
  return 0;
}

}  // namespace burn::libtorch

namespace burn {

// libtorch:0 is LibTorch's CPU; accelerators follow when the installed
// LibTorch has them (engine.hpp).
Device Device::libtorch() {
  static const Device d(DispatchDevice{DeviceType::LibTorch, 0});
  return d;
}
Device Device::libtorch_cuda(DeviceIndex index) {
  const libtorch::TorchDevice cuda{libtorch::TorchDeviceKind::Cuda, index.value()};
  return Device(DispatchDevice{DeviceType::LibTorch, libtorch::index_of(cuda, "Device::libtorch_cuda")});
}
Device Device::libtorch_mps() {
  const libtorch::TorchDevice mps{libtorch::TorchDeviceKind::Mps, 0};
  return Device(DispatchDevice{DeviceType::LibTorch, libtorch::index_of(mps, "Device::libtorch_mps")});
}
Device Device::libtorch_vulkan() {
  const libtorch::TorchDevice vulkan{libtorch::TorchDeviceKind::Vulkan, 0};
  return Device(DispatchDevice{DeviceType::LibTorch, libtorch::index_of(vulkan, "Device::libtorch_vulkan")});
}

namespace backend {
BackendFactory libtorch_factory() {
  return {
      DeviceType::LibTorch, [] { return default_rank::kLibTorch; }, [] { return libtorch::device_count(); },
      [](std::size_t index) -> std::unique_ptr<Backend> { return std::make_unique<libtorch::LibTorchBackend>(index); }};
}
}  // namespace backend

}  // namespace burn
