// What ONNX export and import share: the dtype mapping, tensors to and from
// TensorProto, and attribute helpers over Debian's generated ONNX protobuf
// classes (libonnx-dev).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <burn/dtype.hpp>
#include <burn/kind.hpp>
#include <burn/tensor_data.hpp>
#include <onnx/onnx_pb.h>

namespace burn::onnx {

/// TensorProto's element type for `dtype`.
::onnx::TensorProto_DataType onnx_type(DType dtype);
/// The dtype of an ONNX element type; nullopt for one burn has no dtype for
/// (strings, complex, 4-bit integers and 4- and 8-bit floats).
std::optional<DType> burn_dtype(std::int32_t onnx_type);

/// ONNX's 4-bit integer element types (IR 10, opset 21), which the ONNX
/// schema burn builds with (IR 8) does not name.
inline constexpr std::int32_t kOnnxUint4 = 21;
inline constexpr std::int32_t kOnnxInt4 = 22;
/// Whether `onnx_type` is INT4 or UINT4.
bool is_four_bit(std::int32_t onnx_type);
/// The dtype import holds an ONNX element type's values in: burn_dtype's,
/// and for the 4-bit integers one value per byte (INT4 as I8, sign-extended;
/// UINT4 as U8).
std::optional<DType> storage_dtype(std::int32_t onnx_type);
/// "FLOAT", "INT64", ... for messages.
std::string onnx_type_name(std::int32_t onnx_type);

/// The tensor kind of a dtype (float, int or bool): what detail::from_data takes.
TensorKind kind_for(DType dtype);

/// `data` as a TensorProto (raw little-endian bytes) named `name`; whatever
/// `proto` held before is replaced.
void fill_tensor(::onnx::TensorProto& proto, const TensorData& data, const std::string& name);
/// A TensorProto's contents (raw_data or the typed fields); throws
/// burn::Error(op, ...) naming the tensor for external data, a missing or
/// short payload, or an element type burn cannot hold. INT4 and UINT4
/// tensors (two values a byte, the first in the low four bits) come back
/// unpacked, in their storage_dtype.
TensorData read_tensor(const ::onnx::TensorProto& proto, std::string_view op);

void set_attribute(::onnx::NodeProto& node, const std::string& name, std::int64_t value);
void set_attribute(::onnx::NodeProto& node, const std::string& name, float value);
void set_attribute(::onnx::NodeProto& node, const std::string& name, const std::string& value);
void set_attribute(::onnx::NodeProto& node, const std::string& name, std::span<const std::int64_t> values);
void set_attribute(::onnx::NodeProto& node, const std::string& name, const TensorData& value);

}  // namespace burn::onnx
