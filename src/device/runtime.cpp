#include "device/runtime.hpp"

#include <fmt/format.h>

namespace burn::detail {

DeviceRuntime::DeviceRuntime(DispatchDevice id, std::unique_ptr<backend::Backend> backend)
    : id_(std::move(id)), backend_(std::move(backend)), settings_(backend_->default_settings()) {}

DeviceSettings DeviceRuntime::settings() const {
  std::lock_guard lock(mutex_);
  return settings_;
}

DeviceSettings DeviceRuntime::lock_settings() {
  std::lock_guard lock(mutex_);
  locked_ = true;
  return settings_;
}

void DeviceRuntime::configure(const DeviceConfig& config) {
  const std::string device = fmt::format("{}:{}", id_.type.name(), id_.index);
  auto check = [&](DType d) {
    if (!backend_->supports_dtype(d))
      throw DeviceError(DeviceErrorKind::UnsupportedDType, "Device::configure",
                        fmt::format("{} does not support {}; choose a dtype for which supports_dtype() is true", device,
                                    dtype_name(d)));
  };
  if (config.float_dtype()) check(to_dtype(*config.float_dtype()));
  if (config.int_dtype()) check(to_dtype(*config.int_dtype()));
  std::lock_guard lock(mutex_);
  if (locked_)
    throw DeviceError(DeviceErrorKind::AlreadyInitialized, "Device::configure",
                      fmt::format("the settings of {} are already initialized (a tensor was created or configure "
                                  "was called); configure the device before creating any tensor on it",
                                  device));
  if (config.float_dtype()) settings_.float_dtype = *config.float_dtype();
  if (config.int_dtype()) settings_.int_dtype = *config.int_dtype();
  if (config.bool_dtype()) settings_.bool_dtype = *config.bool_dtype();
  locked_ = true;
}

void DeviceRuntime::enter_persistent() {
  std::lock_guard lock(mutex_);
  if (persistent_depth_++ == 0)
    if (auto* memory = backend_->memory()) memory->set_persistent(true);
}

void DeviceRuntime::leave_persistent() {
  std::lock_guard lock(mutex_);
  if (--persistent_depth_ == 0)
    if (auto* memory = backend_->memory()) memory->set_persistent(false);
}

}  // namespace burn::detail
