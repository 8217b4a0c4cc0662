// The value types a backend hands back through the contract and Device hands
// on to users unchanged: default dtypes, allocator readings and the physical
// identity of the card or processor a device computes on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <burn/dtype.hpp>

namespace burn {

/// The backend's default dtypes for tensors created without an explicit one.
struct DeviceSettings {
  FloatDType float_dtype = FloatDType::F32;
  IntDType int_dtype = IntDType::I64;
  BoolDType bool_dtype = BoolDType::Bool;
  friend bool operator==(const DeviceSettings&, const DeviceSettings&) = default;
};

/// How much rounding a device may add to float32 convolutions and matrix
/// products for speed, as PyTorch's torch.set_float32_matmul_precision
/// (see Device::set_float32_precision).
enum class Float32Precision : std::uint8_t {
  /// Products in f32 with direct algorithms (the default).
  Highest,
  /// Also algorithms with a looser error bound: Winograd 3x3 convolutions
  /// on flex and cpu, about twice as fast. Their transforms add rounding
  /// that grows with the tile size, and results differ from Highest's in
  /// the last bits; measured against a double reference on this project's
  /// machine their error was comparable to the direct kernel's (0.3-1.6e-6
  /// of the largest output, against 0.8-2.1e-6).
  High,
};

/// One reading of a device allocator (see Device::memory_pool_usage).
struct MemoryPoolUsage {
  std::uint64_t number_allocs = 0;   ///< live allocations
  std::uint64_t bytes_in_use = 0;    ///< bytes they use, excluding padding
  std::uint64_t bytes_padding = 0;   ///< bytes of padding inside them
  std::uint64_t bytes_reserved = 0;  ///< in use + cached for reuse
};

/// One pool's state (see Device::memory_pool_report).
struct SlicedPoolReport {
  std::uint64_t page_size = 0;      ///< 0 for a direct pool
  std::uint64_t pages = 0;          ///< pages (direct pool: live allocations) held now
  std::uint64_t pages_peak = 0;     ///< most ever held at once
  std::uint64_t largest_alloc = 0;  ///< largest single request served, in bytes
};

/// A PCI address "dddd:bb:dd.f".
struct PciAddress {
  std::uint32_t domain = 0;
  std::uint8_t bus = 0, device = 0, function = 0;
  std::string to_string() const;
  friend bool operator==(const PciAddress&, const PciAddress&) = default;
};

/// Which physical card or processor a device computes on.
struct PhysicalIdentity {
  std::optional<PciAddress> pci_address;
  std::optional<std::uint64_t> luid;
  /// Set when neither PCI address nor LUID is known ("host-cpu" for the CPU).
  std::string label;
  friend bool operator==(const PhysicalIdentity&, const PhysicalIdentity&) = default;
};

}  // namespace burn
