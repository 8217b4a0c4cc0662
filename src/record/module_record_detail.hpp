// Helpers shared by save_module and load_module: the metadata vocabulary and
// host-side layout changes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <burn/record/module_record.hpp>
#include <burn/tensor_data.hpp>

namespace burn::record::detail {

// Metadata keys and values (see module_record.hpp for the file layout).
inline constexpr std::string_view kFormatKey = "format";
inline constexpr std::string_view kBurnFormat = "burn-cpp";
inline constexpr std::string_view kTorchFormat = "pt";
inline constexpr std::string_view kReservedPrefix = "burn.";
inline constexpr std::string_view kLayoutKey = "burn.layout";
inline constexpr std::string_view kVersionKey = "burn.record_version";
inline constexpr std::string_view kRecordVersion = "1";
inline constexpr std::string_view kIdPrefix = "burn.id.";
/// The operations errors name.
inline constexpr std::string_view kLoadOp = "load_module";
inline constexpr std::string_view kSaveOp = "save_module";

/// "burn" or "pytorch": the value of "burn.layout" an adapter writes.
std::string_view layout_name(Adapter adapter) noexcept;

/// Whether the adapter stores this tensor transposed relative to the module
/// (PyTorch adapter and a parameter flagged is_pytorch_transposed()).
bool stored_transposed(const module::ParamBase& tensor, Adapter adapter) noexcept;

/// The [c, r] row-major transpose of 2-D data [r, c] (any dtype).
TensorData transpose_2d(const TensorData& data);

/// The shape of `shape` with its two dims swapped (for 2-D shapes).
Shape transposed_shape(const Shape& shape);

}  // namespace burn::record::detail
