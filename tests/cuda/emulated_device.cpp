#include "emulated_device.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <mutex>
#include <variant>

#include <fmt/format.h>

#include "backends/cuda/backend.hpp"
#include "backends/cuda/fused_elementwise.hpp"
#include "backends/cuda/launch.hpp"
#include "device/runtime.hpp"
#include "fusion/fusion_backend.hpp"
#include "host_kernels.hpp"

namespace burn::cuda::testing {
namespace {

/// Device indices no machine has, so the emulated devices never shadow a GPU.
constexpr std::size_t kFusedIndex = 1000;
constexpr std::size_t kEagerIndex = 1001;
constexpr std::size_t kRealEagerIndex = 1002;

struct HostBuffer {
  explicit HostBuffer(std::size_t bytes) : bytes(bytes + 1) {}  // one spare byte: an empty tensor has an address
  std::vector<std::byte> bytes;
  std::uint64_t address() { return reinterpret_cast<std::uint64_t>(bytes.data()); }
};

struct EmulatedTensor final : backend::Primitive {
  explicit EmulatedTensor(std::shared_ptr<HostBuffer> b) : buffer(std::move(b)) {}
  std::shared_ptr<HostBuffer> buffer;
};

class EmulatedCudaBackend final : public backend::Backend, public backend::Stream, public KernelQueue {
 public:
  std::string name() const override { return "cuda"; }
  std::string description() const override { return "the CUDA backend emulated on the CPU (tests)"; }
  PhysicalIdentity identity() const override {
    PhysicalIdentity id;
    id.label = fmt::format("cuda-emulated-{}", static_cast<const void*>(this));
    return id;
  }
  std::string physical_name() const override { return "CUDA emulated on the CPU"; }
  bool supports_dtype(DType) const override { return true; }
  bool supports_op(const ir::Op& op) const override { return can_plan(op); }

  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override {
    std::lock_guard lock(mutex_);
    // As on the device: a reshape of a row-major block is the same block.
    if (std::holds_alternative<ir::Reshape>(op))
      return {std::make_shared<EmulatedTensor>(static_cast<const EmulatedTensor&>(*inputs[0].primitive).buffer)};
    std::vector<Operand> in, out;
    for (const auto& input : inputs) in.push_back({input.spec, touch(*input.primitive)});
    std::vector<backend::PrimitivePtr> results;
    for (const auto& spec : outputs) {
      auto t = new_tensor(spec);
      out.push_back({spec, touch(*t)});
      results.push_back(std::move(t));
    }
    RandomStream random;
    if (std::holds_alternative<ir::Random>(op)) random = {random_.seed, random_.draw++};
    for (Launch& launch : plan(op, in, out, error_word(), random)) pending_.push_back(std::move(launch));
    return results;
  }

  backend::PrimitivePtr from_data(TensorData data) override {
    std::lock_guard lock(mutex_);
    auto t = new_tensor({data.shape(), data.dtype()});
    std::memcpy(t->buffer->bytes.data(), data.bytes().data(), data.bytes().size());
    return t;
  }

  TensorData to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) override {
    std::lock_guard lock(mutex_);
    run_pending();
    const auto& bytes = static_cast<const EmulatedTensor&>(*primitive).buffer->bytes;
    return TensorData(std::vector<std::byte>(bytes.begin(), bytes.end() - 1), spec.shape, spec.dtype);
  }

  void seed(std::uint64_t seed) override {
    std::lock_guard lock(mutex_);
    random_ = {seed, 0};
  }

  backend::Stream* stream() override { return this; }
  void sync() override {
    std::lock_guard lock(mutex_);
    run_pending();
  }
  void flush() override {}

  /// The emulated device clock ticks kKernelTime per kernel run, so a
  /// window measures how many kernels its work took. As on the device, work
  /// owed when the window opens falls in it.
  static constexpr std::chrono::nanoseconds kKernelTime{1000};
  std::unique_ptr<backend::DeviceClockWindow> open_profile_window() override {
    std::lock_guard lock(mutex_);
    return std::make_unique<Window>(*this, kernels_run_);
  }

