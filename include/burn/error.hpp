// Errors: every message starts with the operation in brackets, e.g.
//   [matmul] shapes [2, 3] and [4, 5] do not match
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace burn {

/// Base of every error burn throws.
class Error : public std::runtime_error {
 public:
  Error(std::string_view op, std::string_view message);
  /// The operation that failed ("matmul", "Device::configure", ...).
  const std::string& op() const noexcept { return op_; }

 private:
  std::string op_;
};

/// Queued or asynchronous work failed on a device (raised by sync/flush).
class ExecutionError : public Error {
 public:
  using Error::Error;
};

/// The build lacks what was asked for (e.g. no execution backend compiled in).
class ConfigurationError : public Error {
 public:
  using Error::Error;
};

enum class DeviceErrorKind { UnsupportedDType, AlreadyInitialized, NotAvailable };

/// A device refused a request (configure, an unavailable device, ...).
class DeviceError : public Error {
 public:
  DeviceError(DeviceErrorKind kind, std::string_view op, std::string_view message) : Error(op, message), kind_(kind) {}
  DeviceErrorKind kind() const noexcept { return kind_; }

 private:
  DeviceErrorKind kind_;
};

}  // namespace burn
