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
/// (strings, complex, 4-bit and 8-bit floats).
std::optional<DType> burn_dtype(std::int32_t onnx_type);
/// "FLOAT", "INT64", ... for messages.
std::string onnx_type_name(std::int32_t onnx_type);

/// The tensor kind of a dtype (float, int or bool): what detail::from_data takes.
TensorKind kind_for(DType dtype);

/// `data` as a TensorProto (raw little-endian bytes) named `name`; whatever
/// `proto` held before is replaced.
void fill_tensor(::onnx::TensorProto& proto, const TensorData& data, const std::string& name);
/// A TensorProto's contents (raw_data or the typed fields); throws
/// burn::Error(op, ...) naming the tensor for external data, a missing or
/// short payload, or an element type burn cannot hold.
TensorData read_tensor(const ::onnx::TensorProto& proto, std::string_view op);

void set_attribute(::onnx::NodeProto& node, const std::string& name, std::int64_t value);
void set_attribute(::onnx::NodeProto& node, const std::string& name, float value);
void set_attribute(::onnx::NodeProto& node, const std::string& name, const std::string& value);
void set_attribute(::onnx::NodeProto& node, const std::string& name, std::span<const std::int64_t> values);
void set_attribute(::onnx::NodeProto& node, const std::string& name, const TensorData& value);

}  // namespace burn::onnx
