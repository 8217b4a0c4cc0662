// Command batching for one device. Dispatches, copies and uploads are
// recorded into the open batch's command buffer; flush() submits it (with a
// fence), sync() waits for every submitted batch. Each command is preceded by
// a full memory barrier, so commands run in recording order as the tensor
// program expects. A batch keeps what its commands read from the host
// (parameter blocks, staging copies, descriptor sets) until its fence
// signals. Where the queue has a clock, each batch starts with a timestamp
// (the start of profile windows opened while it is owed). Failures of the queue (a failed submit, a lost device) are kept
// and raised as burn::ExecutionError by the next sync() or read.
//
// Not thread-safe: the backend serialises calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <vulkan/vulkan.h>

#include "backends/vulkan/memory_pool.hpp"
#include "backends/vulkan/pipelines.hpp"
#include "backends/vulkan/timestamps.hpp"

namespace burn::vulkan {

/// A buffer range a shader binds or a copy touches.
struct Binding {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;
};
inline Binding binding_of(const Block& b) { return Binding{b.buffer, b.offset, b.capacity}; }

/// Errors a shader reports by setting a bit in the device's error word
/// (binding 7): integer division by zero and the like, which the CPU backends
/// raise at once and a queue can only raise at the next sync.
enum DeviceErrorBit : std::uint32_t {
  kErrorDivByZero = 1u << 0,
  kErrorRemByZero = 1u << 1,
  kErrorPowNegative = 1u << 2,
  kErrorShiftNegative = 1u << 3,
};
/// The binding shaders find the error word at.
inline constexpr std::uint32_t kErrorBinding = 7;

class Stream {
 public:
  static constexpr std::uint32_t kMaxCommandsPerBatch = 128;
  static constexpr VkDeviceSize kMaxStagedBytesPerBatch = VkDeviceSize(64) << 20;

  /// `error_word`: a device block of at least 4 bytes for DeviceErrorBit flags.
  Stream(std::shared_ptr<Gpu> gpu, Pipelines& pipelines, DeviceBufferPtr error_word);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// Records a dispatch of `groups` workgroups (x, y, z) with `params` as
  /// binding 0 and `tensors` as bindings 1.. (the error word is binding 7).
  /// `raises`: the shader may set error bits, checked when the batch is done.
  void dispatch(VkPipeline pipeline, std::span<const Binding> tensors, std::span<const std::byte> params,
                std::uint32_t gx, std::uint32_t gy = 1, std::uint32_t gz = 1, bool raises = false);
  void copy(const Binding& src, const Binding& dst, VkDeviceSize bytes);
  /// Copies host bytes into `dst` (through a staging buffer, at its place in the batch).
  void upload(std::span<const std::byte> data, const Binding& dst);
  /// Reads `out.size()` bytes from `src`: submits, waits, copies out. Throws
  /// ExecutionError if the queue failed.
  void download(const Binding& src, std::span<std::byte> out);
  /// Keeps `object` alive until the open batch has run.
  void retain(std::shared_ptr<const void> object);

  void flush();
  /// Waits for every submitted batch; throws ExecutionError for a failure
  /// since the last sync.
  void sync();

  // ---- device clock (Device::profile) ----
  /// Whether the queue writes timestamps (else the stamps below are null).
  bool has_clock() const noexcept { return clock_ != nullptr; }
  /// Where a window opened now begins: the start of the oldest batch still
  /// owed (submitted and unfinished, or open), so owed work falls in.
  StampPtr window_start();
  /// A timestamp written once every command recorded so far has finished.
  StampPtr stamp_now();
  /// Runs the batch that writes `s` and waits for it (s is Done or Failed after).
  void wait_for(const Stamp& s);
  const Timestamps& clock() const noexcept { return *clock_; }

  /// Testing: the next submit fails as if the device were lost.
  void fail_next_submit() noexcept { fail_next_submit_ = true; }

  MemoryPool& upload_pool() noexcept { return *upload_pool_; }
  MemoryPool& readback_pool() noexcept { return *readback_pool_; }

 private:
  struct Batch {
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    std::vector<VkDescriptorPool> pools;
    std::size_t pool = 0;  // the pool sets come from now
    std::vector<DeviceBufferPtr> host_blocks;
    std::vector<std::shared_ptr<const void>> retained;
    DeviceBufferPtr params;  // the current parameter chunk
    VkDeviceSize params_used = 0;
    VkDeviceSize staged = 0;
    std::uint32_t commands = 0;
    DeviceBufferPtr error_copy;                              // where the error word lands; set when a shader may raise
    std::uint64_t serial = 0;                                // counts batches: a Stamp names its batch by this
    StampPtr start;                                          // written first (null without a clock)
    std::vector<std::pair<std::uint32_t, StampPtr>> stamps;  // query slot, record
  };

  Batch& open();
  void barrier(VkCommandBuffer cb);
  VkDescriptorSet descriptor_set(Batch& b);
  Binding push_params(Batch& b, std::span<const std::byte> params);
  void after_command(Batch& b);
  void recycle(std::unique_ptr<Batch> b);
  /// Moves finished batches to the free list; waits for all when `wait`.
  void reclaim(bool wait);
  /// Writes a timestamp into `b` at `stage`; nullptr without a clock.
  StampPtr write_stamp(Batch& b, VkPipelineStageFlagBits stage);
  /// Reads (when `ran`) or fails `b`'s stamps and frees their slots.
  void settle_stamps(Batch& b, bool ran);
  void fail(std::string message);
  void fail_device(std::uint32_t bits);

  std::shared_ptr<Gpu> gpu_;
  Pipelines& pipelines_;
  std::shared_ptr<MemoryPool> upload_pool_, readback_pool_;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  std::unique_ptr<Batch> open_;
  std::deque<std::unique_ptr<Batch>> in_flight_;
  std::vector<std::unique_ptr<Batch>> free_;
  DeviceBufferPtr error_word_;
  std::unique_ptr<Timestamps> clock_;
  std::uint64_t serial_ = 0;
  std::string error_, error_op_;
  bool fail_next_submit_ = false;
};

}  // namespace burn::vulkan
