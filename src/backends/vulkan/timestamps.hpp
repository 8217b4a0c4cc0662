// The device clock behind Device::profile: a pool of timestamp queries. The
// stream writes a timestamp at the start of every batch and one where a
// profile window closes; when a batch's fence signals, its timestamps are read
// into Stamp records and their query slots reused, so an unresolved window
// never holds a slot.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <vulkan/vulkan.h>

#include "backends/vulkan/gpu.hpp"

namespace burn::vulkan {

/// One timestamp as the host sees it.
struct Stamp {
  enum class State { Pending, Done, Failed };
  State state = State::Pending;
  std::uint64_t ticks = 0;  ///< valid when Done
  std::uint64_t batch = 0;  ///< serial of the batch that writes it
};
using StampPtr = std::shared_ptr<Stamp>;

class Timestamps {
 public:
  static constexpr std::uint32_t kSlots = 1024;

  /// Whether the adapter's compute queue can write timestamps.
  static bool available(const AdapterInfo& adapter) noexcept;
  explicit Timestamps(std::shared_ptr<Gpu> gpu);
  ~Timestamps();
  Timestamps(const Timestamps&) = delete;
  Timestamps& operator=(const Timestamps&) = delete;

  /// A free query slot, or nullopt when every slot waits for its batch.
  std::optional<std::uint32_t> acquire();
  /// Records a reset and a write of `slot` into `cb`, at `stage`.
  void write(VkCommandBuffer cb, std::uint32_t slot, VkPipelineStageFlagBits stage) const;
  /// Reads `slot` (its batch has run) into `stamp`.
  void read(std::uint32_t slot, Stamp& stamp) const;
  void release(std::uint32_t slot) { free_.push_back(slot); }

  /// Converts ticks to time: the counter's valid bits and tick length.
  struct Scale {
    std::uint64_t mask = 0;
    double period = 1.0;  ///< nanoseconds per tick
    /// The device time from `begin` to `end` (both Done), modulo the counter's width.
    std::chrono::nanoseconds between(const Stamp& begin, const Stamp& end) const noexcept;
  };
  const Scale& scale() const noexcept { return scale_; }

 private:
  std::shared_ptr<Gpu> gpu_;
  VkQueryPool pool_ = VK_NULL_HANDLE;
  std::vector<std::uint32_t> free_;
  Scale scale_;
};

}  // namespace burn::vulkan
