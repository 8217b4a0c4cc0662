// The CUDA backend: one instance per GPU (cuda:i), holding the device's
// primary context, one stream all its work is queued on, the caching
// allocator and the kernels compiled for it so far. Device::cuda(i) is this
// backend behind the fusion layer (factory.cpp), which hands it fused
// elementwise groups through the KernelQueue interface.
//
// An op runs as the kernel launches plan() gives (launch.hpp): kernels
// generated from the op IR, compiled by NVRTC for this GPU and cached by
// their source. Every op of the IR has kernels; matmul goes to cuBLASLt and
// convolutions to cuDNN where they take them. Device() does not
// pick CUDA until a GPU has run the suites (docs/cuda.md).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <burn/backend/backend.hpp>

#include "backends/cuda/allocator.hpp"
#include "backends/cuda/cublaslt.hpp"
#include "backends/cuda/cudnn.hpp"
#include "backends/cuda/fused_elementwise.hpp"
#include "backends/cuda/launch.hpp"
#include "backends/cuda/staging.hpp"

namespace burn::cuda {

/// An event recorded on a device's stream (backend.cpp).
struct CudaEvent;

/// A tensor on a CUDA device: row-major elements in one block.
struct CudaTensor final : backend::Primitive {
  explicit CudaTensor(std::shared_ptr<CachingAllocator::Block> b) : block(std::move(b)) {}
  std::shared_ptr<CachingAllocator::Block> block;
  CUdeviceptr address() const noexcept { return static_cast<CUdeviceptr>(block->address()); }
};

class CudaBackend final : public backend::Backend,
                          public backend::Stream,
                          public backend::MemoryManager,
                          public KernelQueue {
 public:
  /// Device `index` of the driver's list (< driver().device_count).
  explicit CudaBackend(std::size_t index);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  std::string description() const override;
  PhysicalIdentity identity() const override;
  std::string physical_name() const override { return gpu_name_; }
  bool supports_dtype(DType dtype) const override;
  bool supports_op(const ir::Op& op) const override;
  std::vector<backend::PrimitivePtr> execute(const ir::Op& op, std::span<const backend::Input> inputs,
                                             std::span<const ir::TensorSpec> outputs) override;
  backend::PrimitivePtr from_data(TensorData data) override;
  TensorData to_data(const backend::PrimitivePtr& primitive, const ir::TensorSpec& spec) override;
  void seed(std::uint64_t seed) override;

  backend::Stream* stream() override { return this; }
  backend::MemoryManager* memory() override { return this; }
  void sync() override;
  void flush() override {}
  /// A window timed by CUDA events: it begins where the work owed since the
  /// last sync begins (or now, when none is owed) and ends where the stream
  /// is when it closes.
  std::unique_ptr<backend::DeviceClockWindow> open_profile_window() override;
  void cleanup() override { allocator_->cleanup(); }
  std::optional<std::vector<SlicedPoolReport>> pool_report() const override { return allocator_->report(); }
  std::optional<MemoryPoolUsage> pool_usage() const override { return allocator_->usage(); }
  void set_persistent(bool on) override { allocator_->set_persistent(on); }

  /// Compute capability as 10 * major + minor.
  int capability() const noexcept { return capability_; }

  // KernelQueue: fused plans allocate here and queue on this stream.
  backend::PrimitivePtr allocate(const ir::TensorSpec& spec, std::string_view op) override;
  std::uint64_t address_of(const backend::Primitive& tensor) const override;
  std::uint64_t error_word() const override { return error_word_->address(); }
  void enqueue(const Launch& launch, std::string_view op) override;

 private:
  void make_current() const;
  /// Waits for the stream, then raises what kernels reported in the error word.
  void sync_locked(std::string_view op);
  /// The compiled kernel of `source`, compiling it on first use.
  CUfunction function(const std::string& source, std::string_view op);
  /// Queues `launch` on the stream.
  void run(const Launch& launch, std::string_view op);
  /// Call before queueing work: the first work after a sync records the
  /// event profile windows opened before the next sync begin at.
  void mark_owed_work();
  std::shared_ptr<CudaTensor> new_tensor(const ir::TensorSpec& spec, std::string_view op);
  /// Queues a matmul through cuBLASLt; false when cuBLASLt does not take it
  /// (the generated kernel computes it then).
  bool matmul_by_library(std::span<const Operand> inputs, std::span<const Operand> outputs);
  /// Queues a convolution through cuDNN; false when cuDNN does not take it.
  bool convolution_by_library(const ir::Op& op, std::span<const Operand> inputs, std::span<const Operand> outputs);

  std::size_t index_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  int capability_ = 0;
  int multiprocessors_ = 1;
  std::string gpu_name_;
  std::size_t total_memory_ = 0;
  std::string pci_bus_id_;
  std::shared_ptr<CachingAllocator> allocator_;
  std::shared_ptr<CachingAllocator::Block> error_word_;
  /// Pinned host memory sync reads the error word into (null: pageable).
  std::uint32_t* error_host_ = nullptr;
  /// Recorded on the stream before the first work queued since the last
  /// sync; null while nothing is owed.
  std::shared_ptr<CudaEvent> owed_since_;
  std::mutex mutex_;
  std::unordered_map<std::string, CUfunction> functions_;
  std::vector<CUmodule> modules_;
  /// Random ops draw from Philox with this seed; each op is the next draw.
  RandomStream random_;
  /// Large from_data/to_data copies through pinned buffers (staging.hpp).
  std::unique_ptr<StagingDevice> staging_device_;
  std::unique_ptr<StagedCopies> staging_;
  /// Matmul through cuBLASLt, or null with the reason in lt_missing_.
  std::unique_ptr<LtMatmul> lt_;
  std::string lt_missing_;
  /// Convolutions through cuDNN, or null with the reason in dnn_missing_.
  std::unique_ptr<DnnConv> dnn_;
  std::string dnn_missing_;
};

}  // namespace burn::cuda
