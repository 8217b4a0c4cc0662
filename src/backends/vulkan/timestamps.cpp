#include "backends/vulkan/timestamps.hpp"

#include <cmath>

#include "backends/vulkan/vk_check.hpp"

namespace burn::vulkan {

bool Timestamps::available(const AdapterInfo& adapter) noexcept {
  return adapter.timestamp_bits > 0 && adapter.limits.timestampPeriod > 0.0f;
}

Timestamps::Timestamps(std::shared_ptr<Gpu> gpu) : gpu_(std::move(gpu)) {
  const AdapterInfo& a = gpu_->adapter();
  auto info = make<VkQueryPoolCreateInfo>(VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO);
  info.queryType = VK_QUERY_TYPE_TIMESTAMP;
  info.queryCount = kSlots;
  check(vkCreateQueryPool(gpu_->device(), &info, nullptr, &pool_), gpu_->label(), "vkCreateQueryPool");
  free_.reserve(kSlots);
  for (std::uint32_t i = kSlots; i-- > 0;) free_.push_back(i);
  scale_.mask = a.timestamp_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << a.timestamp_bits) - 1;
  scale_.period = a.limits.timestampPeriod;
}

Timestamps::~Timestamps() { vkDestroyQueryPool(gpu_->device(), pool_, nullptr); }

std::optional<std::uint32_t> Timestamps::acquire() {
  if (free_.empty()) return std::nullopt;
  const std::uint32_t slot = free_.back();
  free_.pop_back();
  return slot;
}

void Timestamps::write(VkCommandBuffer cb, std::uint32_t slot, VkPipelineStageFlagBits stage) const {
  // A query must be reset before each write; doing it in the command buffer
  // needs no extra device feature (hostQueryReset).
  vkCmdResetQueryPool(cb, pool_, slot, 1);
  vkCmdWriteTimestamp(cb, stage, pool_, slot);
}

void Timestamps::read(std::uint32_t slot, Stamp& stamp) const {
  std::uint64_t value = 0;
  const VkResult r = vkGetQueryPoolResults(gpu_->device(), pool_, slot, 1, sizeof value, &value, sizeof value,
                                           VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) {
    stamp.state = Stamp::State::Failed;
    return;
  }
  stamp.ticks = value & scale_.mask;
  stamp.state = Stamp::State::Done;
}

std::chrono::nanoseconds Timestamps::Scale::between(const Stamp& begin, const Stamp& end) const noexcept {
  // The counter wraps at its valid width: the difference modulo that width is
  // the elapsed count (windows are far shorter than a wrap).
  const std::uint64_t ticks = (end.ticks - begin.ticks) & mask;
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(static_cast<double>(ticks) * period)));
}

}  // namespace burn::vulkan
