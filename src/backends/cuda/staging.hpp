// Host <-> device copies of large tensors through pinned (page-locked)
// staging buffers. The GPU's copy engines read and write pinned memory
// directly at the link's full rate; from pageable memory the driver stages
// through small internal buffers at a fraction of it. Two buffers of one
// chunk each alternate, so the host copies one chunk while the device copies
// the other; a transfer larger than a chunk goes chunk by chunk.
//
// The device side is an interface (StagingDevice): the CUDA backend gives
// the driver's pinned memory, asynchronous copies and events; the tests give
// a fake whose copies run only when waited on, which checks that no buffer
// is reused while a copy still reads or writes it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace burn::cuda {

/// What staging needs from a device. Copies and marks are queued in order
/// on one stream; `wait(slot)` returns once the last mark of `slot` has
/// passed (every copy queued before it has finished).
class StagingDevice {
 public:
  virtual ~StagingDevice() = default;
  /// Page-locked host memory, or nullptr when the device cannot give it
  /// (the copies then go direct, from pageable memory).
  virtual std::byte* allocate_pinned(std::size_t bytes) = 0;
  virtual void free_pinned(std::byte* pinned) noexcept = 0;
  virtual void copy_to_device(std::uint64_t dst, const std::byte* src, std::size_t bytes) = 0;
  virtual void copy_to_host(std::byte* dst, std::uint64_t src, std::size_t bytes) = 0;
  virtual void mark(std::size_t slot) = 0;
  virtual void wait(std::size_t slot) = 0;
};

class StagedCopies {
 public:
  /// Bytes per chunk (each of the two buffers holds one).
  static constexpr std::size_t kChunkBytes = std::size_t{8} << 20;
  /// Transfers below this go direct: staging adds a host copy that a small
  /// transfer does not win back.
  static constexpr std::size_t kMinStagedBytes = std::size_t{1} << 20;

  explicit StagedCopies(StagingDevice& device, std::size_t chunk_bytes = kChunkBytes)
      : device_(device), chunk_(chunk_bytes) {}
  ~StagedCopies();
  StagedCopies(const StagedCopies&) = delete;
  StagedCopies& operator=(const StagedCopies&) = delete;

  /// Whether the buffers are there (allocated on first use; false when the
  /// device has no pinned memory to give).
  bool available();

  /// Queues the copy of `src` to device address `dst`. Returns once `src`
  /// has been copied into the staging buffers (the caller may free it);
  /// the device copies may still be running.
  void to_device(std::uint64_t dst, std::span<const std::byte> src);

  /// Copies `dst.size()` bytes from device address `src` into `dst`, after
  /// everything queued before; returns once `dst` holds them.
  void to_host(std::span<std::byte> dst, std::uint64_t src);

 private:
  StagingDevice& device_;
  std::size_t chunk_;
  std::array<std::byte*, 2> buffers_{};
  bool tried_ = false;
};

}  // namespace burn::cuda
