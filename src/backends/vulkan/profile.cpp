// Device::profile on the device clock. A window begins at the start timestamp
// of the oldest batch still owed when it opens (so owed work falls in, as the
// API says) and ends at a bottom-of-pipe timestamp written when it closes.
// Neither end waits: the duration is a deferred future that, when resolved,
// submits the closing batch if needed and waits for it.
#include <fmt/format.h>

#include <burn/error.hpp>

#include "backends/vulkan/backend.hpp"

namespace burn::vulkan {
namespace {

class ClockWindow final : public backend::DeviceClockWindow {
 public:
  ClockWindow(std::shared_ptr<VulkanBackend::ClockLink> link, StampPtr begin, Timestamps::Scale scale,
              std::string label)
      : link_(std::move(link)), begin_(std::move(begin)), scale_(scale), label_(std::move(label)) {}

  std::shared_future<std::optional<ProfileTicks>> close() override {
    StampPtr end;
    {
      std::lock_guard lock(link_->mutex);
      if (!link_->backend)
        throw Error("Device::profile", fmt::format("{} was destroyed while the window was open", label_));
      end = link_->backend->stamp_now();
    }
    return std::async(std::launch::deferred, [link = link_, begin = begin_, end, scale = scale_,
                                              label = label_] { return resolve(*link, *begin, *end, scale, label); })
        .share();
  }

 private:
  static std::optional<ProfileTicks> resolve(VulkanBackend::ClockLink& link, const Stamp& begin, const Stamp& end,
                                             const Timestamps::Scale& scale, const std::string& label) {
    std::lock_guard lock(link.mutex);
    std::optional<std::chrono::nanoseconds> time;
    if (link.backend) {
      time = link.backend->measure(begin, end);
    } else if (begin.state == Stamp::State::Done && end.state == Stamp::State::Done) {
      time = scale.between(begin, end);  // the backend is gone; its stream settled the stamps
    }
    if (!time)
      throw ExecutionError("Device::profile",
                           fmt::format("{}: the queue failed (or the device went away) before the window's work ran, "
                                       "so it has no measurement; sync() reports the queue's error",
                                       label));
    return ProfileTicks(*time);
  }

  std::shared_ptr<VulkanBackend::ClockLink> link_;
  StampPtr begin_;
  Timestamps::Scale scale_;
  std::string label_;
};

}  // namespace

std::unique_ptr<backend::DeviceClockWindow> VulkanBackend::open_profile_window() {
  std::lock_guard lock(mutex_);
  if (!stream_->has_clock()) return nullptr;
  return std::make_unique<ClockWindow>(clock_link_, stream_->window_start(), stream_->clock().scale(), label());
}

StampPtr VulkanBackend::stamp_now() {
  std::lock_guard lock(mutex_);
  return stream_->stamp_now();
}

std::optional<std::chrono::nanoseconds> VulkanBackend::measure(const Stamp& begin, const Stamp& end) {
  std::lock_guard lock(mutex_);
  stream_->wait_for(end);
  // The end's batch runs after the begin's, so both are settled now.
  if (begin.state != Stamp::State::Done || end.state != Stamp::State::Done) return std::nullopt;
  return stream_->clock().scale().between(begin, end);
}

}  // namespace burn::vulkan
