// Device time measurements: Device::profile returns a ProfileDuration that
// resolves once the device has run the measured work.
#pragma once

#include <chrono>
#include <future>
#include <optional>

namespace burn {

/// A resolved measurement of a profile window.
class ProfileTicks {
 public:
  explicit ProfileTicks(std::chrono::nanoseconds d) : d_(d) {}
  std::chrono::nanoseconds duration() const noexcept { return d_; }

 private:
  std::chrono::nanoseconds d_;
};

/// The measurement of a profile window; resolve it once the run is over.
class ProfileDuration {
 public:
  /// An empty measurement (a placeholder); resolve() on it throws burn::Error.
  ProfileDuration() = default;
  explicit ProfileDuration(std::shared_future<std::optional<ProfileTicks>> f) : f_(std::move(f)) {}
  std::future<std::optional<ProfileTicks>> resolve() const;

 private:
  std::shared_future<std::optional<ProfileTicks>> f_;
};

struct ProfileOptions {
  bool flush_queue = false;
  /// Flush the device's queue before closing the window, so lazy work falls in.
  ProfileOptions& flush(bool f) {
    flush_queue = f;
    return *this;
  }
};

}  // namespace burn
