// The backend registry: every backend compiled into this build, in the order
// Device() tries them.
//
// A backend registers itself from its own CMake file (cmake/backends/<name>.cmake
// calls burn_register_backend with its factory function), so the registry, the
// default device, Device::enumerate, burn-info and the tests' device list all
// follow from which backends are built; nothing else lists them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include <burn/backend/backend.hpp>
#include <burn/device.hpp>

namespace burn::backend {

/// Places in Device()'s default order (lower first). A backend picks its own;
/// the gaps leave room for backends in between.
namespace default_rank {
inline constexpr int kCuda = 100;
inline constexpr int kMetal = 200;
inline constexpr int kRocm = 300;
inline constexpr int kVulkan = 400;
inline constexpr int kWebGpu = 500;
inline constexpr int kWgpu = 600;
inline constexpr int kCpu = 700;
inline constexpr int kLibTorch = 800;
inline constexpr int kFlex = 900;
inline constexpr int kRemote = 1000;
inline constexpr int kNdArray = 1100;
/// After every backend that computes on the host CPU (a GPU API whose only
/// adapter is a CPU driver, such as lavapipe).
inline constexpr int kAfterHostBackends = 1200;
/// Never chosen by Device() (capture records instead of computing).
inline constexpr int kNever = -1;
}  // namespace default_rank

/// A backend family as the registry knows it.
struct BackendFactory {
  DeviceType type;
  /// Place in Device()'s default order (default_rank), decided at first use:
  /// a backend may place itself by what the machine has.
  int (*rank)();
  /// Number of devices this backend has on this machine (0: none available).
  std::size_t (*device_count)();
  /// Creates device `index` (< device_count()).
  std::unique_ptr<Backend> (*create)(std::size_t index);
  /// Set when this family serves the same devices through the same backend as
  /// another (wgpu is Vulkan on Linux): listed and usable, but the tests run
  /// their suites on the other one only.
  std::optional<DeviceType::Kind> alias_of = std::nullopt;
  /// For a family whose devices live on another machine (remote, where the
  /// DeviceType names the host): how many devices `type` has, and device
  /// `index` of it. device_count and create then cover this machine only.
  std::size_t (*hosted_device_count)(const DeviceType& type) = nullptr;
  std::unique_ptr<Backend> (*create_hosted)(const DeviceType& type, std::size_t index) = nullptr;
  /// Why device_count() is 0, for backends that can say (a missing driver);
  /// empty when there are devices. burn-info prints it.
  std::string (*why_no_device)() = nullptr;
  /// A family whose devices record operations instead of computing them
  /// (capture): never the default, listed by Device::enumerate only when a
  /// filter names it, and left out of the test suites' device list.
  bool records_only = false;
};

/// The compiled-in backends, in Device()'s default order (rank, then name).
std::span<const BackendFactory> registered_backends();

/// The registered backend of `kind`, or nullptr when it is not in this build.
const BackendFactory* find_backend(DeviceType::Kind kind);

}  // namespace burn::backend
