// The ONNX operators import runs, each a function from a node's inputs and
// attributes to its outputs, written with burn's tensor operations so they
// run on every device and record for autodiff: a file per operator family
// (import_elementwise.cpp, import_reduce.cpp, import_shape.cpp,
// import_nn.cpp, import_attention.cpp, import_einsum.cpp, import_quant.cpp,
// import_rnn.cpp), and
// the table of them all with NodeArgs in import_ops.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <burn/detail/tensor_ref.hpp>
#include <burn/device.hpp>
#include <burn/tensor_data.hpp>

#include "onnx/proto.hpp"

namespace burn::onnx {

inline constexpr std::string_view kLoadOp = "onnx::Model::load";
inline constexpr std::string_view kRunOp = "onnx::Model::forward";

/// One node being run: its inputs (on one device), what is known of them on
/// the host, and its attributes.
class NodeArgs {
 public:
  NodeArgs(const ::onnx::NodeProto& node, const std::unordered_map<std::string, const ::onnx::AttributeProto*>& attrs,
           std::vector<std::optional<detail::TensorRef>> inputs, std::vector<const TensorData*> host,
           const Device& device, std::int64_t opset)
      : node_(node),
        attrs_(attrs),
        inputs_(std::move(inputs)),
        host_(std::move(host)),
        device_(device),
        opset_(opset) {}

  const ::onnx::NodeProto& node() const { return node_; }
  /// The device new tensors go to (the inputs').
  const Device& device() const { return device_; }
  /// The model's opset of the default domain: which version of its
  /// operator's definition the node follows.
  std::int64_t opset() const { return opset_; }
  std::size_t num_inputs() const { return inputs_.size(); }
  /// Whether optional input i is given (present and not the empty name).
  bool has(std::size_t i) const { return i < inputs_.size() && inputs_[i].has_value(); }
  /// Input i; an error naming the node when it is missing.
  const detail::TensorRef& in(std::size_t i) const;
  /// Input i's values as integers (shapes, axes, pads): from the host when
  /// the value is a constant or shape arithmetic, else read from the device.
  std::vector<std::int64_t> ints(std::size_t i) const;
  /// Input i's single value as a double (Clip bounds, Range ends).
  double scalar(std::size_t i) const;
  /// How many outputs the node names (trailing optional ones may be absent).
  std::size_t num_outputs() const { return static_cast<std::size_t>(node_.output_size()); }
  bool output_wanted(std::size_t i) const { return i < num_outputs() && !node_.output(static_cast<int>(i)).empty(); }

  bool has_attr(std::string_view name) const;
  std::int64_t attr_int(std::string_view name, std::int64_t fallback) const;
  float attr_float(std::string_view name, float fallback) const;
  std::string attr_string(std::string_view name, std::string_view fallback) const;
  std::optional<std::vector<std::int64_t>> attr_ints(std::string_view name) const;
  std::optional<TensorData> attr_tensor(std::string_view name) const;

  /// An error about this node: "[onnx::Model::forward] node 'name' (Op): message".
  [[noreturn]] void fail(std::string_view message) const;

 private:
  const ::onnx::AttributeProto* attr(std::string_view name) const;
  /// The attribute, checked to be of `type`; nullptr when absent.
  const ::onnx::AttributeProto* typed_attr(std::string_view name, ::onnx::AttributeProto_AttributeType type) const;

  const ::onnx::NodeProto& node_;
  const std::unordered_map<std::string, const ::onnx::AttributeProto*>& attrs_;
  std::vector<std::optional<detail::TensorRef>> inputs_;
  std::vector<const TensorData*> host_;
  const Device& device_;
  std::int64_t opset_;
};

using ImportFn = std::vector<detail::TensorRef> (*)(const NodeArgs& args);
/// Operator type -> its import.
using ImportTable = std::map<std::string, ImportFn, std::less<>>;

/// Each family file adds its operators to the table.
void add_elementwise_ops(ImportTable& table);  // arithmetic, logic, math, casts, activations
void add_reduce_ops(ImportTable& table);       // Reduce*, ArgMax/ArgMin, CumSum, TopK
void add_shape_ops(ImportTable& table);        // shape and layout, indexing, creation
void add_nn_ops(ImportTable& table);           // MatMul, Gemm, Pad, convolutions, pools, norms, Resize
void add_attention_ops(ImportTable& table);    // Attention, RotaryEmbedding

/// Einsum (import_einsum.cpp).
std::vector<detail::TensorRef> import_einsum(const NodeArgs& args);

/// The quantization operators (import_quant.cpp): QuantizeLinear and
/// DequantizeLinear (per tensor, per axis and per block), DynamicQuantizeLinear,
/// MatMulInteger and ConvInteger, QLinearMatMul and QLinearConv.
std::vector<detail::TensorRef> import_quantize_linear(const NodeArgs& args);
std::vector<detail::TensorRef> import_dequantize_linear(const NodeArgs& args);
std::vector<detail::TensorRef> import_dynamic_quantize_linear(const NodeArgs& args);
std::vector<detail::TensorRef> import_matmul_integer(const NodeArgs& args);
std::vector<detail::TensorRef> import_conv_integer(const NodeArgs& args);
std::vector<detail::TensorRef> import_qlinear_matmul(const NodeArgs& args);
std::vector<detail::TensorRef> import_qlinear_conv(const NodeArgs& args);
/// ONNX Runtime's com.microsoft QLinearAdd and QLinearGlobalAveragePool.
std::vector<detail::TensorRef> import_qlinear_add(const NodeArgs& args);
std::vector<detail::TensorRef> import_qlinear_global_average_pool(const NodeArgs& args);
/// ONNX Runtime's com.microsoft MatMulNBits: a product with 2-, 4- or 8-bit
/// block-quantized weights (what its 4-bit weight quantizer writes).
std::vector<detail::TensorRef> import_matmul_nbits(const NodeArgs& args);

/// MatMul's product of `x` and `y` (1-D operands as numpy), for the node `args`.
detail::TensorRef import_matmul(const NodeArgs& args, const detail::TensorRef& x, const detail::TensorRef& y);
/// Conv's convolution of `x` by `w` (no bias) with the node's attributes.
detail::TensorRef import_conv_of(const NodeArgs& args, const detail::TensorRef& x, const detail::TensorRef& w);

/// The recurrent operators (import_rnn.cpp).
std::vector<detail::TensorRef> import_lstm(const NodeArgs& args);
std::vector<detail::TensorRef> import_gru(const NodeArgs& args);

/// The function for an operator ("Type" in the default domain,
/// "domain::Type" in another), or nullptr.
ImportFn find_import(std::string_view op_type);
/// Every operator import runs, sorted (for error messages and docs/onnx.md).
std::vector<std::string> supported_operators();

}  // namespace burn::onnx