  // KernelQueue
  backend::PrimitivePtr allocate(const ir::TensorSpec& spec, std::string_view) override {
    std::lock_guard lock(mutex_);
    auto t = new_tensor(spec);
    touch(*t);
    return t;
  }
  std::uint64_t address_of(const backend::Primitive& tensor) const override {
    // A fused plan reads the addresses of its inputs here: keep them until the queue has run.
    std::lock_guard lock(mutex_);
    return touch(tensor);
  }
  std::uint64_t error_word() const override { return reinterpret_cast<std::uint64_t>(&error_bits_); }
  void enqueue(const Launch& launch, std::string_view) override {
    std::lock_guard lock(mutex_);
    pending_.push_back(launch);
  }

 private:
  static std::shared_ptr<EmulatedTensor> new_tensor(const ir::TensorSpec& spec) {
    return std::make_shared<EmulatedTensor>(
        std::make_shared<HostBuffer>(spec.shape.num_elements() * dtype_size(spec.dtype)));
  }
  /// The tensor's address; its buffer stays alive until the queued launches
  /// have run (on the device, the stream-ordered allocator guarantees this).
  std::uint64_t touch(const backend::Primitive& tensor) const {
    const auto& buffer = static_cast<const EmulatedTensor&>(tensor).buffer;
    in_use_.push_back(buffer);
    return buffer->address();
  }

  /// Compiles what is new, runs the queue, and raises what kernels reported
  /// (as the backend's sync does).
  void run_pending() {
    std::vector<std::string> sources;
    for (const Launch& launch : pending_) sources.push_back(launch.source);
    kernels_.add(sources);
    for (const Launch& launch : pending_)
      if (launch.items() > 0) {
        kernels_.run(launch);
        ++kernels_run_;
      }
    pending_.clear();
    in_use_.clear();
    if (error_bits_ == 0) return;
    const std::uint32_t bits = error_bits_;
    error_bits_ = 0;
    throw device_error(bits, "the emulated CUDA device");
  }

  class Window final : public backend::DeviceClockWindow {
   public:
    Window(EmulatedCudaBackend& device, std::uint64_t begin) : device_(device), begin_(begin) {}
    std::shared_future<std::optional<ProfileTicks>> close() override {
      std::uint64_t end = 0;
      {
        std::lock_guard lock(device_.mutex_);
        end = device_.kernels_run_ + device_.launches_pending();
      }
      return std::async(std::launch::deferred,
                        [&device = device_, begin = begin_, end]() -> std::optional<ProfileTicks> {
                          device.sync();
                          return ProfileTicks(kKernelTime * static_cast<std::int64_t>(end - begin));
                        })
          .share();
    }

   private:
    EmulatedCudaBackend& device_;
    std::uint64_t begin_;
  };

  std::uint64_t launches_pending() const {
    return static_cast<std::uint64_t>(
        std::count_if(pending_.begin(), pending_.end(), [](const Launch& l) { return l.items() > 0; }));
  }

  mutable std::mutex mutex_;
  std::vector<Launch> pending_;
  std::uint64_t kernels_run_ = 0;
  mutable std::vector<std::shared_ptr<HostBuffer>> in_use_;
  HostKernels kernels_;
  mutable std::uint32_t error_bits_ = 0;
  RandomStream random_{0x853c49e6748fea9bull, 0};
};

std::unique_ptr<backend::Backend> behind_fusion(std::unique_ptr<backend::Backend> inner, KernelQueue& queue) {
  return std::make_unique<fusion::FusionBackend>("cuda", std::move(inner), cuda_fusers(queue));
}

}  // namespace

Device emulated_cuda_device(bool fused) {
  const auto install = [](bool behind) {
    const DispatchDevice id{DeviceType::Cuda, behind ? kFusedIndex : kEagerIndex};
    auto emulated = std::make_unique<EmulatedCudaBackend>();
    KernelQueue& queue = *emulated;
    detail::install_runtime(id, behind ? behind_fusion(std::move(emulated), queue) : std::move(emulated));
    return Device(id);
  };
  static const Device fused_device = install(true), eager_device = install(false);
  return fused ? fused_device : eager_device;
}

Device eager_twin_of_cuda0() {
  static const Device twin = [] {
    (void)Device::cuda(0);  // DeviceError without a GPU
    const DispatchDevice id{DeviceType::Cuda, kRealEagerIndex};
    detail::install_runtime(id, std::make_unique<CudaBackend>(0));
    return Device(id);
  }();
  return twin;
}

}  // namespace burn::cuda::testing
