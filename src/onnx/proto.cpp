#include "onnx/proto.hpp"

#include <bit>
#include <cstring>

#include <burn/error.hpp>
#include <fmt/format.h>

namespace burn::onnx {

using ::onnx::TensorProto;
using ::onnx::TensorProto_DataType;

static_assert(std::endian::native == std::endian::little, "ONNX raw_data is little-endian, as this code assumes");

TensorProto_DataType onnx_type(DType dtype) {
  switch (dtype) {
    case DType::F64: return TensorProto::DOUBLE;
    case DType::F32: return TensorProto::FLOAT;
    case DType::F16: return TensorProto::FLOAT16;
    case DType::BF16: return TensorProto::BFLOAT16;
    case DType::I64: return TensorProto::INT64;
    case DType::I32: return TensorProto::INT32;
    case DType::I16: return TensorProto::INT16;
    case DType::I8: return TensorProto::INT8;
    case DType::U64: return TensorProto::UINT64;
    case DType::U32: return TensorProto::UINT32;
    case DType::U16: return TensorProto::UINT16;
    case DType::U8: return TensorProto::UINT8;
    case DType::Bool: return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

std::optional<DType> burn_dtype(std::int32_t type) {
  switch (type) {
    case TensorProto::DOUBLE: return DType::F64;
    case TensorProto::FLOAT: return DType::F32;
    case TensorProto::FLOAT16: return DType::F16;
    case TensorProto::BFLOAT16: return DType::BF16;
    case TensorProto::INT64: return DType::I64;
    case TensorProto::INT32: return DType::I32;
    case TensorProto::INT16: return DType::I16;
    case TensorProto::INT8: return DType::I8;
    case TensorProto::UINT64: return DType::U64;
    case TensorProto::UINT32: return DType::U32;
    case TensorProto::UINT16: return DType::U16;
    case TensorProto::UINT8: return DType::U8;
    case TensorProto::BOOL: return DType::Bool;
    default: return std::nullopt;
  }
}

bool is_four_bit(std::int32_t type) { return type == kOnnxUint4 || type == kOnnxInt4; }

std::optional<DType> storage_dtype(std::int32_t type) {
  if (type == kOnnxInt4) return DType::I8;
  if (type == kOnnxUint4) return DType::U8;
  return burn_dtype(type);
}

std::string onnx_type_name(std::int32_t type) {
  // Element types newer than the schema burn builds with.
  switch (type) {
    case kOnnxUint4: return "UINT4";
    case kOnnxInt4: return "INT4";
    case 23: return "FLOAT4E2M1";
    default: break;
  }
  if (::onnx::TensorProto_DataType_IsValid(type))
    return ::onnx::TensorProto_DataType_Name(static_cast<TensorProto_DataType>(type));
  return fmt::format("element type {}", type);
}

TensorKind kind_for(DType dtype) {
  if (is_float(dtype)) return TensorKind::Float;
  if (is_bool(dtype)) return TensorKind::Bool;
  return TensorKind::Int;
}

void fill_tensor(TensorProto& proto, const TensorData& data, const std::string& name) {
  proto.Clear();  // a reused proto keeps none of its old dims or typed data
  proto.set_name(name);
  proto.set_data_type(onnx_type(data.dtype()));
  for (std::size_t d : data.shape().dims()) proto.add_dims(static_cast<std::int64_t>(d));
  const auto bytes = data.bytes();
  proto.set_raw_data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

namespace {

/// Copies `n` values of a typed repeated field into bytes of `dtype`,
/// narrowing as ONNX stores them (int32_data holds every type up to 32 bits,
/// f16/bf16 as their bit patterns).
template <class Field>
std::vector<std::byte> from_field(const Field& field, std::size_t n, DType dtype) {
  const std::size_t width = dtype_size(dtype);
  std::vector<std::byte> out(n * width);
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = field.Get(static_cast<int>(i));
    std::byte* dst = out.data() + i * width;
    switch (dtype) {
      case DType::F64: {
        const double x = static_cast<double>(v);
        std::memcpy(dst, &x, 8);
        break;
      }
      case DType::F32: {
        const float x = static_cast<float>(v);
        std::memcpy(dst, &x, 4);
        break;
      }
      case DType::Bool: {
        const std::uint8_t x = v != 0 ? 1 : 0;
        std::memcpy(dst, &x, 1);
        break;
      }
      default: {
        // Integers and half types' bit patterns: the low `width` bytes (little-endian).
        const auto x = static_cast<std::uint64_t>(v);
        std::memcpy(dst, &x, width);
      }
    }
  }
  return out;
}

/// `n` 4-bit values packed two a byte (the first in the low bits), read
/// from raw_data or int32_data (where each int32 holds one packed byte), one
/// value per byte; INT4 values sign-extended.
std::vector<std::byte> unpack_four_bit(const TensorProto& proto, std::size_t n, std::string_view op,
                                       const std::string& description) {
  // The payload's size is checked before anything is allocated: the dims
  // alone may claim far more than the file holds.
  const std::size_t packed = (n + 1) / 2;
  if (proto.has_raw_data() && proto.raw_data().size() != packed)
    throw Error(op, fmt::format("tensor '{}' ({}) has {} bytes of data, expected {} (two 4-bit values a byte)",
                                proto.name(), description, proto.raw_data().size(), packed));
  if (!proto.has_raw_data() && static_cast<std::size_t>(proto.int32_data_size()) != packed)
    throw Error(op, fmt::format("tensor '{}' ({}) has {} int32_data entries, expected {} (two 4-bit values each)",
                                proto.name(), description, proto.int32_data_size(), packed));
  std::vector<std::uint8_t> bytes(packed);
  if (proto.has_raw_data()) {
    std::memcpy(bytes.data(), proto.raw_data().data(), packed);
  } else {
    for (std::size_t i = 0; i < packed; ++i)
      bytes[i] = static_cast<std::uint8_t>(proto.int32_data(static_cast<int>(i)));
  }
  const bool is_signed = proto.data_type() == kOnnxInt4;
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned nibble = (bytes[i / 2] >> (4 * (i % 2))) & 0xFU;
    const int value = is_signed && nibble >= 8 ? static_cast<int>(nibble) - 16 : static_cast<int>(nibble);
    out[i] = static_cast<std::byte>(static_cast<std::uint8_t>(value));
  }
  return out;
}

}  // namespace

TensorData read_tensor(const TensorProto& proto, std::string_view op) {
  const std::string& name = proto.name();
  const auto dtype = storage_dtype(proto.data_type());
  if (!dtype)
    throw Error(op, fmt::format("tensor '{}' has element type {}, which burn has no dtype for", name,
                                onnx_type_name(proto.data_type())));
  if (proto.data_location() == TensorProto::EXTERNAL)
    throw Error(op, fmt::format("tensor '{}' keeps its data in an external file, which was not read: load the "
                                "model with onnx::Model::load(path)",
                                name));
  std::vector<std::size_t> dims;
  std::size_t n = 1;
  for (std::int64_t d : proto.dims()) {
    if (d < 0) throw Error(op, fmt::format("tensor '{}' has a negative dimension {}", name, d));
    dims.push_back(static_cast<std::size_t>(d));
    if (d != 0 && n > (std::size_t{1} << 48) / static_cast<std::size_t>(d))
      throw Error(op, fmt::format("tensor '{}' is too large ({} dims)", name, proto.dims_size()));
    n *= static_cast<std::size_t>(d);
  }
  const std::size_t width = dtype_size(*dtype);
  Shape shape(dims);
  if (is_four_bit(proto.data_type())) {
    auto values =
        unpack_four_bit(proto, n, op, fmt::format("{} {}", onnx_type_name(proto.data_type()), shape.to_string()));
    return TensorData(std::move(values), std::move(shape), *dtype);
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != n * width)
      throw Error(op, fmt::format("tensor '{}' ({} {}) has {} bytes of data, expected {}", name, dtype_name(*dtype),
                                  shape.to_string(), raw.size(), n * width));
    std::vector<std::byte> bytes(raw.size());
    if (!raw.empty()) std::memcpy(bytes.data(), raw.data(), raw.size());
    return TensorData(std::move(bytes), std::move(shape), *dtype);
  }
  auto check_count = [&](int count) {
    if (static_cast<std::size_t>(count) != n)
      throw Error(op, fmt::format("tensor '{}' ({} {}) has {} values, expected {}", name, dtype_name(*dtype),
                                  shape.to_string(), count, n));
  };
  std::vector<std::byte> bytes;
  switch (*dtype) {
    case DType::F32:
      check_count(proto.float_data_size());
      bytes = from_field(proto.float_data(), n, *dtype);
      break;
    case DType::F64:
      check_count(proto.double_data_size());
      bytes = from_field(proto.double_data(), n, *dtype);
      break;
    case DType::I64:
      check_count(proto.int64_data_size());
      bytes = from_field(proto.int64_data(), n, *dtype);
      break;
    case DType::U64:
    case DType::U32:
      check_count(proto.uint64_data_size());
      bytes = from_field(proto.uint64_data(), n, *dtype);
      break;
    default:  // i32, i16, i8, u16, u8, bool, f16, bf16
      check_count(proto.int32_data_size());
      bytes = from_field(proto.int32_data(), n, *dtype);
  }
  return TensorData(std::move(bytes), std::move(shape), *dtype);
}

void set_attribute(::onnx::NodeProto& node, const std::string& name, std::int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(value);
}
void set_attribute(::onnx::NodeProto& node, const std::string& name, float value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(value);
}
void set_attribute(::onnx::NodeProto& node, const std::string& name, const std::string& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(value);
}
void set_attribute(::onnx::NodeProto& node, const std::string& name, std::span<const std::int64_t> values) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (auto v : values) a->add_ints(v);
}
void set_attribute(::onnx::NodeProto& node, const std::string& name, const TensorData& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::TENSOR);
  fill_tensor(*a->mutable_t(), value, "");
}

}  // namespace burn::onnx
