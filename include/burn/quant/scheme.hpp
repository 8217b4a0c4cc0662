// Quantization schemes: how a float tensor maps to small integers.
//
// Every scheme is symmetric (no zero point): a group of values sharing one
// f32 scale s is stored as q = clamp(round(x / s), -qmax, qmax) with
// s = max|x| / qmax over the group, and read back as s * q. The largest
// value of a group maps to ±qmax exactly, so nothing clips and each element's
// error is at most s / 2 = max|x| / (2 qmax) of its group.
//
//   QuantScheme::int8_per_tensor()       one scale for the whole tensor
//   QuantScheme::int8_per_channel(axis)  one scale per index of `axis`
//   QuantScheme::int8_block(32)          one scale per 32 consecutive elements
//   QuantScheme::int4_block(32)          the same with values in [-7, 7]
//
// Blocks run over the row-major flattened tensor, as Burn's block schemes do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace burn::quant {

/// The integer width of the stored values.
enum class QuantBits : std::uint8_t { Int8, Int4 };
/// Which elements share a scale.
enum class QuantLevel : std::uint8_t { Tensor, Channel, Block };

struct QuantScheme {
  QuantBits bits = QuantBits::Int8;
  QuantLevel level = QuantLevel::Tensor;
  /// Channel level: the dimension whose every index gets its own scale.
  std::size_t axis = 0;
  /// Block level: how many consecutive (row-major) elements share a scale.
  std::size_t block_size = 0;

  static QuantScheme int8_per_tensor() { return {}; }
  static QuantScheme int8_per_channel(std::size_t axis) { return {QuantBits::Int8, QuantLevel::Channel, axis, 0}; }
  static QuantScheme int8_block(std::size_t block_size) { return {QuantBits::Int8, QuantLevel::Block, 0, block_size}; }
  static QuantScheme int4_block(std::size_t block_size) { return {QuantBits::Int4, QuantLevel::Block, 0, block_size}; }

  /// The largest stored magnitude: 127 (int8) or 7 (int4).
  int qmax() const noexcept { return bits == QuantBits::Int8 ? 127 : 7; }
  /// "int8-tensor", "int8-channel1", "int4-block32": the spelling records
  /// store and parse() reads.
  std::string to_string() const;
  /// The inverse of to_string(); throws burn::Error("[QuantScheme::parse] ...")
  /// for anything else.
  static QuantScheme parse(std::string_view text);

  bool operator==(const QuantScheme&) const = default;
};

}  // namespace burn::quant
