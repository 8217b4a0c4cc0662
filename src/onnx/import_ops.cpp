// The table of ONNX operators import runs (each family's file adds its
// own), and NodeArgs: a node's inputs, host-known values and attributes.
#include <algorithm>

#include <burn/detail/ops.hpp>
#include <burn/error.hpp>
#include <fmt/format.h>

#include "onnx/import_ops.hpp"

namespace burn::onnx {

// ---- NodeArgs -------------------------------------------------------------------------------

using detail::TensorRef;

void NodeArgs::fail(std::string_view message) const {
  throw Error(kRunOp, fmt::format("node '{}' ({}): {}", node_.name(), node_.op_type(), message));
}

const TensorRef& NodeArgs::in(std::size_t i) const {
  if (!has(i)) fail(fmt::format("input {} is required but missing", i));
  return *inputs_[i];
}

std::vector<std::int64_t> NodeArgs::ints(std::size_t i) const {
  const TensorData data = i < host_.size() && host_[i] ? *host_[i] : detail::to_data(in(i));
  if (is_float(data.dtype()) || is_bool(data.dtype()))
    fail(fmt::format("input {} must hold integers, it is {}", i, dtype_name(data.dtype())));
  return data.convert(DType::I64).to_vec<std::int64_t>();
}

double NodeArgs::scalar(std::size_t i) const {
  const TensorData data = i < host_.size() && host_[i] ? *host_[i] : detail::to_data(in(i));
  if (data.num_elements() != 1)
    fail(fmt::format("input {} must hold one value, it has shape {}", i, data.shape().to_string()));
  return data.value_as_double(0);
}

const ::onnx::AttributeProto* NodeArgs::attr(std::string_view name) const {
  auto it = attrs_.find(std::string(name));
  return it == attrs_.end() ? nullptr : it->second;
}
const ::onnx::AttributeProto* NodeArgs::typed_attr(std::string_view name,
                                                   ::onnx::AttributeProto_AttributeType type) const {
  const auto* a = attr(name);
  // A model's writer may leave the type unset (IR 1 had no type field); the value then is what the reader asks.
  if (a && a->type() != type && a->type() != ::onnx::AttributeProto::UNDEFINED)
    fail(fmt::format(
        "attribute '{}' must be of type {}, it is {}", name, ::onnx::AttributeProto_AttributeType_Name(type),
        ::onnx::AttributeProto_AttributeType_IsValid(a->type()) ? ::onnx::AttributeProto_AttributeType_Name(a->type())
                                                                : std::to_string(a->type())));
  return a;
}
bool NodeArgs::has_attr(std::string_view name) const { return attr(name) != nullptr; }
std::int64_t NodeArgs::attr_int(std::string_view name, std::int64_t fallback) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::INT);
  return a ? a->i() : fallback;
}
float NodeArgs::attr_float(std::string_view name, float fallback) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::FLOAT);
  return a ? a->f() : fallback;
}
std::string NodeArgs::attr_string(std::string_view name, std::string_view fallback) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::STRING);
  return a ? a->s() : std::string(fallback);
}
std::optional<std::vector<std::int64_t>> NodeArgs::attr_ints(std::string_view name) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::INTS);
  if (!a) return std::nullopt;
  return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}
std::optional<TensorData> NodeArgs::attr_tensor(std::string_view name) const {
  const auto* a = typed_attr(name, ::onnx::AttributeProto::TENSOR);
  if (!a) return std::nullopt;
  return read_tensor(a->t(), kRunOp);
}

namespace {

/// Each family's operators (import_elementwise.cpp, import_reduce.cpp,
/// import_shape.cpp, import_nn.cpp, import_attention.cpp).
const ImportTable& table() {
  static const ImportTable t = [] {
    ImportTable all;
    add_elementwise_ops(all);
    add_reduce_ops(all);
    add_shape_ops(all);
    add_nn_ops(all);
    add_attention_ops(all);
    return all;
  }();
  return t;
}

}  // namespace

ImportFn find_import(std::string_view op_type) {
  const auto& t = table();
  auto it = t.find(op_type);
  return it == t.end() ? nullptr : it->second;
}

std::vector<std::string> supported_operators() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : table()) out.push_back(name);
  // Handled by the loader itself (their values are known on the host).
  out.emplace_back("Constant");
  out.emplace_back("Shape");
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace burn::onnx
